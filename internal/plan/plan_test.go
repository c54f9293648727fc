package plan

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/hadrill/hadrill/internal/golden"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/spec"
)

var rootFacts = Facts{Root: true, User: "root", MemBytes: 24 << 30, GaleraLib: "/usr/lib/galera/libgalera_smm.so"}

// sshFacts: every host of galera3 on a machine of its own, hadrill's
// directory there /srv/hd, 4 GiB each.
var sshFacts = Facts{User: "alice", MemBytes: 24 << 30, GaleraLib: "/usr/lib/galera/libgalera_smm.so", Remote: map[string]Remote{
	"db1": {Address: "10.0.0.11", Dir: "/srv/hd", MemBytes: 4 << 30}, "db2": {Address: "10.0.0.12", Dir: "/srv/hd", MemBytes: 4 << 30},
	"db3": {Address: "10.0.0.13", Dir: "/srv/hd", MemBytes: 4 << 30}, "lb": {Address: "10.0.0.101", Dir: "/srv/hd", MemBytes: 4 << 30},
	"client": {Address: "10.0.0.201", Dir: "/srv/hd", MemBytes: 4 << 30}}}

func TestGolden(t *testing.T) {
	cases := []struct {
		name, preset string
		facts        Facts
	}{
		{"galera3-netns", "galera3", rootFacts},
		{"galera3-rootless", "galera3", Facts{User: "alice", MemBytes: 8 << 30, GaleraLib: "/usr/lib/galera/libgalera_smm.so"}},
		{"semisync", "semisync", rootFacts},
		{"dr-cluster", "dr-cluster", rootFacts},
		{"wan2", "wan2", rootFacts},
		{"wan2-semisync", "wan2-semisync", rootFacts},
		{"wan2-arbitrator", "wan2-arbitrator", rootFacts},
		{"galera3-ssh", "galera3", sshFacts},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := spec.Preset(c.preset)
			if err != nil {
				t.Fatal(err)
			}
			p, err := Build(s, s.Name, "/home/u/.hadrill", c.facts)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.MarshalIndent(p, "", "  ")
			golden.Check(t, c.name, append(b, '\n'))
			golden.Check(t, c.name+"-db1.my.cnf", []byte(p.Nodes[0].Config))
		})
	}
}

