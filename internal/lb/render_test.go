package lb

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/hadrill/hadrill/internal/golden"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
)

const galeraLib = "/usr/lib/galera/libgalera_smm.so"

var rootFacts = plan.Facts{Root: true, User: "root", MemBytes: 24 << 30, GaleraLib: galeraLib}

// build plans a spec (a preset's name, or YAML) for facts.
func build(t *testing.T, preset, yaml, name string, f plan.Facts) *plan.Plan {
	t.Helper()
	var s *spec.Spec
	var err error
	if preset != "" {
		s, err = spec.Preset(preset)
	} else {
		s, err = spec.Load([]byte(yaml))
	}
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build(s, cmpOr(name, s.Name), "/home/u/.hadrill", f)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// render is the first load balancer's files, each instance's.
func render(t *testing.T, p *plan.Plan) []Files {
	t.Helper()
	files, err := Render(p, &p.LoadBalancers[0])
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// Each preset's haproxy.cfg: its cluster's nodes behind their health
// agents, in the lab's namespaces, rootless, and on remote hosts.
func TestRenderGolden(t *testing.T) {
	ssh := plan.Facts{User: "alice", MemBytes: 24 << 30, GaleraLib: galeraLib, Remote: map[string]plan.Remote{
		"db1": {Address: "10.0.0.11", Dir: "/srv/hd", MemBytes: 4 << 30}, "db2": {Address: "10.0.0.12", Dir: "/srv/hd", MemBytes: 4 << 30},
		"db3": {Address: "10.0.0.13", Dir: "/srv/hd", MemBytes: 4 << 30}, "lb": {Address: "10.0.0.101", Dir: "/srv/hd", MemBytes: 4 << 30},
		"client": {Address: "10.0.0.201", Dir: "/srv/hd", MemBytes: 4 << 30}}}
	for _, c := range []struct {
		name, preset string
		facts        plan.Facts
	}{
		{"galera3-netns", "galera3", rootFacts},
		{"galera3-rootless", "galera3", plan.Facts{User: "alice", MemBytes: 8 << 30, GaleraLib: galeraLib}},
		{"semisync", "semisync", rootFacts},
		{"dr-cluster", "dr-cluster", rootFacts},
		{"wan2", "wan2", rootFacts},
		{"wan2-semisync", "wan2-semisync", rootFacts},
		{"wan2-arbitrator", "wan2-arbitrator", rootFacts},
		{"galera3-ssh", "galera3", ssh},
	} {
		t.Run(c.name, func(t *testing.T) {
			golden.Check(t, c.name+"-lb.haproxy.cfg", []byte(render(t, build(t, c.preset, "", "", c.facts))[0].Proxy))
		})
	}
	p := build(t, "", "clusters: [{name: db}]\nload_balancers: [{name: lb, cluster: db, mode: balanced}]\n", "bal", rootFacts)
	golden.Check(t, "balanced-lb.haproxy.cfg", []byte(render(t, p)[0].Proxy))
	// probing as a cloud's load balancer does: every 15 s, checks alone
	// decide, a server taken out keeps its sessions
	p = build(t, "", "clusters: [{name: db}]\nload_balancers: [{name: lb, cluster: db, mode: balanced, checks: cloud}]\n", "bal", rootFacts)
	cloud := render(t, p)[0].Proxy
	golden.Check(t, "balanced-cloud-lb.haproxy.cfg", []byte(cloud))
	if strings.Contains(cloud, "shutdown-sessions") || strings.Contains(cloud, "on-error") || !strings.Contains(cloud, "inter 15s") {
		t.Errorf("cloud checks:\n%s", cloud)
	}
}

// A pair: HAProxy listening on every address of each host (the virtual
// one comes and goes), keepalived on each, unicast to the other.
func TestRenderPair(t *testing.T) {
	cgroups := plan.Facts{Root: true, User: "root", MemBytes: 24 << 30, CPUs: 2, GaleraLib: galeraLib,
		Cgroups: map[string]string{"cpu": "/sys/fs/cgroup/cpu", "cpuacct": "/sys/fs/cgroup/cpuacct", "memory": "/sys/fs/cgroup/memory/user"}}
	p := build(t, "", "clusters: [{name: db, kind: galera}]\nload_balancers: [{name: lb, cluster: db, replicas: 2, machine: small}]\n", "pair", cgroups)
	for j, f := range render(t, p) {
		in := p.LoadBalancers[0].Instances[j]
		if !strings.Contains(f.Proxy, "bind 0.0.0.0:3306") || !strings.Contains(f.Proxy, in.AdminSocket) {
			t.Errorf("instance %s:\n%s", in.Host, f.Proxy)
		}
		golden.Check(t, "pair-"+in.Host+".keepalived.conf", []byte(f.Keepalived))
	}
	remote := func(addr, iface string) plan.Remote {
		return plan.Remote{Address: addr, Interface: iface, Network: netip.MustParsePrefix(addr + "/24"), Dir: "/srv/hd", MemBytes: 4 << 30}
	}
	f := plan.Facts{User: "root", GaleraLib: galeraLib, VirtualIPs: map[string]string{"lb": "10.0.0.100"}, Remote: map[string]plan.Remote{
		"db1": remote("10.0.0.11", "ens5"), "db2": remote("10.0.0.12", "ens5"), "db3": remote("10.0.0.13", "ens5"),
		"lb1": remote("10.0.0.101", "ens5"), "lb2": remote("10.0.0.102", "eth1"), "client": remote("10.0.0.201", "ens5")}}
	p = build(t, "", "clusters: [{name: db, kind: galera}]\nload_balancers: [{name: lb, cluster: db, replicas: 2}]\n", "pair", f)
	golden.Check(t, "pair-ssh-lb1.keepalived.conf", []byte(render(t, p)[0].Keepalived))
}

// With the lab's exporters, HAProxy serves its own metrics; without,
// no metrics frontend.
func TestRenderMetrics(t *testing.T) {
	s, err := spec.Preset("galera3")
	if err != nil {
		t.Fatal(err)
	}
	s.Monitoring = true
	p, err := plan.Build(s, "mon", "/h", rootFacts)
	if err != nil {
		t.Fatal(err)
	}
	if cfg := render(t, p)[0].Proxy; !strings.Contains(cfg, "bind "+p.LoadBalancers[0].Address+":8405") || !strings.Contains(cfg, "use-service prometheus-exporter") {
		t.Errorf("haproxy.cfg has no metrics frontend:\n%s", cfg)
	}
	s.Monitoring = false
	if p, err = plan.Build(s, "mon", "/h", rootFacts); err != nil {
		t.Fatal(err)
	}
	if cfg := render(t, p)[0].Proxy; strings.Contains(cfg, "8405") {
		t.Errorf("monitoring off, a metrics frontend:\n%s", cfg)
	}
}
