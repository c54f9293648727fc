#!/usr/bin/env bash
# The plain hand recipe hadrill's deploy is compared with: three network
# namespaces on a bridge, mariadb-install-db per node, bootstrap node 1,
# start nodes 2 and 3 (rsync SST), poll until all are Synced.
# Usage: recipe_deploy.sh WORKDIR   (prints the seconds to all-Synced)
set -euo pipefail
W=${1:?workdir}
NET=198.18.250
PIDS=()
cleanup() {
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill -9 "$p" 2>/dev/null || true; done
  for i in 1 2 3; do ip netns pids hd-recipe-n$i 2>/dev/null | xargs -r kill -9 2>/dev/null || true; ip netns del hd-recipe-n$i 2>/dev/null || true; done
  ip netns del hd-recipe 2>/dev/null || true
  rm -rf "$W"
}
trap cleanup EXIT
mkdir -p "$W"; chmod 755 "$W"
start=$(date +%s.%N)
ip netns add hd-recipe
ip -n hd-recipe link add br0 type bridge; ip -n hd-recipe link set br0 up
for i in 1 2 3; do
  ip netns add hd-recipe-n$i
  ip -n hd-recipe link add v$i type veth peer name eth0 netns hd-recipe-n$i
  ip -n hd-recipe link set v$i master br0 up
  ip -n hd-recipe-n$i addr add $NET.1$i/24 dev eth0
  ip -n hd-recipe-n$i link set eth0 up; ip -n hd-recipe-n$i link set lo up
done
for i in 1 2 3; do
  d=$W/n$i; mkdir -p $d; chown mysql:mysql $d
  cat > $d/my.cnf <<CNF
[mariadbd]
user=mysql
datadir=$d/data
socket=$d/sock
pid-file=$d/pid
log-error=$d/error.log
bind-address=$NET.1$i
binlog_format=ROW
innodb_autoinc_lock_mode=2
wsrep_on=ON
wsrep_provider=/usr/lib/galera/libgalera_smm.so
wsrep_cluster_name=recipe
wsrep_cluster_address=gcomm://$NET.11,$NET.12,$NET.13
wsrep_node_address=$NET.1$i
wsrep_sst_method=rsync
CNF
  mariadb-install-db --defaults-file=$d/my.cnf --user=mysql >/dev/null 2>&1
done
state() { mariadb -S $W/n$1/sock -N -e "select variable_value from information_schema.global_status where variable_name='wsrep_local_state_comment'" 2>/dev/null || true; }
wait_synced() { for _ in $(seq 1 1200); do [ "$(state $1)" = Synced ] && return 0; sleep 0.1; done; echo "n$1 never synced" >&2; return 1; }
setsid ip netns exec hd-recipe-n1 mariadbd --defaults-file=$W/n1/my.cnf --wsrep-new-cluster </dev/null >/dev/null 2>&1 & PIDS+=($!); disown
wait_synced 1
for i in 2 3; do setsid ip netns exec hd-recipe-n$i mariadbd --defaults-file=$W/n$i/my.cnf </dev/null >/dev/null 2>&1 & PIDS+=($!); disown; done
wait_synced 2; wait_synced 3
end=$(date +%s.%N)
echo "$end - $start" | bc
