package lab

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/chaos"
	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/lb"
	"github.com/hadrill/hadrill/internal/netem"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/server"
	"github.com/hadrill/hadrill/internal/spec"
	"github.com/hadrill/hadrill/internal/state"
	"github.com/hadrill/hadrill/internal/status"
)

// fakeProvider runs no host: each host records the commands it was given
// and the daemons it was told to kill, in order; a daemon runs until it
// is killed.
type fakeProvider struct {
	mu      sync.Mutex
	did     []string
	running map[string]bool // daemon name → runs
}

func (f *fakeProvider) Claim() error                   { return nil }
func (f *fakeProvider) Setup(context.Context) error    { return nil }
func (f *fakeProvider) Teardown(context.Context) error { return nil }
func (f *fakeProvider) Kind() string                   { return "fake" }
func (f *fakeProvider) Host(name string) host.Host     { return fakeHost{name: name, f: f} }
func (f *fakeProvider) Dial(context.Context, string, string, string) (net.Conn, error) {
	return nil, errors.New("no network here")
}

func (f *fakeProvider) record(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.did = append(f.did, s)
}

// fakeHost is one host of a fakeProvider; what it does not fake it does
// not have (a nil host.Host: a call panics).
type fakeHost struct {
	host.Host
	name string
	f    *fakeProvider
}

func (h fakeHost) Name() string { return h.name }
func (h fakeHost) Exe() string  { return "/bin/hadrill" }
func (h fakeHost) Run(_ context.Context, argv []string, _ io.Reader) ([]byte, error) {
	h.f.record(h.name + ": " + strings.Join(argv, " "))
	return nil, nil
}
func (h fakeHost) Kill(_ context.Context, d host.Daemon) error {
	h.f.record(h.name + ": kill " + d.Name)
	h.f.mu.Lock()
	defer h.f.mu.Unlock()
	delete(h.f.running, d.Name)
	return nil
}
func (h fakeHost) Stop(_ context.Context, d host.Daemon, _ time.Duration) error {
	h.f.record(h.name + ": stop " + d.Name)
	h.f.mu.Lock()
	defer h.f.mu.Unlock()
	delete(h.f.running, d.Name)
	return nil
}
func (h fakeHost) Process(_ context.Context, d host.Daemon) (host.Process, error) {
	h.f.mu.Lock()
	defer h.f.mu.Unlock()
	if h.f.running[d.Name] {
		return host.Process{Pid: 4242}, nil
	}
	return host.Process{}, nil
}

// fakeLab is a lab of the plan over a fakeProvider, its state in a
// temporary home.
func fakeLab(t *testing.T, p *plan.Plan, running ...string) (*Lab, *fakeProvider) {
	prov := &fakeProvider{running: map[string]bool{}}
	for _, r := range running {
		prov.running[r] = true
	}
	home := t.TempDir()
	p.Dir, p.FaultLog = home+"/labs/"+p.Lab, home+"/faults.jsonl"
	l := &Lab{home: home, p: p, State: &state.Lab{Plan: p, Status: state.Running, Created: time.Now().Add(-time.Hour)}, Prov: prov, Log: io.Discard}
	l.hosts, l.servers = hosts{prov}, server.OnHosts{Hosts: prov.Host}
	l.wan = netem.New(p, l.hosts, "/bin/hadrill", io.Discard)
	return l, prov
}

// crashPlan: a node, a load balancer pair's host, an arbitrator and the
// client, each a namespace with a NIC.
func crashPlan() *plan.Plan {
	nic := []plan.NIC{{Name: "eth0"}}
	return &plan.Plan{Lab: "cr", Mode: plan.ModeNetns, Client: plan.Client{Host: "client"},
		Hosts:    []plan.Host{{Name: "db1", NICs: nic}, {Name: "lb1", NICs: nic}, {Name: "garb", NICs: nic}, {Name: "client", NICs: nic}},
		Nodes:    []plan.Node{{Name: "db1", Host: "db1", Cluster: "db"}},
		Clusters: []plan.Cluster{{Name: "db", Nodes: []string{"db1"}, Arbitrator: &plan.Arbitrator{Name: "garb"}}},
		LoadBalancers: []plan.LB{{Name: "lb", Address: "198.18.0.100", VirtualIP: true,
			Instances: []plan.LBInstance{{Host: "lb1", Keepalived: &plan.Keepalived{Interface: "eth0"}}}}},
		Monitoring: []plan.Exporter{{Job: plan.JobNode, Instance: "db1", Host: "db1", Argv: []string{"prometheus-node-exporter"}},
			{Job: plan.JobProxy, Instance: "lb1", Host: "lb1"}, // served by the proxy: no daemon of its own
			{Job: plan.JobNode, Instance: "client", Host: "client", Argv: []string{"prometheus-node-exporter"}}},
	}
}

