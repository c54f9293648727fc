package drill

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/chaos"
	"github.com/hadrill/hadrill/internal/consistency"
	"github.com/hadrill/hadrill/internal/drill/schedule"
	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/lb"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/server"
	"github.com/hadrill/hadrill/internal/spec"
	"github.com/hadrill/hadrill/internal/workload/workloadtest"
)

func TestRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Scenarios() {
		if seen[s.Name] || !strings.HasPrefix(s.Usage, s.Name) || s.Short == "" || s.targets == nil || s.inject == nil {
			t.Errorf("scenario %q: duplicate, or its usage, text, targets or fault missing", s.Name)
		}
		if s.faulted != nil && s.reformed == nil {
			t.Errorf("scenario %q: a scenario that takes members away says how many and when they re-formed", s.Name)
		}
		seen[s.Name] = true
		if got, ok := Lookup(s.Name); !ok || got != s {
			t.Errorf("Lookup(%q) = %v, %v", s.Name, got, ok)
		}
	}
	if _, ok := Lookup("mayhem"); ok {
		t.Error("an unknown drill was found")
	}
	if names() != "failover, partition, full-outage, rolling-restart, pause, crash-partition, drain, resync, flap, lb-failover, lb-crash, domain-outage, fault, chaos" {
		t.Errorf("order %s", names())
	}
}