func TestBalancedLoadBalancer(t *testing.T) {
	s, err := spec.Load([]byte("clusters: [{name: db}]\nload_balancers: [{name: lb, cluster: db, mode: balanced}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(s, "bal", "/home/u/.hadrill", rootFacts)
	if err != nil || p.LoadBalancers[0].Mode != spec.LBBalanced {
		t.Fatalf("%+v %v", p.LoadBalancers, err)
	}
}

func TestPlanIsDeterministic(t *testing.T) {
	s, _ := spec.Preset("galera3")
	a, _ := Build(s, "x1", "/h", rootFacts)
	b, _ := Build(s, "x1", "/h", rootFacts)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Fatal("two builds of the same input differ")
	}
}

func TestPlanBadInput(t *testing.T) {
	load := func(y string) *spec.Spec {
		s, err := spec.Load([]byte(y))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	cases := []struct {
		name, lab, home, yaml, want string
	}{
		{"bad lab name", "Bad-Name", "/h", "clusters: [{name: db}]", `--name: "Bad-Name" is not a valid lab name`},
		{"address clash", "lab", "/h", "clusters: [{name: db, nodes: 2, addresses: [198.18.0.5, 198.18.0.5]}]",
			"clusters[0].addresses[1]: address 198.18.0.5 is already used by clusters[0].addresses[0]"},
		{"socket too long", "lab", "/" + strings.Repeat("x", 100), "clusters: [{name: db}]", "--home: the socket path"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Build(load(c.yaml), c.lab, c.home, rootFacts)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}

func TestBufferPool(t *testing.T) {
	d1 := &Machine{Name: "d1", CPUs: 1, MemoryBytes: 3584 << 20}
	cases := []struct {
		memory  string
		machine int64
		nodes   int
		host    *Machine
		want    string
	}{
		{"", 24 << 30, 3, nil, "4096M"},
		{"", 2 << 30, 3, nil, "256M"},
		{"", 512 << 20, 3, nil, "128M"},
		{"2G", 24 << 30, 3, nil, "1024M"},
		{"", 96 << 30, 1, nil, "8192M"},
		{"", 24 << 30, 3, d1, "1792M"},                                       // half of the host's machine
		{"", 24 << 30, 3, &Machine{Name: "s", MemoryBytes: 1 << 30}, "512M"}, // a small machine
		{"1G", 24 << 30, 3, d1, "512M"},                                      // the spec's share wins
	}
	for _, c := range cases {
		if got := bufferPool(spec.Cluster{Memory: c.memory}, c.machine, c.nodes, c.host); got != c.want {
			t.Errorf("bufferPool(%q, %d, %d, %v) = %s, want %s", c.memory, c.machine, c.nodes, c.host, got, c.want)
		}
	}
}

// A lab stored by an earlier version lacks the fault log, the backup and
// archive directories and every daemon's files: Complete resolves them as
// Build does, so an old lab's daemons are found and stopped.
func TestCompleteFillsAStoredPlan(t *testing.T) {
	s, _ := spec.Preset("wan2-arbitrator")
	built, err := Build(s, "old", "/h", rootFacts)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(built)
	old := *built
	old.FaultLog, old.Backups, old.Archive, old.Keeper, old.WAN = "", "", "", Daemon{}, nil
	old.Nodes = append([]Node(nil), built.Nodes...)
	for i := range old.Nodes {
		old.Nodes[i].Server, old.Nodes[i].Agent, old.Nodes[i].UserProviderOptions = Daemon{}, Daemon{}, false
	}
	old.LoadBalancers = append([]LB(nil), built.LoadBalancers...)
	for i := range old.LoadBalancers {
		old.LoadBalancers[i].Instances = append([]LBInstance(nil), built.LoadBalancers[i].Instances...)
		for j := range old.LoadBalancers[i].Instances {
			old.LoadBalancers[i].Instances[j].Proxy = Daemon{}
		}
	}
	old.Clusters = append([]Cluster(nil), built.Clusters...)
	for i := range old.Clusters {
		if a := old.Clusters[i].Arbitrator; a != nil {
			copied := *a
			copied.Garbd = Daemon{}
			old.Clusters[i].Arbitrator = &copied
		}
	}
	Complete(&old)
	if got, _ := json.Marshal(&old); string(got) != string(want) {
		t.Fatalf("completed plan differs from a built one:\n%s\n%s", got, want)
	}
	if built.Keeper.Marker != "--lab-dir /h/labs/old" || built.Nodes[0].Agent.Marker != built.Nodes[0].DrainFile {
		t.Errorf("markers: keeper %q, agent %q", built.Keeper.Marker, built.Nodes[0].Agent.Marker)
	}
}

var cgroupFacts = Facts{Root: true, User: "root", MemBytes: 24 << 30, CPUs: 2, GaleraLib: "/usr/lib/galera/libgalera_smm.so",
	Cgroups: map[string]string{"cpu": "/sys/fs/cgroup/cpu", "cpuacct": "/sys/fs/cgroup/cpuacct", "memory": "/sys/fs/cgroup/memory/user"}}

const machinesSpec = `
machines: [{name: half, cpus: 0.5, memory: 1G}]
clusters: [{name: db, nodes: 3, machine: d1, node_machines: {db3: d2}}]
load_balancers: [{name: lb, cluster: db, machine: half}]
client: {machine: d2}
`

func TestMachines(t *testing.T) {
	s, err := spec.Load([]byte(machinesSpec))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(s, "sized", "/h", cgroupFacts)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, h := range p.Hosts {
		if h.Machine != nil {
			got[h.Name] = h.Machine.String()
		}
	}
	want := map[string]string{"db1": "d1 (1 CPU, 3.5G)", "db2": "d1 (1 CPU, 3.5G)", "db3": "d2 (2 CPUs, 7G)",
		"lb": "half (0.5 CPUs, 1G)", "client": "d2 (2 CPUs, 7G)"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("machines: %v, want %v", got, want)
	}
	if !strings.Contains(p.Nodes[0].Config, "innodb_buffer_pool_size") || !strings.Contains(p.Nodes[0].Config, "1792M") {
		t.Errorf("buffer pool does not follow the machine:\n%s", p.Nodes[0].Config)
	}
	if d := p.CgroupDirs("db1"); fmt.Sprint(d) != "[/sys/fs/cgroup/cpu/hadrill/sized/db1 /sys/fs/cgroup/cpuacct/hadrill/sized/db1 /sys/fs/cgroup/memory/user/hadrill/sized/db1]" {
		t.Errorf("cgroup dirs %v", d)
	}
	// the WAN emulator's: beside hadrill/, its weight against the machine's processes
	if d := p.NetemCgroup(); d != "/sys/fs/cgroup/cpu/hadrill-netem-sized" {
		t.Errorf("netem cgroup %q", d)
	}
	if !strings.Contains(p.Nodes[2].Config, "3584M") {
		t.Errorf("db3's buffer pool does not follow its own machine:\n%s", p.Nodes[2].Config)
	}
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "5 hosts are given 6.5 CPUs in all, this machine has 2") {
		t.Errorf("warnings %q", p.Warnings)
	}
	b, _ := json.MarshalIndent(p.Hosts, "", "  ")
	golden.Check(t, "machines-hosts", append(b, '\n'))
}

func TestMachinesCoMountedControllers(t *testing.T) {
	f := cgroupFacts
	f.Cgroups = map[string]string{"cpu": "/sys/fs/cgroup/cpu,cpuacct", "cpuacct": "/sys/fs/cgroup/cpu,cpuacct", "memory": "/sys/fs/cgroup/memory"}
	s, _ := spec.Load([]byte("clusters: [{name: db, machine: small}]"))
	p, err := Build(s, "co", "/h", f)
	if err != nil {
		t.Fatal(err)
	}
	if d := p.CgroupDirs("db1"); len(d) != 2 {
		t.Errorf("co-mounted cpu,cpuacct made twice: %v", d)
	}
	if len(p.Warnings) != 0 {
		t.Errorf("warnings %q", p.Warnings)
	}
}

func TestMachinesRefused(t *testing.T) {
	s, err := spec.Load([]byte(machinesSpec))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		facts Facts
		want  []string
	}{
		{"rootless", Facts{User: "u", MemBytes: 8 << 30, GaleraLib: "/x"}, []string{"clusters[0].machine: machines need root",
			"load_balancers[0].machine: machines need root", "client.machine: machines need root"}},
		{"no cgroup v1", rootFacts, []string{"clusters[0].machine: machines need the cgroup v1", "client.machine: machines need the cgroup v1"}},
	} {
		_, err := Build(s, "sized", "/h", c.facts)
		if err == nil || !hderr.IsUser(err) {
			t.Fatalf("%s: %v, want a user error", c.name, err)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", c.name, err, w)
			}
		}
		if strings.Count(err.Error(), "clusters[0].machine") != 1 {
			t.Errorf("%s: a cluster's field is named once: %q", c.name, err)
		}
	}
}

func TestClusterNetwork(t *testing.T) {
	s, err := spec.Load([]byte(`
networks: {application: {bandwidth: 1gbit}, cluster: {bandwidth: 200mbit}}
clusters: [{name: db, nodes: 3, arbitrator: {}}, {name: dr, kind: standalone}]
replication: [{from: db, to: dr}]
load_balancers: [{name: lb, cluster: db}]
`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(s, "twonic", "/h", rootFacts)
	if err != nil {
		t.Fatal(err)
	}
	if p.ClusterNetwork == "" || p.ClusterNetwork == p.Network || p.ClusterBridge != ClusterBridge {
		t.Fatalf("cluster network %q beside %q", p.ClusterNetwork, p.Network)
	}
	for _, h := range p.Hosts {
		want := 1
		if h.Role == "db" || h.Role == "arbitrator" {
			want = 2
		}
		if len(h.NICs) != want || h.NICs[0].RateBps != 1e9 || (want == 2 && (h.NICs[1].RateBps != 200e6 || h.NICs[1].Address != h.ClusterAddress)) {
			t.Errorf("host %s NICs %+v", h.Name, h.NICs)
		}
	}
	b, _ := json.MarshalIndent(p.Hosts, "", "  ")
	golden.Check(t, "twonic-hosts", append(b, '\n'))
	golden.Check(t, "twonic-db1.my.cnf", []byte(p.Nodes[0].Config))
	golden.Check(t, "twonic-garbd.argv", []byte(strings.Join(p.Clusters[0].Arbitrator.Argv, "\n")+"\n"))
	if _, err := Build(s, "twonic", "/h", Facts{User: "u", MemBytes: 8 << 30, GaleraLib: "/x"}); err == nil ||
		!strings.Contains(err.Error(), "networks: separate NICs need network namespaces") {
		t.Errorf("rootless with networks: %v", err)
	}
}

// TestRemoteClusterNetwork: on remote machines the cluster network is each
// database host's second NIC (the inventory's cluster_address, on the
// interface preflight found holding it): Galera listens there; a rate is
// refused (the NICs are the machines' own), and so is a database host
// without a cluster address, naming it.
func TestRemoteClusterNetwork(t *testing.T) {
	s, err := spec.Load([]byte(`
networks: {cluster: {}}
clusters: [{name: db, nodes: 3}]
load_balancers: [{name: lb, cluster: db}]
`))
	if err != nil {
		t.Fatal(err)
	}
	f := sshFacts
	f.Remote = maps.Clone(sshFacts.Remote)
	for i, name := range []string{"db1", "db2", "db3"} {
		r := f.Remote[name]
		r.Interface, r.ClusterAddress, r.ClusterInterface = "ens5", fmt.Sprintf("10.9.0.%d", 11+i), "ens6"
		f.Remote[name] = r
	}
	p, err := Build(s, "rnic", "/home/u/.hadrill", f)
	if err != nil {
		t.Fatal(err)
	}
	db1, _ := p.Host("db1")
	if db1.ClusterAddress != "10.9.0.11" || len(db1.NICs) != 2 || db1.NICs[1].Name != "ens6" || db1.NICs[1].Network != NetCluster || db1.NICs[1].Address != "10.9.0.11" {
		t.Errorf("db1: %+v", db1)
	}
	if lb, _ := p.Host("lb"); lb.ClusterAddress != "" || len(lb.NICs) > 1 {
		t.Errorf("lb: %+v", lb)
	}
	if len(p.Warnings) > 0 {
		t.Errorf("warnings: %v", p.Warnings)
	}
	// a cluster address the spec has no use for: said, not refused
	plain, _ := spec.Preset("galera3")
	if p, err := Build(plain, "rnic", "/home/u/.hadrill", f); err != nil || !slices.Contains(p.Warnings, "the inventory's cluster_address of db1, db2, db3 is not used: the spec has no cluster network (networks: {cluster: {}})") {
		t.Errorf("unused cluster addresses: %v %v", err, p.Warnings)
	}
	if n := p.Nodes[0]; n.Address != "10.0.0.11" || n.PeerAddress() != "10.9.0.11" || !strings.Contains(n.ProviderOptions, "10.9.0.11") ||
		!strings.Contains(n.Config, "wsrep_node_address") || !strings.Contains(n.Config, "10.9.0.12") {
		t.Errorf("db1's Galera addresses: %s\n%s", n.ProviderOptions, n.Config)
	}

	missing := f
	missing.Remote = maps.Clone(f.Remote)
	r := missing.Remote["db3"]
	r.ClusterAddress = ""
	missing.Remote["db3"] = r
	s.Networks.Cluster.Bandwidth = "1gbit"
	_, err = Build(s, "rnic", "/home/u/.hadrill", missing)
	for _, want := range []string{"networks.cluster.bandwidth: a NIC's rate is emulated on this computer only", "networks.cluster: on remote machines the cluster network is each database host's and arbitrator's second NIC: give db3 a cluster_address in the inventory"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want %q, got %v", want, err)
		}
	}
}

func TestStorage(t *testing.T) {
	s, err := spec.Load([]byte(`
disks: [{name: slow, iops: 100, throughput: 10M, latency: 5ms, size: 2G}]
clusters:
  - {name: db, nodes: 2, storage: {volumes: [{name: data, disk: standard, count: 2}, {name: logs, disk: slow, fs: ext4}, {name: tmp, disk: local}], redo: logs, binlog: logs, tmpdir: tmp}}
  - {name: dr, kind: standalone}
replication: [{from: db, to: dr}]
`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(s, "vols", "/h", rootFacts)
	if err != nil {
		t.Fatal(err)
	}
	db1, dr1 := p.Nodes[0], p.Nodes[2]
	if len(db1.Volumes) != 3 || db1.TmpDir != "/h/labs/vols/volumes/db1/tmp/tmp" || db1.Volumes[0].FS != "xfs" || len(db1.Volumes[0].Disks) != 2 || db1.Volumes[0].Stripe != 64<<10 || db1.Volumes[0].Device != "db1-data" || db1.Volumes[1].Stripe != 0 || db1.Volumes[1].FS != "ext4" ||
		db1.Volumes[1].Class.Name != "slow" || db1.DataDir != "/h/labs/vols/volumes/db1/data/mysql" ||
		db1.RedoDir != "/h/labs/vols/volumes/db1/logs/redo" || db1.Binlogs() != "/h/labs/vols/volumes/db1/logs/binlog" {
		t.Errorf("db1 storage: %+v datadir %s redo %s binlog %s", db1.Volumes, db1.DataDir, db1.RedoDir, db1.Binlogs())
	}
	if len(dr1.Volumes) != 0 || dr1.DataDir != "/h/labs/vols/nodes/dr1/data" || dr1.Binlogs() != dr1.DataDir {
		t.Errorf("dr1 has no storage: %+v %s", dr1.Volumes, dr1.DataDir)
	}
	if p.Disks == nil || p.Disks.Device("db1-data1") != "/h/labs/vols/disks/fuse/db1-data1" {
		t.Errorf("disks %+v", p.Disks)
	}
	golden.Check(t, "vols-db1.my.cnf", []byte(db1.Config))

	// on remote hosts: no emulated disks, the files in the node's
	// directory on the host's own disk, what the spec asks kept to measure
	// that disk against
	remote := Facts{User: "alice", MemBytes: 24 << 30, GaleraLib: "/x", Remote: map[string]Remote{}}
	for i, h := range []string{"db1", "db2", "dr1", "client"} {
		remote.Remote[h] = Remote{Address: fmt.Sprintf("10.0.0.%d", 11+i), Dir: "/srv/hd", MemBytes: 4 << 30}
	}
	rp, err := Build(s, "vols", "/h", remote)
	if err != nil {
		t.Fatal(err)
	}
	r1 := rp.Nodes[0]
	if rp.Disks != nil || len(r1.Volumes) != 0 || r1.DataDir != "/srv/hd/labs/vols/nodes/db1/data" || r1.TmpDir != "/srv/hd/labs/vols/nodes/db1/tmp" || r1.RedoDir != "" ||
		len(r1.Asked) != 3 || r1.Asked[0].Name != "data" || len(r1.Asked[0].Disks) != 2 || r1.Asked[0].Stripe != 64<<10 || r1.Asked[1].Class.Name != "slow" || r1.Asked[0].Mount != "" {
		t.Errorf("db1 on a remote host: disks %+v volumes %+v asked %+v datadir %s tmpdir %s redo %s", rp.Disks, r1.Volumes, r1.Asked, r1.DataDir, r1.TmpDir, r1.RedoDir)
	}
	if len(rp.Nodes[2].Asked) != 0 {
		t.Errorf("dr1 asks for no volumes: %+v", rp.Nodes[2].Asked)
	}
	if w := strings.Join(rp.Warnings, "\n"); !strings.Contains(w, "db1's files are on the host's own disk, measured against the spec's volumes") {
		t.Errorf("warnings: %s", w)
	}
	if _, err := Build(s, "vols", "/h", Facts{User: "u", MemBytes: 8 << 30, GaleraLib: "/x"}); err == nil ||
		!strings.Contains(err.Error(), "clusters[0].storage: emulated disks need root") {
		t.Errorf("rootless with storage: %v", err)
	}
}

// A Galera cluster without a binary log: no log_bin, no log_slave_updates,
// and wsrep_gtid_mode off (it needs the binary log).
func TestNoBinlogConfig(t *testing.T) {
	s, err := spec.Load([]byte("clusters: [{name: db, kind: galera, binary_log: false}]"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(s, "nobin", "/home/u/.hadrill", rootFacts)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "nobinlog-db1.my.cnf", []byte(p.Nodes[0].Config))
	if c, _ := p.Cluster("db"); !c.NoBinlog {
		t.Error("the plan's cluster does not say its binary log is off")
	}
}

// A load balancer pair: two hosts, the proxy listening on every address of
// each, keepalived on each moving the virtual IP (the address clients use).
func TestLBPair(t *testing.T) {
	s, err := spec.Load([]byte("clusters: [{name: db, kind: galera}]\nload_balancers: [{name: lb, cluster: db, replicas: 2, machine: small}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(s, "pair", "/home/u/.hadrill", cgroupFacts)
	if err != nil {
		t.Fatal(err)
	}
	lb := p.LoadBalancers[0]
	if !lb.VirtualIP || len(lb.Instances) != 2 || lb.Address == lb.Instances[0].Address || lb.Instances[0].Host != "lb1" || lb.Instances[1].Host != "lb2" {
		t.Fatalf("pair: %+v", lb)
	}
	for _, in := range lb.Instances {
		if in.Keepalived == nil || in.Netns != "hd-pair-"+in.Host || in.Keepalived.VIP != lb.Address+"/24" {
			t.Errorf("instance %s: %+v", in.Host, in)
		}
	}
	machines := map[string]string{}
	for _, h := range p.Hosts {
		if h.Machine != nil {
			machines[h.Name] = h.Machine.Name
		}
	}
	if machines["lb1"] != "small" || machines["lb2"] != "small" {
		t.Errorf("both hosts of the pair get the load balancer's machine: %v", machines)
	}
	if _, err := Build(s, "pair", "/home/u/.hadrill", Facts{User: "alice", MemBytes: 8 << 30}); err == nil ||
		!strings.Contains(err.Error(), "load_balancers[0].replicas: a pair sharing a virtual IP needs network namespaces") {
		t.Errorf("a rootless pair: %v", err)
	}
	s.LoadBalancers[0].Kind = spec.LBKindIPTables
	if _, err := Build(s, "pair", "/home/u/.hadrill", Facts{User: "alice", MemBytes: 8 << 30}); err == nil ||
		!strings.Contains(err.Error(), "load_balancers[0].kind: iptables rewrites a host's own firewall, which needs network namespaces (run as root) or SSH hosts") {
		t.Errorf("a rootless load balancer of kind iptables: %v", err)
	}
	s.Monitoring = true
	s.LoadBalancers[0].Machine = ""
	p, err = Build(s, "pair", "/home/u/.hadrill", Facts{Root: true, User: "root", MemBytes: 8 << 30})
	if err != nil {
		t.Fatalf("a load balancer of kind iptables: %v", err)
	}
	if p.LoadBalancers[0].Kind != spec.LBKindIPTables || len(p.Monitoring) == 0 ||
		slices.ContainsFunc(p.Monitoring, func(e Exporter) bool { return e.Job == JobProxy }) {
		t.Errorf("a load balancer of kind iptables: kind %q, exporters %+v (it serves no metrics)", p.LoadBalancers[0].Kind, p.Monitoring)
	}
}

// A load balancer pair on remote hosts shares the inventory's virtual IP
// on the interface holding each host's private address; without one, or
// with one outside that network, it is refused naming the field.
func TestLBPairOnRemoteHosts(t *testing.T) {
	s, err := spec.Load([]byte("clusters: [{name: db, kind: galera}]\nload_balancers: [{name: lb, cluster: db, replicas: 2}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	remote := func(addr, iface string) Remote {
		return Remote{Address: addr, Interface: iface, Network: netip.MustParsePrefix(addr + "/24"), Dir: "/srv/hd", MemBytes: 4 << 30}
	}
	f := Facts{User: "root", GaleraLib: "/usr/lib/galera/libgalera_smm.so", VirtualIPs: map[string]string{"lb": "10.0.0.100"}, Remote: map[string]Remote{
		"db1": remote("10.0.0.11", "ens5"), "db2": remote("10.0.0.12", "ens5"), "db3": remote("10.0.0.13", "ens5"),
		"lb1": remote("10.0.0.101", "ens5"), "lb2": remote("10.0.0.102", "eth1"), "client": remote("10.0.0.201", "ens5")}}
	p, err := Build(s, "pair", "/home/u/.hadrill", f)
	if err != nil {
		t.Fatal(err)
	}
	lb := p.LoadBalancers[0]
	if lb.Address != "10.0.0.100" || !lb.VirtualIP || len(lb.Instances) != 2 {
		t.Fatalf("load balancer: %+v", lb)
	}
	if k := lb.Instances[1].Keepalived; k.Interface != "eth1" || k.VIP != "10.0.0.100/24" {
		t.Errorf("lb2's keepalived: interface %q, vip %q", k.Interface, k.VIP)
	}

	f.VirtualIPs = nil
	if _, err := Build(s, "pair", "/home/u/.hadrill", f); err == nil || !strings.Contains(err.Error(), "load_balancers[0]: pair lb has no virtual IP (the inventory's virtual_ips.lb)") {
		t.Errorf("no virtual IP: %v", err)
	}
	// a host not reached yet: its interface unknown (preflight refuses it, with every other host's problems)
	f.VirtualIPs, f.Remote["lb1"] = map[string]string{"lb": "10.0.0.100"}, Remote{Address: "10.0.0.101", Dir: "/srv/hd"}
	if p, err := Build(s, "pair", "/home/u/.hadrill", f); err != nil || p.LoadBalancers[0].Instances[0].Keepalived.VIP != "10.0.0.100/32" {
		t.Errorf("a pair host not reached: %v", err)
	}
}

// HostNames names the hosts Build places, in its order, before any
// machine is known (an inventory is checked against them).
func TestHostNames(t *testing.T) {
	specs := map[string]*spec.Spec{}
	for _, name := range spec.PresetNames() {
		s, err := spec.Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		specs[name] = s
	}
	s, err := spec.Load([]byte("clusters: [{name: db, kind: galera, nodes: 2, arbitrator: {}}, {name: dr, kind: primary, nodes: 2}]\n" +
		"load_balancers: [{name: lb, cluster: db, replicas: 2}, {name: px, cluster: dr}]\nclient: {name: app}\n"))
	if err != nil {
		t.Fatal(err)
	}
	specs["mixed"] = s
	for name, s := range specs {
		p, err := Build(s, "names", "/home/u/.hadrill", cgroupFacts)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var built, pairs []string
		for _, h := range p.Hosts {
			built = append(built, h.Name)
		}
		for _, lb := range p.LoadBalancers {
			if lb.VirtualIP {
				pairs = append(pairs, lb.Name)
			}
		}
		hosts, gotPairs := s.HostNames()
		if fmt.Sprint(hosts, gotPairs) != fmt.Sprint(built, pairs) {
			t.Errorf("%s: HostNames %v %v, Build %v %v", name, hosts, gotPairs, built, pairs)
		}
	}
	if hosts, pairs := s.HostNames(); fmt.Sprint(hosts, pairs) != "[db1 db2 dbarb dr1 dr2 lb1 lb2 px app] [lb]" {
		t.Errorf("mixed: %v %v", hosts, pairs)
	}
}

// Links on remote hosts: each host gets a netem daemon's files in the
// lab's directory there, and the rules a chain named after the lab.
func TestRemoteWAN(t *testing.T) {
	s, err := spec.Load([]byte(`name: rw
regions: [{name: east}, {name: west}]
links: [{between: [east, west], rtt: 50ms}]
clusters: [{name: db, nodes: 3, regions: [east, west]}]
load_balancers: [{name: lb, cluster: db, region: east}]
client: {name: client, region: east}
`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(s, "rw", "/home/u/.hadrill", sshFacts)
	if err != nil {
		t.Fatal(err)
	}
	w := p.WAN
	if w == nil || w.Chain != "HDNETEM-rw" || len(w.Remote) != len(p.Hosts) || w.Config != "/home/u/.hadrill/labs/rw/netem.json" {
		t.Fatalf("WAN: %+v", w)
	}
	if d := w.Remote["db2"]; d.Config != "/srv/hd/labs/rw/netem/netem.json" || d.Marker != d.Config || d.ReadyFile != "/srv/hd/labs/rw/netem/netem.ready" || d.PidFile == "" || d.LogFile == "" {
		t.Errorf("db2's daemon: %+v", d)
	}
	if _, err := Build(s, "rw", "/home/u/.hadrill", Facts{User: "alice", MemBytes: 8 << 30}); err == nil || !strings.Contains(err.Error(), "run as root") {
		t.Errorf("links rootless: %v", err)
	}
}

// On remote hosts a spec's machine is not emulated: no host of the plan
// claims its quota or limit (runs, status and kills would name it), and
// the plan says why.
func TestSSHMachinesNotClaimed(t *testing.T) {
	s, err := spec.Load([]byte(`
clusters: [{name: db, kind: galera, nodes: 3, machine: d1}]
load_balancers: [{name: lb, cluster: db, machine: small}]
client: {name: client}
`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(s, "m", "/home/u/.hadrill", sshFacts)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range p.Hosts {
		if h.Machine != nil {
			t.Errorf("host %s claims machine %s on a remote host", h.Name, h.Machine)
		}
	}
	want := "clusters[0].machine, load_balancers[0].machine: machines are emulated on this computer only; on remote hosts each host is the machine it is (preflight compared them)"
	if !slices.Contains(p.Warnings, want) {
		t.Errorf("warnings %q, want %q", p.Warnings, want)
	}
	if p, err := Build(s, "m", "/home/u/.hadrill", cgroupFacts); err != nil || p.Hosts[0].Machine == nil {
		t.Errorf("on this computer the machine is the host's: %v", err)
	}
}

// A lab's netfilter queues on remote machines are its own: drawn from its
// name, one per link from there and its corrupting one after all the
// links', the same at every build.
func TestQueueBase(t *testing.T) {
	a, b := QueueBaseOf("rwan"), QueueBaseOf("rwan2")
	if a < 1000 || a >= 61000 || b < 1000 || b >= 61000 || a == b || QueueBaseOf("rwan") != a {
		t.Errorf("queue bases %d, %d", a, b)
	}
	w := &WAN{QueueBase: 2000, Links: []spec.Link{{Between: []string{"east", "west"}}, {Between: []string{"west", "south"}}}}
	if got := fmt.Sprint(w.Queues("east"), w.Queues("west"), w.Queues("north")); got != "[2000 2002] [2000 2001 2002 2003] []" {
		t.Errorf("queues: %s", got)
	}
	if (*WAN)(nil).Queues("east") != nil {
		t.Error("a lab without links binds no queue")
	}
}

// TestRing: the p2p preset's two primaries each receive the other's
// channel and have auto-increment keys of their own (west1: offset 2 of 2).
func TestRing(t *testing.T) {
	s, err := spec.Preset("p2p")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(s, s.Name, "/home/u/.hadrill", rootFacts)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Channels) != 2 || p.Channels[0].Receiver != "west1" || p.Channels[0].Source != "east1" || p.Channels[1].Receiver != "east1" {
		t.Errorf("channels: %+v", p.Channels)
	}
	if !strings.Contains(p.Nodes[0].Config, "auto_increment_offset          = 1") {
		t.Errorf("east1 has no auto-increment offset 1:\n%s", p.Nodes[0].Config)
	}
	golden.Check(t, "p2p-west1.my.cnf", []byte(p.Nodes[1].Config))
}

func TestMonitoring(t *testing.T) {
	s, err := spec.Preset("galera3")
	if err != nil {
		t.Fatal(err)
	}
	s.Monitoring = true
	p, err := Build(s, "mon", "/h", rootFacts)
	if err != nil {
		t.Fatal(err)
	}
	jobs := map[string][]string{}
	for _, e := range p.Monitoring {
		jobs[e.Job] = append(jobs[e.Job], e.Instance)
	}
	if fmt.Sprint(jobs) != "map[mysqld:[db1 db2 db3] node:[db1 db2 db3 lb client] proxy:[lb]]" {
		t.Errorf("exporters: %v", jobs)
	}
	my := p.Monitoring[5]
	if my.URL() != "http://"+p.Nodes[0].Address+":9104/metrics" || my.DefaultsFile != "/h/labs/mon/exporters/mysqld-db1.cnf" ||
		!strings.Contains(strings.Join(my.Argv, " "), "--config.my-cnf=/h/labs/mon/exporters/mysqld-db1.cnf") {
		t.Errorf("mysqld exporter: %+v", my)
	}
	// every exporter's command line ends an argument with its marker: a pid file's process is
	// known as the exporter by that (supervise.Owned), so an exporter without it is never
	// found running
	for _, e := range p.Monitoring {
		if e.Job != JobProxy && !strings.Contains(strings.Join(e.Argv, "\x00")+"\x00", e.Daemon.Marker+"\x00") {
			t.Errorf("%s: marker %q not in %v", e.Name(), e.Daemon.Marker, e.Argv)
		}
	}
	if ports := p.Ports(); fmt.Sprint(ports["db1"]) != "[3306 4444 4567 4568 9100 9104 9200]" || fmt.Sprint(ports["client"]) != "[9100]" {
		t.Errorf("ports: %v", ports)
	}

	// without monitoring: no exporter, no metrics frontend
	s.Monitoring = false
	p, _ = Build(s, "mon", "/h", rootFacts)
	if len(p.Monitoring) != 0 {
		t.Errorf("monitoring off: %v", p.Monitoring)
	}

	// rootless: refused, naming the field
	s.Monitoring = true
	if _, err := Build(s, "mon", "/h", Facts{User: "alice", MemBytes: 8 << 30, GaleraLib: "/usr/lib/galera/libgalera_smm.so"}); err == nil || !strings.Contains(err.Error(), "monitoring: the exporters need a host of their own") {
		t.Errorf("rootless monitoring: %v", err)
	}

	// remote machines: each exporter on its machine's private address, its
	// files in that machine's directory for the lab
	p, err = Build(s, "mon", "/home/u/.hadrill", sshFacts)
	if err != nil {
		t.Fatal(err)
	}
	jobs = map[string][]string{}
	for _, e := range p.Monitoring {
		jobs[e.Job] = append(jobs[e.Job], e.Instance)
	}
	if fmt.Sprint(jobs) != "map[mysqld:[db1 db2 db3] node:[db1 db2 db3 lb client] proxy:[lb]]" {
		t.Errorf("exporters on remote machines: %v", jobs)
	}
	my = p.Monitoring[5]
	if my.Host != "db1" || my.URL() != "http://10.0.0.11:9104/metrics" || my.DefaultsFile != "/srv/hd/labs/mon/exporters/mysqld-db1.cnf" ||
		!strings.Contains(strings.Join(my.Argv, " "), "--web.listen-address=10.0.0.11:9104") {
		t.Errorf("mysqld exporter on a remote machine: %+v", my)
	}
	if n := p.Monitoring[4]; n.Host != "client" || n.Daemon.PidFile != "/srv/hd/labs/mon/exporters/node-client.pid" || n.URL() != "http://10.0.0.201:9100/metrics" {
		t.Errorf("node exporter on a remote machine: %+v", n)
	}
}

// A load balancer stored before pairs kept its one host in its own
// fields: it is read as its one instance, and completed as one built now.
func TestLBStoredBeforePairs(t *testing.T) {
	var l LB
	stored := `{"name":"lb","cluster":"db","mode":"single-writer","host":"lb","netns":"hd-old-lb","address":"198.18.1.101","port":3306,` +
		`"dir":"/h/labs/old/lb/lb","config_file":"/h/labs/old/lb/lb/stored.cfg","pid_file":"/h/labs/old/lb/lb/stored.pid",` +
		`"log_file":"/h/labs/old/lb/lb/stored.log","admin_socket":"/h/labs/old/lb/lb/admin.sock"}`
	if err := json.Unmarshal([]byte(stored), &l); err != nil {
		t.Fatal(err)
	}
	p := &Plan{LoadBalancers: []LB{l}}
	Complete(p)
	in := p.LoadBalancers[0].Instances
	if len(in) != 1 || in[0].Host != "lb" || in[0].Netns != "hd-old-lb" || in[0].Address != "198.18.1.101" || in[0].AdminSocket != "/h/labs/old/lb/lb/admin.sock" ||
		in[0].Proxy.Marker != "/h/labs/old/lb/lb/stored.cfg" || in[0].Proxy.PidFile != "/h/labs/old/lb/lb/stored.pid" {
		t.Errorf("%+v", in)
	}
	var again LB
	b, _ := json.Marshal(p.LoadBalancers[0])
	if err := json.Unmarshal(b, &again); err != nil || len(again.Instances) != 1 || again.Instances[0] != in[0] {
		t.Errorf("round trip: %+v %v", again, err)
	}
}

// --lb resolves a load balancer by name (LBAlias: the first); an unknown
// name is the user's error, naming those there are.
func TestFindLB(t *testing.T) {
	p := &Plan{LoadBalancers: []LB{{Name: "front"}, {Name: "back"}}}
	if b, err := p.FindLB("back"); err != nil || b.Name != "back" {
		t.Errorf("back: %v %v", b, err)
	}
	if b, err := p.FindLB(LBAlias); err != nil || b.Name != "front" {
		t.Errorf("%s: %v %v", LBAlias, b, err)
	}
	if _, err := p.FindLB("side"); !hderr.IsUser(err) || !strings.Contains(err.Error(), `--lb: unknown load balancer "side" (load balancers: [front back])`) {
		t.Errorf("side: %v", err)
	}
}

// A host's load balancer is the one with an instance on it.
func TestLBOn(t *testing.T) {
	p := &Plan{LoadBalancers: []LB{{Name: "front", Instances: []LBInstance{{Host: "front"}}}, {Name: "pair", Instances: []LBInstance{{Host: "pair1"}, {Host: "pair2"}}}}}
	for host, want := range map[string]string{"front": "front", "pair2": "pair", "db1": ""} {
		got := ""
		if b, ok := p.LBOn(host); ok {
			got = b.Name
		}
		if got != want {
			t.Errorf("%s: %q, want %q", host, got, want)
		}
	}
}

// TestProviderOptionsMerged (the review's M6): the spec's provider
// options are merged into hadrill's (its value replacing hadrill's of the
// same name, the rest added), on the one line the server reads; fast
// failure detection and the regions' segments stay.
func TestProviderOptionsMerged(t *testing.T) {
	s, err := spec.Load([]byte(`
regions: [{name: east}, {name: west}]
links: [{between: [east, west], rtt: 10ms}]
clusters: [{name: db, nodes: 4, regions: [east, west], failure_detection: fast,
  config: {wsrep-provider-options: "gcache.size=256M; pc.recovery=false; gcs.fc_limit=64"}}]`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(s, "po", "/home/u/.hadrill", rootFacts)
	if err != nil {
		t.Fatal(err)
	}
	n := p.Nodes[1]
	for _, want := range []string{"gmcast.listen_addr=tcp://", "gcache.size=256M", "pc.recovery=false", "gmcast.segment=", "evs.suspect_timeout=PT0.5S", "gcs.fc_limit=64"} {
		if !strings.Contains(n.ProviderOptions, want) {
			t.Errorf("%s lacks %s: %s", n.Name, want, n.ProviderOptions)
		}
	}
	if c := strings.Count(n.Config, "provider-options") + strings.Count(n.Config, "provider_options"); c != 1 || strings.Contains(n.ProviderOptions, "gcache.size=128M") || n.UserProviderOptions {
		t.Errorf("%d provider option lines, user's flag %v:\n%s", c, n.UserProviderOptions, n.Config)
	}
}

// TestSegmentsOff: a cluster over two regions with segments off keeps
// every node, and its arbitrator, in Galera's one default segment (as
// Galera before segments had it); on, each region is a segment.
func TestSegmentsOff(t *testing.T) {
	for _, c := range []struct {
		segments string
		want     bool
	}{{"", true}, {", segments: true", true}, {", segments: false", false}} {
		s, err := spec.Load([]byte(`
regions: [{name: east}, {name: west}, {name: third}]
links: [{between: [east, west], rtt: 10ms}, {between: [east, third], rtt: 10ms}, {between: [west, third], rtt: 10ms}]
clusters: [{name: db, nodes: 4, regions: [east, west], arbitrator: {region: third}` + c.segments + `}]`))
		if err != nil {
			t.Fatal(err)
		}
		p, err := Build(s, "seg", "/home/u/.hadrill", rootFacts)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range p.Nodes {
			if got := strings.Contains(n.ProviderOptions, "gmcast.segment="); got != c.want {
				t.Errorf("segments%q: %s has a segment %v, want %v: %s", c.segments, n.Name, got, c.want, n.ProviderOptions)
			}
		}
		for _, pc := range p.Clusters {
			a := pc.Arbitrator
			if a == nil {
				t.Fatal("no arbitrator")
			}
			if got := strings.Contains(strings.Join(a.Argv, " "), "gmcast.segment="); got != c.want {
				t.Errorf("segments%q: arbitrator has a segment %v, want %v", c.segments, got, c.want)
			}
		}
	}
	if _, err := spec.Load([]byte(`clusters: [{name: db, nodes: 3, segments: false}]`)); err == nil || !strings.Contains(err.Error(), "clusters[0].segments: applies to galera clusters over several regions") {
		t.Errorf("segments on a one-region cluster: %v", err)
	}
}

// Each failure detection reaches every node's provider options: its
// suspicion timeout, or none of hadrill's for stock (Galera's 5 s).
func TestFailureDetection(t *testing.T) {
	for level, want := range map[string]string{"fast": "evs.suspect_timeout=PT0.5S", "aggressive": "evs.suspect_timeout=PT0.3S", "wan": "evs.suspect_timeout=PT1.5S", "stock": ""} {
		s, err := spec.Load([]byte("clusters: [{name: db, nodes: 3, failure_detection: " + level + "}]"))
		if err != nil {
			t.Fatalf("%s: %v", level, err)
		}
		p, err := Build(s, "fd", "/h", rootFacts)
		if err != nil {
			t.Fatalf("%s: %v", level, err)
		}
		for _, n := range p.Nodes {
			if got := n.ProviderOptions; want == "" && strings.Contains(got, "suspect_timeout") || want != "" && !strings.Contains(got, want) {
				t.Errorf("%s: %s's provider options %q, want %q", level, n.Name, got, want)
			}
		}
	}
}