// A crash through the lab: every host off the network first, then every
// daemon each runs killed (a node's server and agent; a load balancer
// host's keepalived and proxy; an arbitrator's garbd; their exporters), and the lab's
// state saved (no server runs: stopped).
func TestCrashKillsEveryDaemonOfAHost(t *testing.T) {
	l, prov := fakeLab(t, crashPlan(), "db1 mariadbd")
	if err := l.Inject(context.Background(), chaos.Crash{"db1", "lb1", "garb"}); err != nil {
		t.Fatal(err)
	}
	var downs, kills []string
	for _, d := range prov.did {
		switch {
		case strings.Contains(d, "link set"):
			if len(kills) > 0 {
				t.Errorf("%q after a kill: a crashed host leaves the network first", d)
			}
			downs = append(downs, d)
		case strings.Contains(d, ": kill "):
			kills = append(kills, d)
		}
	}
	if got, want := strings.Join(downs, "; "), "db1: ip link set eth0 down; lb1: ip link set eth0 down; garb: ip link set eth0 down"; got != want {
		t.Errorf("NICs:\n%s\nwant\n%s", got, want)
	}
	if got, want := strings.Join(kills, "; "), "db1: kill db1 mariadbd; db1: kill db1 agent; db1: kill db1 node_exporter; lb1: kill lb1 keepalived; lb1: kill lb1 "+lb.KindOf(nil).Name()+"; garb: kill garb garbd"; got != want {
		t.Errorf("kills:\n%s\nwant\n%s", got, want)
	}
	if l.State.Status != state.Stopped {
		t.Errorf("state %s after every server crashed", l.State.Status)
	}
	recs := fault.Log(l.p.FaultLog).Between(l.State.Created, l.State.Created.AddDate(100, 0, 0))
	if len(recs) != 1 || recs[0].Label() != "crash db1,lb1,garb" {
		t.Errorf("fault log %+v", recs)
	}
}

// The client is the observer: a crash of it is refused and nothing is
// done.
func TestCrashRefusesTheClient(t *testing.T) {
	l, prov := fakeLab(t, crashPlan())
	err := l.Inject(context.Background(), chaos.Crash{"client"})
	if err == nil || !strings.Contains(err.Error(), `"client" is not a host that can crash`) || len(prov.did) != 0 {
		t.Errorf("err %v, did %v", err, prov.did)
	}
}

// galeraPlan: a Galera cluster of three, each node on its host.
func galeraPlan() *plan.Plan {
	p := &plan.Plan{Lab: "gl", Mode: plan.ModeNetns, Clusters: []plan.Cluster{{Name: "db", Kind: spec.KindGalera, Nodes: []string{"db1", "db2", "db3"}}}}
	for _, n := range []string{"db1", "db2", "db3"} {
		p.Hosts = append(p.Hosts, plan.Host{Name: n})
		p.Nodes = append(p.Nodes, plan.Node{Name: n, Host: n, Cluster: "db", Kind: spec.KindGalera})
	}
	return p
}