// writeFile writes a file of the test's and returns its path.
func writeFile(t *testing.T, body string) string {
	p := filepath.Join(t.TempDir(), "schedule.json")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeLab is a lab for checking a drill's input; nothing may run on it.
type fakeLab struct{ workloadtest.Lab }

func (fakeLab) AppDB(string) (*sql.DB, error) { panic("app") }
func (f fakeLab) LB(name string) (*plan.LB, error) {
	if lb, ok := f.P.LB(name); ok {
		return lb, nil
	}
	return nil, hderr.User("--lb: unknown load balancer %q", name)
}
func (fakeLab) Inject(context.Context, chaos.Fault) error   { panic("fault") }
func (fakeLab) Heal(context.Context) error                  { panic("heal") }
func (fakeLab) Recover(context.Context, string) error       { panic("recover") }
func (fakeLab) Restart(context.Context, []string) error     { panic("restart") }
func (fakeLab) RecordFault(fault.Record) error              { panic("record") }
func (fakeLab) Drain(context.Context, []string, bool) error { panic("drain") }
func (fakeLab) Resync(context.Context, string) error        { panic("resync") }
func (fakeLab) LBWriter(context.Context, *plan.LB) (string, error) {
	return "", errors.New("no load balancer here")
}
func (fakeLab) LBHolder(_ context.Context, lb *plan.LB) (string, error) {
	return lb.Instances[len(lb.Instances)-1].Host, nil
}

func (fakeLab) LBInstances(context.Context, *plan.LB) []lb.Instance { panic("lb instances") }
func (fakeLab) Fenced() map[string]string                           { return nil }
func (fakeLab) Created() time.Time                                  { return time.Time{} }

func galera3(mode string) fakeLab {
	p := &plan.Plan{Lab: "t", Mode: mode,
		Clusters:      []plan.Cluster{{Name: "db", Kind: spec.KindGalera, Nodes: []string{"db1", "db2", "db3"}}},
		Nodes:         []plan.Node{{Name: "db1", Cluster: "db"}, {Name: "db2", Cluster: "db"}, {Name: "db3", Cluster: "db"}},
		LoadBalancers: []plan.LB{{Name: "lb", Cluster: "db"}},
		Hosts: []plan.Host{{Name: "db1", FaultDomain: "fd0"}, {Name: "db2", FaultDomain: "fd1"}, {Name: "db3", FaultDomain: "fd0"},
			{Name: "lb", FaultDomain: "fd0"}, {Name: "client", FaultDomain: "client"}},
		Client: plan.Client{Host: "client"}}
	return fakeLab{workloadtest.Lab{P: p}}
}

// async2 is a primary cluster (db1 primary, db2) behind a load balancer.
func async2(auto bool) fakeLab {
	l := galera3(plan.ModeNetns)
	l.P.Clusters[0] = plan.Cluster{Name: "db", Kind: spec.KindPrimary, Nodes: []string{"db1", "db2"}, Primary: "db1", AutoFailover: auto}
	l.P.Nodes = l.P.Nodes[:2]
	return l
}

// pair is galera3 behind a load balancer pair (lb1, lb2; lb2 holds the address).
func pair() fakeLab {
	l := galera3(plan.ModeNetns)
	l.P.LoadBalancers[0].VirtualIP = true
	l.P.LoadBalancers[0].Instances = []plan.LBInstance{{Host: "lb1"}, {Host: "lb2"}}
	return l
}

func TestPrepareRefusesBadInput(t *testing.T) {
	ok := Options{Rate: 100, Before: time.Second, After: time.Second, Hold: 30 * time.Second, Timeout: time.Minute}
	for _, c := range []struct {
		name string
		lab  fakeLab
		edit func(*Options)
		want []string
	}{
		{"unknown drill and bad rate at once", galera3(plan.ModeNetns), func(o *Options) { o.Scenario, o.Rate = "mayhem", 0 },
			[]string{`unknown drill "mayhem" (drills: failover, partition, full-outage, rolling-restart, pause, crash-partition, drain, resync, flap, lb-failover, lb-crash, domain-outage, fault, chaos)`, "--rate"}},
		{"durations", galera3(plan.ModeNetns), func(o *Options) { o.Scenario, o.Hold, o.Timeout = Failover, 0, 2*time.Hour },
			[]string{"--hold", "--timeout"}},
		{"targets for a whole-cluster drill", galera3(plan.ModeNetns), func(o *Options) { o.Scenario, o.Targets = FullOutage, []string{"db1"} },
			[]string{"full-outage drill takes at most 0 targets"}},
		{"failover of a stranger", galera3(plan.ModeNetns), func(o *Options) { o.Scenario, o.Targets = Failover, []string{"db7"} },
			[]string{`"db7" is not a node of cluster db`}},
		{"partition rootless", galera3(plan.ModeRootless), func(o *Options) { o.Scenario, o.Targets = Partition, []string{"db1"} },
			[]string{"network namespaces"}},
		{"pause of every node and a stranger", galera3(plan.ModeNetns), func(o *Options) { o.Scenario, o.Targets = Pause, []string{"db1", "db2", "db3", "db9"} },
			[]string{`NODE: "db9" is not a node of cluster db`, "NODE: pausing all 3 members of cluster db leaves nothing to take writes; use full-outage"}},
		{"crash-partition rootless", galera3(plan.ModeRootless), func(o *Options) { o.Scenario = CrashPartition },
			[]string{"drill crash-partition: a network fault", "network namespaces"}},
		{"drain of a stranger", galera3(plan.ModeNetns), func(o *Options) { o.Scenario, o.Targets = Drain, []string{"db7"} },
			[]string{`NODE: "db7" is not a node of cluster db`}},
		{"targets for crash-partition", galera3(plan.ModeNetns), func(o *Options) { o.Scenario, o.Targets = CrashPartition, []string{"db1"} },
			[]string{"crash-partition drill takes at most 0 targets"}},
		{"unknown lb", galera3(plan.ModeNetns), func(o *Options) { o.Scenario, o.LB = RollingRestart, "lb9" },
			[]string{`unknown load balancer "lb9"`}},
		{"lb failover of a single load balancer", galera3(plan.ModeNetns), func(o *Options) { o.Scenario = LBFailover },
			[]string{"load balancer lb runs on one host: nothing takes over when it dies (give it replicas: 2)"}},
		{"an unknown fault domain", galera3(plan.ModeNetns), func(o *Options) { o.Scenario, o.Targets = DomainOutage, []string{"rack9"} },
			[]string{"DOMAIN: name a fault domain (domains: fd0, fd1; the client's host is the observer)"}},
		{"a fault drill without its fault", galera3(plan.ModeNetns), func(o *Options) { o.Scenario = FaultDrill },
			[]string{"FAULT: give the fault after --"}},
		{"a primary cluster's rolling restart", async2(true), func(o *Options) { o.Scenario = RollingRestart },
			[]string{"SCENARIO: load balancer lb fronts primary cluster db; the rolling-restart drill needs a Galera cluster (primary clusters: failover, partition, pause, flap, lb-failover, lb-crash, fault, chaos)"}},
		{"failover of a primary cluster failing over by hand", async2(false), func(o *Options) { o.Scenario, o.Targets = Failover, []string{"db1"} },
			[]string{"cluster db fails over by hand (failover: manual)", "set failover: auto"}},
		{"chaos: bad faults and times with a bad rate, at once", galera3(plan.ModeNetns), func(o *Options) {
			o.Scenario, o.Rate, o.Hold = ChaosDrill, 0, 0
			o.Chaos = &Chaos{Params: schedule.Params{Faults: []string{"nuke"}, Duration: 0, Hold: time.Second, Interval: time.Second}}
		}, []string{"--rate", `--faults: unknown fault "nuke"`, "--duration: expected 1s to 24h"}},
		{"chaos: a replay with a seed, and targets", galera3(plan.ModeNetns), func(o *Options) {
			o.Scenario, o.Targets = ChaosDrill, []string{"db1"}
			o.Chaos = &Chaos{Replay: "RUN", File: "s.json", SeedGiven: true}
		}, []string{"--replay and --schedule: give one schedule", "--seed, --faults, --duration and --interval draw a schedule; a replay runs the stored one"}},
		{"chaos: targets", galera3(plan.ModeNetns), func(o *Options) {
			o.Scenario, o.Targets = ChaosDrill, []string{"db1"}
			o.Chaos = &Chaos{Params: schedule.Params{Faults: schedule.Default, Duration: time.Minute, Hold: time.Second, Interval: time.Second}}
		}, []string{"TARGET: chaos drill takes at most 0 targets, got [db1]"}},
		{"chaos: a schedule of another lab", galera3(plan.ModeNetns), func(o *Options) {
			o.Scenario, o.Chaos = ChaosDrill, &Chaos{File: writeFile(t, `{"steps": [{"at_s": 0, "hold_s": 2, "events": [{"kind": "kill", "targets": ["db7"]}]}]}`)}
		}, []string{"the schedule names db7, not nodes of this cluster or links of this lab (db1, db2, db3): a replay needs a lab of the same shape"}},
		{"lb crash of a stranger", pair(), func(o *Options) { o.Scenario, o.Targets = LBCrash, []string{"db1"} },
			[]string{`HOST: "db1" is not a host of load balancer lb (hosts: lb1, lb2, or active)`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := ok
			c.edit(&o)
			_, err := prepare(c.lab, o)
			if !hderr.IsUser(err) {
				t.Fatalf("want a user error, got %v", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q missing from %v", w, err)
				}
			}
		})
	}
	d, err := prepare(galera3(plan.ModeNetns), Options{Scenario: ChaosDrill, Rate: 10, Timeout: time.Second,
		Chaos: &Chaos{Params: schedule.Params{Seed: 9, Faults: schedule.Default, Duration: time.Minute, Hold: 5 * time.Second, Interval: time.Second}}})
	if err != nil || d.sched == nil || d.sched.Seed != 9 || len(d.sched.Steps) == 0 || strings.Join(d.res.Targets, ",") != "db1,db2,db3" {
		t.Fatalf("chaos draws its schedule over the cluster: %v %v", d, err)
	}
	d, err = prepare(galera3(plan.ModeNetns), Options{Scenario: FullOutage, Rate: 10, Hold: time.Second, Timeout: time.Second})
	if err != nil || strings.Join(d.res.Targets, ",") != "db1,db2,db3" {
		t.Fatalf("full outage targets the whole cluster: %v %v", d, err)
	}
	d, err = prepare(galera3(plan.ModeNetns), Options{Scenario: CrashPartition, Rate: 10, Hold: time.Second, Timeout: time.Second})
	if err != nil || strings.Join(d.res.Targets, ",") != "db1,db2,db3" || d.sc.Reforms() {
		t.Fatalf("crash-partition goes round the whole cluster and has no re-formed time of its own: %v %v", d, err)
	}
	d, err = prepare(galera3(plan.ModeNetns), Options{Scenario: Pause, Targets: []string{"db2"}, Rate: 10, Hold: time.Second, Timeout: time.Second})
	if err != nil || strings.Join(d.res.Targets, ",") != "db2" || d.sc.faulted(d) != 1 {
		t.Fatalf("pause of one node: %v %v", d, err)
	}
	d, err = prepare(galera3(plan.ModeNetns), Options{Scenario: DomainOutage, Targets: []string{"fd0"}, Rate: 10, Hold: time.Second, Timeout: time.Second})
	if err != nil || strings.Join(d.res.Targets, ",") != "db1,db3,lb" || d.sc.faulted(d) != 2 {
		t.Fatalf("a domain outage crashes the domain's hosts: %v %v", d, err)
	}
	d, err = prepare(async2(true), Options{Scenario: Failover, Targets: []string{"db1"}, Rate: 10, Hold: time.Second, Timeout: time.Second})
	if err != nil || strings.Join(d.res.Targets, ",") != "db1" {
		t.Fatalf("failover of a primary cluster with failover: auto: %v %v", d, err)
	}
	d, err = prepare(pair(), Options{Scenario: LBFailover, Rate: 10, Hold: time.Second, Timeout: time.Second})
	if err != nil || strings.Join(d.res.Targets, ",") != "lb2" {
		t.Fatalf("lb failover takes down the host holding the address: %v %v", d, err)
	}
}

// brokenPair is a pair whose standby (lb1) has lost its keepalived: the
// address never moves off lb2, whatever happens to lb2's proxy.
type brokenPair struct {
	fakeLab
	healed *bool
}

func (brokenPair) Inject(context.Context, chaos.Fault) error          { return nil }
func (b brokenPair) Heal(context.Context) error                       { *b.healed = true; return nil }
func (brokenPair) LBHolder(context.Context, *plan.LB) (string, error) { return "lb2", nil }
func (brokenPair) LBInstances(context.Context, *plan.LB) []lb.Instance {
	no, yes := false, true
	return []lb.Instance{{Host: "lb1", ProxyUp: true, Keepalived: &no}, {Host: "lb2", ProxyUp: true, Keepalived: &yes, Holder: true}}
}

// TestLBFailoverWithoutTakeover: a pair whose standby cannot take over
// fails the drill (no takeover within the bound), and what the repair
// brought back that the drill had not broken is reported.
func TestLBFailoverWithoutTakeover(t *testing.T) {
	healed := false
	l := brokenPair{pair(), &healed}
	d, err := prepare(l, Options{Scenario: LBFailover, Rate: 10, Hold: time.Second, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	d.takeover, d.o.Hold, d.res.RunID, d.t = 100*time.Millisecond, 50*time.Millisecond, "r", &traffic{}
	if _, err := lbDown(context.Background(), d, false); err != nil {
		t.Fatal(err)
	}
	if len(d.problems) != 1 || !strings.Contains(d.problems[0], "no takeover: no other host of load balancer lb took its virtual IP") ||
		!strings.Contains(d.problems[0], "lb1's keepalived before the fault") {
		t.Errorf("problems %q", d.problems)
	}
	if d.res.TakeoverS != nil || !healed || len(d.res.Repaired) != 1 || !strings.Contains(d.res.Repaired[0], "lb1's keepalived (down before the drill) was started again") {
		t.Errorf("takeover %v, healed %v, repaired %q", d.res.TakeoverS, healed, d.res.Repaired)
	}
}

// recreated is a lab made again under the name of the one a run drilled.
type recreated struct {
	fakeLab
	home string
	made time.Time
}

func (r recreated) Home() string       { return r.home }
func (r recreated) Created() time.Time { return r.made }

// TestAuditOfAnEarlierLab: a run drilled on an earlier lab of the same name
// is not audited against the new one (its writes were never there).
func TestAuditOfAnEarlierLab(t *testing.T) {
	home := t.TempDir()
	started := time.Now().Add(-time.Hour).UTC()
	b, _ := json.Marshal(Result{Cluster: "db"})
	run := &results.Run{ID: "20261125-120000-abcd", Kind: results.Drill, Lab: "t", Started: started, Results: b}
	if err := results.Save(home, run); err != nil {
		t.Fatal(err)
	}
	l := recreated{galera3(plan.ModeNetns), home, time.Now()}
	_, err := Audit(context.Background(), l, run.ID)
	if !hderr.IsUser(err) || !strings.Contains(err.Error(), "on an earlier lab named t") {
		t.Errorf("audit of an earlier lab's run: %v", err)
	}
}

// The load balancer's writer during a state transfer: a node short of
// Synced before it went down is leaving (logged), after it came back
// joining (a failure) when a sample taken once the load balancer was seen
// sending to it says so; the first poll of a new writer, whose sample was
// taken before, cannot tell (the node may have turned Synced, letting the
// load balancer in, in between); a donor is timed against its bound.
func TestRoutingObserve(t *testing.T) {
	for _, c := range []struct {
		name    string
		joining bool // the joiner still joining at the poll after the load balancer came to it
	}{{"a misroute", true}, {"a sample older than the routing", false}} {
		r := newRouting()
		tick := 100 * time.Millisecond
		t0 := time.Unix(1000, 0)
		polls := []struct {
			writer   string
			db1, db2 server.State
		}{
			{"db1", server.Synced, server.Synced},
			{"db1", "Initialized", server.Synced}, // leaving: shut down cleanly
			{"db1", "Initialized", server.Synced},
			{"db2", server.Down, server.Synced},
			{"db2", "Joiner", "Donor/Desynced"},
			{"db1", "Initialized", server.Synced}, // db1 the writer again; its state sampled before
			{"db1", "Initialized", server.Synced}, // sampled after: joining, a failure
			{"db1", server.Synced, server.Synced},
		}
		if !c.joining {
			polls[6].db1 = server.Synced
		}
		for i, p := range polls {
			at := t0.Add(time.Duration(i) * tick)
			r.observe(p.writer, at, Sample{At: at.Add(-tick / 2), Nodes: map[string]NodeSample{"db1": {State: p.db1}, "db2": {State: p.db2}}}, tick)
		}
		want := time.Duration(0)
		if c.joining {
			want = tick
		}
		if r.toLeaving["db1"] != 2*tick || r.toJoiner["db1"] != want || r.toDonor["db2"] != tick || (c.joining && r.state["db1"] != "Initialized") {
			t.Errorf("%s: leaving %v, joining %v (%v), donor %v", c.name, r.toLeaving, r.toJoiner, r.state, r.toDonor)
		}
	}
}

// A writer the load balancer never left: stopped cleanly and started
// again within its checks' interval, it is seen back (Initialized) while
// still the writer. That is the checks' delay (unseen, timed), not a
// return to a joiner; the load balancer coming back to it, or serving
// writes on no node in between, is a return.
func TestRoutingUnseenRestart(t *testing.T) {
	for _, c := range []struct {
		name    string
		between string // the writer at the poll after the node went down
		unseen  int    // polls
		joining int
	}{{"never left", "db1", 2, 0}, {"left for db2", "db2", 0, 1}, {"no node in between", "", 0, 1}} {
		r := newRouting()
		tick := 100 * time.Millisecond
		t0 := time.Unix(1000, 0)
		polls := []struct {
			writer string
			db1    server.State
		}{
			{"db1", server.Synced},
			{"db1", "Initialized"}, // leaving
			{"db1", server.Down},
			{c.between, server.Down},
			{"db1", "Initialized"}, // started again; its sample older than a return
			{"db1", "Initialized"},
			{"db1", server.Synced},
		}
		for i, p := range polls {
			at := t0.Add(time.Duration(i) * tick)
			r.observe(p.writer, at, Sample{At: at.Add(-tick / 2), Nodes: map[string]NodeSample{"db1": {State: p.db1}, "db2": {State: server.Synced}}}, tick)
		}
		if r.toLeaving["db1"] != tick || r.unseen["db1"] != time.Duration(c.unseen)*tick || r.toJoiner["db1"] != time.Duration(c.joining)*tick {
			t.Errorf("%s: leaving %v, unseen %v, joining %v", c.name, r.toLeaving, r.unseen, r.toJoiner)
		}
		if got := r.verdict(func(string, ...any) {}); (len(got) > 0) != (c.joining > 0) {
			t.Errorf("%s: verdict %q", c.name, got)
		}
	}
	// A node back while still the writer past the bound fails the drill
	// as a donor kept past it does.
	r := newRouting()
	r.unseen["db1"], r.state["db1"] = TransferRouteBound+100*time.Millisecond, "Initialized"
	r.toDonor["db2"] = TransferRouteBound
	if got := r.verdict(func(string, ...any) {}); len(got) != 1 || !strings.Contains(got[0], "kept sending writes to db1 for 3.10s") {
		t.Errorf("unseen past the bound: %q", got)
	}
}

// TestLostAppendFailsTheDrill: an acknowledged append no read saw, the
// final reads included, fails a drill checked as read committed (which
// does not forbid it as an anomaly: a read may be stale); without a final
// read that succeeded it may be a lagging node's stale read, and is not
// called lost.
func TestLostAppendFailsTheDrill(t *testing.T) {
	ops := []consistency.Op{
		{Process: 1, Type: "invoke", Value: []consistency.Mop{{F: "append", Key: 4, Value: 7}}},
		{Process: 1, Type: "ok", Value: []consistency.Mop{{F: "append", Key: 4, Value: 7}}},
		{Process: 2, Type: "invoke", Value: []consistency.Mop{{F: "r", Key: 4}}},
		{Process: 2, Type: "ok", Value: []consistency.Mop{{F: "r", Key: 4, List: []int{}, Read: true}}},
	}
	for i := range ops {
		ops[i].Index, ops[i].Time, ops[i].F = i, int64(i+1)*1e6, "txn"
	}
	for _, finalOK := range []int{1, 0} {
		l := recreated{fakeLab: galera3(""), home: t.TempDir()}
		d := &drill{o: Options{Workload: "append", Model: "read-committed"}, res: &Result{}}
		d.checkAppends(l, "r1", ops, time.Now(), finalOK)
		said := strings.Join(d.problems, "\n")
		if lost := strings.Contains(said, "acknowledged writes lost (lost: 1 append)"); lost != (finalOK > 0) || d.res.Consistency == nil || d.res.Consistency.Count("lost") != 1 {
			t.Errorf("final reads %d: problems %q", finalOK, said)
		}
	}
}
