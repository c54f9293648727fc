package preflight

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/golden"
	"github.com/hadrill/hadrill/internal/inventory"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
)

func TestPackages(t *testing.T) {
	ps := Packages()
	if len(ps) < 10 {
		t.Fatalf("packages.txt: %d packages", len(ps))
	}
	for _, p := range ps {
		if p.Name == "mariadb-server" && p.Roles[0] != RoleDB {
			t.Errorf("mariadb-server: %v", p.Roles)
		}
	}
	if got := fmt.Sprint(For([]string{RoleLB, RoleLBPair})); got != "[iproute2 procps iptables haproxy keepalived]" {
		t.Errorf("lb-pair packages: %s", got)
	}
	if got := fmt.Sprint(For([]string{RoleClient})); got != "[mariadb-client iproute2 procps iptables sysbench]" {
		t.Errorf("client packages: %s", got)
	}
	for _, bad := range []string{"x\n", "x db nowhere\n"} {
		if _, err := parsePackages(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

const probeOut = `uid 0
arch x86_64
kernel 6.1.0-28-amd64
os debian 12
cpus 4
mem_kb 8052344
package mariadb-server installed
package galera-4 missing
package socat missing
dir absent /var/lib
free_kb 20971520
listen 0.0.0.0:22
listen 127.0.0.1:3306
listen [::]:22
nfqueue yes
queue 0
queue 1207
addr lo 127.0.0.1/8
addr eth0 10.1.0.11/24
`

func TestParseFacts(t *testing.T) {
	f, err := ParseFacts(probeOut)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.MarshalIndent(f, "", "  ")
	golden.Check(t, "facts.json", append(b, '\n'))
	if _, err := ParseFacts("uid 0\narch x86_64\n"); err == nil || !strings.Contains(err.Error(), "no free_kb") {
		t.Errorf("truncated output: %v", err)
	}
	if _, err := ParseFacts("uid zero\narch x\nfree_kb 1\n"); err == nil || !strings.Contains(err.Error(), `uid: "zero" is not a number`) {
		t.Errorf("bad number: %v", err)
	}
}

// TestNeeds: what each host of a preset needs (golden), and with
// monitoring on, every host the node exporter's package and every database
// node the mysqld exporter's too, their ports free.
func TestNeeds(t *testing.T) {
	for _, c := range []struct {
		preset     string
		monitoring bool
	}{{"galera3", false}, {"semisync", false}, {"wan2-arbitrator", false}, {"galera3", true}} {
		s, err := spec.Preset(c.preset)
		if err != nil {
			t.Fatal(err)
		}
		s.Monitoring = c.monitoring
		p, err := plan.Build(s, s.Name, "/home/u/.hadrill", PlanFacts(inventoryOf(s), nil))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.MarshalIndent(Needs(p), "", "  ")
		name := "needs-" + c.preset
		if c.monitoring {
			name += "-monitoring"
		}
		golden.Check(t, name+".json", append(b, '\n'))
	}
}

// inventoryOf places every host of a spec on a machine of its own, and
// gives each pair a virtual IP.
func inventoryOf(s *spec.Spec) *inventory.Resolved {
	inv := &inventory.Resolved{File: "hosts.yaml", Hosts: map[string]inventory.Host{}, VirtualIPs: map[string]string{}}
	hosts, pairs := s.HostNames()
	for i, h := range hosts {
		inv.Hosts[h] = inventory.Host{Name: h, PrivateAddress: fmt.Sprintf("10.1.0.%d", 11+i), Dir: inventory.DefaultDir}
	}
	for i, lb := range pairs {
		inv.VirtualIPs[lb] = fmt.Sprintf("10.1.0.%d", 200+i)
	}
	return inv
}

// PlanFacts: every host at its inventory address; a reached one with
// the interface holding it, its network and memory; one not reached
// with nothing more.
func TestPlanFacts(t *testing.T) {
	s, err := spec.Preset("galera3")
	if err != nil {
		t.Fatal(err)
	}
	inv := inventoryOf(s)
	f, err := ParseFacts(probeOut)
	if err != nil {
		t.Fatal(err)
	}
	rep := &Report{Hosts: []HostReport{{Name: "db1", Reached: true, Facts: &f}, {Name: "db2", Problems: []string{"db2: cannot reach"}}}}
	pf := PlanFacts(inv, rep)
	if r := pf.Remote["db1"]; r.Address != "10.1.0.11" || r.Interface != "eth0" || r.Network.String() != "10.1.0.11/24" || r.MemBytes != 8052344<<10 || r.Dir != inventory.DefaultDir {
		t.Errorf("db1: %+v", r)
	}
	if r := pf.Remote["db2"]; r.Address != "10.1.0.12" || r.Interface != "" || r.MemBytes != 0 {
		t.Errorf("db2: %+v", r)
	}
	if len(pf.Remote) != len(inv.Hosts) || pf.User != "root" {
		t.Errorf("facts: %+v", pf)
	}
	if _, err := plan.Build(s, "g3", "/home/u/.hadrill", pf); err != nil {
		t.Errorf("a plan with a host not reached: %v", err)
	}
}

func TestJudge(t *testing.T) {
	good := Facts{UID: 0, Arch: "x86_64", OS: "debian 12", CPUs: 4, MemBytes: 8 << 30, FreeBytes: 10 << 30, Listening: []string{"0.0.0.0:22", "[::]:22"}, NFQueue: true}
	db := Need{Roles: []string{RoleDB}, Ports: []int{3306, 4444, 4567, 4568, 9200}, MinFreeBytes: MinFreeDB}
	with := func(change func(*Facts)) Facts {
		f := good
		change(&f)
		return f
	}
	cases := []struct {
		name     string
		need     Need
		facts    Facts
		problems []string
		warnings []string
	}{
		{"good", db, good, nil, nil},
		{"not root", db, with(func(f *Facts) { f.UID = 1000 }), []string{"db1: commands run as uid 1000, not root"}, nil},
		{"another architecture", db, with(func(f *Facts) { f.Arch = "aarch64" }), []string{"db1: the host is aarch64, this hadrill is built for amd64"}, nil},
		{"missing packages", db, with(func(f *Facts) { f.Missing = []string{"galera-4", "socat"} }),
			[]string{"db1: missing Debian packages for its role (db): galera-4, socat (hadrill preflight --install installs them, or apt-get install galera-4 socat)"}, nil},
		{"no dpkg", db, with(func(f *Facts) { f.NoDpkg = true; f.OS = "rocky 9" }), []string{"db1: no dpkg"}, nil},
		{"another Debian", db, with(func(f *Facts) { f.OS = "ubuntu 24.04" }), nil, []string{"db1: runs ubuntu 24.04; hadrill is tested on Debian 12"}},
		{"disk full", db, with(func(f *Facts) { f.FreeBytes = 1 << 30 }), []string{"db1: 1.0 GiB free for hadrill's directory, 2.0 GiB needed (db)"}, nil},
		{"a client needs little room", Need{Roles: []string{RoleClient}, MinFreeBytes: MinFreeOther}, with(func(f *Facts) { f.FreeBytes = 1 << 30 }), nil, nil},
		{"port on every address", db, with(func(f *Facts) { f.Listening = append(f.Listening, "0.0.0.0:3306", "*:9200") }),
			[]string{"db1: port 3306 is taken (something listens on 0.0.0.0:3306)", "db1: port 9200 is taken (something listens on *:9200)"}, nil},
		{"private address elsewhere", db, with(func(f *Facts) {
			f.Addrs = []Addr{{"lo", netip.MustParsePrefix("127.0.0.1/8")}, {"ens5", netip.MustParsePrefix("10.9.0.4/16")}}
		}), []string{"db1: its private address 10.1.0.11 is none of its own (127.0.0.1 (lo), 10.9.0.4 (ens5))"}, nil},
		{"cluster address its own", Need{Roles: []string{RoleDB}, MinFreeBytes: MinFreeDB, ClusterAddress: "10.2.0.11"},
			with(func(f *Facts) {
				f.Addrs = []Addr{{"ens5", netip.MustParsePrefix("10.1.0.11/16")}, {"ens6", netip.MustParsePrefix("10.2.0.11/16")}}
			}), nil, nil},
		{"cluster address elsewhere", Need{Roles: []string{RoleDB}, MinFreeBytes: MinFreeDB, ClusterAddress: "10.2.0.11"},
			with(func(f *Facts) { f.Addrs = []Addr{{"ens5", netip.MustParsePrefix("10.1.0.11/16")}} }),
			[]string{"db1: its cluster address 10.2.0.11 is none of its own"}, nil},
		{"a port taken on the cluster address", Need{Roles: []string{RoleDB}, MinFreeBytes: MinFreeDB, Ports: []int{3306, 4567}, ClusterAddress: "10.2.0.11", ClusterPorts: []int{3306, 4567}},
			with(func(f *Facts) { f.Listening = append(f.Listening, "10.2.0.11:4567", "10.9.0.1:3306") }),
			[]string{"db1: port 4567 is taken on its cluster address (something listens on 10.2.0.11:4567)"}, nil},
		{"a port taken on every address, said once", Need{Roles: []string{RoleDB}, MinFreeBytes: MinFreeDB, Ports: []int{4567}, ClusterAddress: "10.2.0.11", ClusterPorts: []int{4567}},
			with(func(f *Facts) { f.Listening = append(f.Listening, "*:4567") }),
			[]string{"db1: port 4567 is taken (something listens on *:4567)"}, nil},
		{"private address its own", db, with(func(f *Facts) { f.Addrs = []Addr{{"ens5", netip.MustParsePrefix("10.1.0.11/16")}} }), nil, nil},
		{"a pair's virtual IP in its network", Need{Roles: []string{RoleLB, RoleLBPair}, VirtualIP: "10.1.200.1"},
			with(func(f *Facts) { f.Addrs = []Addr{{"ens5", netip.MustParsePrefix("10.1.0.11/16")}} }), nil, nil},
		{"a pair host whose addresses are unknown", Need{Roles: []string{RoleLB, RoleLBPair}, VirtualIP: "10.1.200.1"}, good,
			[]string{"db1: its addresses could not be read (no ip command): keepalived puts the virtual IP 10.1.200.1 on the interface"}, nil},
		{"a pair's virtual IP outside its network", Need{Roles: []string{RoleLB, RoleLBPair}, VirtualIP: "203.0.113.9"},
			with(func(f *Facts) { f.Addrs = []Addr{{"ens5", netip.MustParsePrefix("10.1.0.11/16")}} }),
			[]string{"db1: the virtual IP 203.0.113.9 is outside the network of its private address (10.1.0.0/16 on ens5)"}, nil},
		{"port on its address", db, with(func(f *Facts) { f.Listening = append(f.Listening, "10.1.0.11:4567", "[::%lo]:4444") }),
			[]string{"db1: port 4444 is taken", "db1: port 4567 is taken (something listens on 10.1.0.11:4567)"}, nil},
		{"port on another address is free", db, with(func(f *Facts) { f.Listening = append(f.Listening, "127.0.0.1:3306") }), nil, nil},
		{"no ss", db, with(func(f *Facts) { f.Listening = nil; f.ListenUnknown = true }), nil, []string{"db1: has no ss"}},
		{"clock far off", db, with(func(f *Facts) { f.Skew = -3 * time.Second; f.SkewError = time.Millisecond }),
			[]string{"db1: its clock is -3s off this computer's (at most 1s)"}, nil},
		{"clock a little off", db, with(func(f *Facts) { f.Skew = 400 * time.Millisecond }), nil, []string{"db1: its clock is +400ms off"}},
		{"skew within the measuring error", db, with(func(f *Facts) { f.Skew = 1100 * time.Millisecond; f.SkewError = 900 * time.Millisecond }), nil, nil},
		{"machine larger than the host", Need{Roles: []string{RoleDB}, MinFreeBytes: MinFreeDB, Machine: "large", CPUs: 8, MemBytes: 32 << 30}, good, nil,
			[]string{"db1: the spec's machine large has 8 CPUs, the host 4", "db1: the spec's machine large has 32.0 GiB of memory, the host 8.0 GiB"}},
		{"WAN", Need{Roles: []string{RoleDB}, MinFreeBytes: MinFreeDB, Queues: []uint16{4242, 4243}}, with(func(f *Facts) { f.Queues = []uint16{0, 4244} }), nil, nil},
		{"WAN queue bound by another", Need{Roles: []string{RoleDB}, MinFreeBytes: MinFreeDB, Queues: []uint16{4242, 4243}}, with(func(f *Facts) { f.Queues = []uint16{4243} }),
			[]string{"db1: netfilter queue 4243 is bound by another program"}, nil},
		{"WAN without a netfilter queue", Need{Roles: []string{RoleDB}, MinFreeBytes: MinFreeDB, Queues: []uint16{4242}}, with(func(f *Facts) { f.NFQueue = false }),
			[]string{"db1: its kernel has no netfilter queue (nfnetlink_queue)"}, nil},
		{"no netfilter queue and no links", db, with(func(f *Facts) { f.NFQueue = false }), nil, nil},
		{"every problem at once", db, with(func(f *Facts) { f.UID = 5; f.Missing = []string{"fio"}; f.FreeBytes = 0; f.Skew = time.Hour }),
			[]string{"uid 5", "fio", "0 KiB free", "1h0m0s off"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			problems, warnings := Judge("db1", "10.1.0.11", c.need, c.facts, "amd64")
			check := func(what string, got, want []string) {
				if len(want) == 0 && len(got) > 0 {
					t.Errorf("%s: %v", what, got)
				}
				all := strings.Join(got, "\n")
				for _, w := range want {
					if !strings.Contains(all, w) {
						t.Errorf("want %s %q, got:\n%s", what, w, all)
					}
				}
			}
			check("problem", problems, c.problems)
			check("warning", warnings, c.warnings)
		})
	}
}

// The probe run on this computer (a Debian one): dpkg itself installed, a
// package of no such name missing, another whose name is a prefix of an
// installed one's missing too.
func TestProbeScript(t *testing.T) {
	if _, err := exec.LookPath("dpkg-query"); err != nil {
		t.Skip("no dpkg-query here")
	}
	cmd := exec.Command("sh", "-s", "--", t.TempDir(), "dpkg", "no-such-package-hd", "dpk")
	cmd.Stdin = strings.NewReader(probeScript)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	f, err := ParseFacts(string(out))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(f.Missing) != "[no-such-package-hd dpk]" || f.NoDpkg || !f.DirExists {
		t.Errorf("missing %v, no dpkg %v, dir %v\n%s", f.Missing, f.NoDpkg, f.DirExists, out)
	}
}

// A port taken on every address is one problem, not one for each of the
// host's addresses; Union keeps the cluster address, its ports and the
// virtual IP of the labs that have them.
func TestClusterPortsJudgedOnceAndUnited(t *testing.T) {
	need := Need{Roles: []string{RoleDB}, MinFreeBytes: MinFreeDB, Ports: []int{3306, 4567}, ClusterAddress: "10.2.0.11", ClusterPorts: []int{3306, 4567}}
	f := Facts{Arch: "x86_64", OS: "debian 12", FreeBytes: 10 << 30, Listening: []string{"*:4567", "10.2.0.11:3306"}}
	problems, _ := Judge("db1", "10.1.0.11", need, f, "amd64")
	if len(problems) != 2 || !strings.Contains(problems[0], "port 4567 is taken (something listens on *:4567)") ||
		!strings.Contains(problems[1], "port 3306 is taken on its cluster address (something listens on 10.2.0.11:3306)") {
		t.Errorf("problems:\n%s", strings.Join(problems, "\n"))
	}
	u := Union(map[string]Need{"db1": {Roles: []string{RoleDB}, Ports: []int{3306}}},
		map[string]Need{"db1": need, "lb1": {Roles: []string{RoleLB, RoleLBPair}, VirtualIP: "10.1.200.1"}})
	if d := u["db1"]; d.ClusterAddress != "10.2.0.11" || fmt.Sprint(d.ClusterPorts) != "[3306 4567]" || fmt.Sprint(d.Ports) != "[3306 4567]" || u["lb1"].VirtualIP != "10.1.200.1" {
		t.Errorf("union: %+v", u)
	}
}