// Stopping nodes stops their servers cleanly and records what still runs;
// stopping the last one records the lab stopped.
func TestStop(t *testing.T) {
	l, prov := fakeLab(t, galeraPlan(), "db1 mariadbd", "db2 mariadbd", "db3 mariadbd")
	if err := l.Stop(context.Background(), []string{"db2"}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(prov.did, "; "); got != "db2: stop db2 mariadbd" || l.State.Status != state.Running {
		t.Errorf("did %s, state %s", got, l.State.Status)
	}
	if err := l.Stop(context.Background(), []string{"db9"}); err == nil || !strings.Contains(err.Error(), "db9") {
		t.Errorf("an unknown node: %v", err)
	}
	if err := l.Stop(context.Background(), []string{"db1", "db3"}); err != nil || l.State.Status != state.Stopped {
		t.Errorf("every node stopped: %v, state %s", err, l.State.Status)
	}
}

// A Galera node never bootstraps a second cluster by itself: starting one
// node of a cluster with no running member is refused (start --all starts
// the cluster from its most advanced node), and nothing is started.
func TestStartRefusesALoneGaleraNode(t *testing.T) {
	l, prov := fakeLab(t, galeraPlan())
	err := l.Start(context.Background(), []string{"db2"})
	if err == nil || !strings.Contains(err.Error(), "no other node of cluster db is running") || !strings.Contains(err.Error(), "start --all") || len(prov.did) != 0 {
		t.Errorf("err %v, did %v", err, prov.did)
	}
}

// A lab stopped with its data kept: the keeper first (it would fail a
// primary over to a node about to stop), the servers stopped cleanly, then
// every other daemon of every host killed, servers never killed, and the
// lab recorded stopped.
func TestDownKeepingData(t *testing.T) {
	l, prov := fakeLab(t, crashPlan(), "db1 mariadbd")
	if err := l.destroy(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range prov.did {
		if !strings.Contains(d, " ip ") { // the virtual IP looked for on the pair's host
			got = append(got, d)
		}
	}
	want := "db1: stop db1 mariadbd; db1: kill db1 agent; db1: kill db1 node_exporter; lb1: kill lb1 keepalived; lb1: kill lb1 " + lb.KindOf(nil).Name() +
		"; garb: kill garb garbd; client: kill client node_exporter"
	if strings.Join(got, "; ") != want {
		t.Errorf("down:\n%s\nwant\n%s", strings.Join(got, "; "), want)
	}
	if l.State.Status != state.Stopped {
		t.Errorf("state %s after down keeping the data", l.State.Status)
	}
}

// A start starts every host's daemons beside the servers from the one
// list, role by role: the arbitrator joins the running nodes, the agents
// answer before the proxies check them, the proxies before keepalived
// (whose check asks its proxy), then the exporters; never a server (the
// nodes' own start orders a cluster's boot).
func TestStartOrder(t *testing.T) {
	l, _ := fakeLab(t, crashPlan())
	var got []string
	for _, d := range l.startSequence() {
		got = append(got, d.Name)
	}
	want := "garb garbd; db1 agent; lb1 " + lb.KindOf(nil).Name() + "; lb1 keepalived; db1 node_exporter; client node_exporter"
	if strings.Join(got, "; ") != want {
		t.Errorf("start:\n%s\nwant\n%s", strings.Join(got, "; "), want)
	}
}

// A load balancer host's proxy killed alone, or with its keepalived (and
// the virtual IP it holds) as when the whole host dies: the same list a
// crash reads.
func TestKillBalancer(t *testing.T) {
	l, prov := fakeLab(t, crashPlan())
	proxy := "lb1: kill lb1 " + lb.KindOf(nil).Name()
	if err := (chaosLab{l}).KillBalancer(context.Background(), "lb1", false); err != nil || strings.Join(prov.did, "; ") != proxy {
		t.Errorf("the proxy alone: %v, did %v", err, prov.did)
	}
	prov.did = nil
	if err := (chaosLab{l}).KillBalancer(context.Background(), "lb1", true); err != nil ||
		strings.Join(prov.did, "; ") != "lb1: kill lb1 keepalived; lb1: ip -o -4 addr show dev eth0; "+proxy {
		t.Errorf("the whole host: %v, did %v", err, prov.did)
	}
}

// Status says of every host's daemons whether each runs, from the same
// list: a crashed host's agent and exporter are down beside its server.
func TestStatusOfDaemons(t *testing.T) {
	proxy := "lb1 " + lb.KindOf(nil).Name()
	l, _ := fakeLab(t, crashPlan(), "lb1 keepalived", proxy, "garb garbd", "client node_exporter")
	var got []string
	for _, d := range l.hostDaemons(context.Background()) {
		got = append(got, d.Host+" "+d.Role+" "+d.State)
	}
	want := "db1 server down; db1 agent down; db1 exporter down; lb1 keepalived running; lb1 proxy running; garb arbitrator running; client exporter running"
	if strings.Join(got, "; ") != want {
		t.Errorf("daemons:\n%s\nwant\n%s", strings.Join(got, "; "), want)
	}
	st := status.Status{Daemons: l.hostDaemons(context.Background())}
	if down := strings.Join(st.DaemonsDown(), ", "); down != "db1 agent, db1 node_exporter" {
		t.Errorf("down beside the servers: %s", down)
	}
}
