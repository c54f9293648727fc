# hadrill preflight: what this host has, one fact a line ("key value").
# It reads only. Arguments: hadrill's directory on the host, then the
# packages to look for.
dir=$1
shift
echo "uid $(id -u)"
echo "arch $(uname -m)"
echo "kernel $(uname -r)"
if [ -r /etc/os-release ]; then
	. /etc/os-release
	echo "os ${ID:-unknown} ${VERSION_ID:-unknown}"
fi
echo "cpus $(nproc 2>/dev/null || echo 0)"
awk '/^MemTotal:/ { print "mem_kb " $2 }' /proc/meminfo
if command -v dpkg-query >/dev/null 2>&1; then
	# one query for every package (a process each took 10 ms or more)
	installed=" $(dpkg-query -W -f='${Package} ${Status}\n' "$@" 2>/dev/null | awk '/ install ok installed$/ { printf "%s ", $1 }')"
	for p in "$@"; do
		case "$installed" in
		*" $p "*) echo "package $p installed" ;;
		*) echo "package $p missing" ;;
		esac
	done
else
	echo "dpkg none"
fi
d=$dir
while [ ! -e "$d" ]; do d=$(dirname "$d"); done
if [ -d "$dir" ]; then echo "dir exists"; else echo "dir absent $d"; fi
df -Pk "$d" | awk 'NR == 2 { print "free_kb " $4 }'
if command -v ip >/dev/null 2>&1; then
	ip -o -4 addr show | awk '{ print "addr " $2 " " $4 }'
fi
if command -v ss >/dev/null 2>&1; then
	ss -Hltn | awk '{ print "listen " $4 }'
else
	echo "listen unknown"
fi
# the netfilter queue hadrill's WAN emulator reads packets from: loaded, built in, or a module to load
if [ -e /proc/net/netfilter/nfnetlink_queue ] || [ -e /sys/module/nfnetlink_queue ] || modinfo nfnetlink_queue >/dev/null 2>&1; then echo "nfqueue yes"; else echo "nfqueue no"; fi
# the queues bound now (the first column: the queue's number)
if [ -r /proc/net/netfilter/nfnetlink_queue ]; then awk '{ print "queue " $1 }' /proc/net/netfilter/nfnetlink_queue; fi
