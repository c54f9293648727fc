package drill

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/consistency"
	"github.com/hadrill/hadrill/internal/drill/schedule"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/lb"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/spec"
	"github.com/hadrill/hadrill/internal/workload"
)

// MaxWait bounds every duration a drill is given: a fault held longer than
// an hour is not a drill.
const MaxWait = time.Hour

// Options say which drill to run and how.
type Options struct {
	Scenario string
	Targets  []string      // failover, partition: nodes (or, for partition, hosts/regions); "active" = the LB's writer
	Rate     int           // writes per second (reads: half as many)
	Before   time.Duration // traffic before the fault
	After    time.Duration // traffic after the cluster is whole again
	Hold     time.Duration // failover, partition: how long the fault stays if writes do not resume by themselves
	Crash    bool          // failover: crash the node's host (every process, NICs down) instead of kill -9 of its server
	Timeout  time.Duration // for the cluster to be whole again after recovery
	LB       string        // which load balancer (default: the first)
	// Workload append adds list-append transactions from clients on every
	// node of the cluster, bank transfers between accounts, their history
	// checked against Model beside the acknowledged-write audit ("" or
	// acked: the audit alone).
	Workload string
	Model    string
	// ReadTarget sends the history workload's read-only transactions
	// apart from its writes (workload.ResolveReads), resolved when the
	// workload starts.
	ReadTarget string
	// Fault is the fault drill's fault (the CLI parses it as `hadrill
	// fault` does).
	Fault *Injection
	// Chaos is the chaos drill's schedule: drawn, or one to run again.
	Chaos   *Chaos
	Command []string
	Log     io.Writer
}

// The workloads a drill runs beyond the history workloads: its
// acknowledged writes alone, or TPC-C beside them.
const (
	AckedWorkload = "acked"
	TPCCWorkload  = "tpcc"
)

// Workloads a drill may add to its acknowledged writes.
var Workloads = append(append([]string{AckedWorkload}, workload.HistoryWorkloads...), TPCCWorkload)

// TPC-C under a drill: one warehouse, two clients (light enough that a
// lab carries the drill's own traffic beside it).
const (
	tpccWarehouses = 1
	tpccClients    = 2
)

// Result is what a drill found; it is the run's results in the store.
type Result struct {
	RunID    string   `json:"run_id"`
	Scenario string   `json:"scenario"`
	Cluster  string   `json:"cluster"`
	Profile  string   `json:"profile"`
	Targets  []string `json:"targets"`
	Crash    bool     `json:"crash,omitempty"` // the targets' hosts crashed (every process, NICs down)
	// FaultAt is when the fault was injected (zero: it was not).
	FaultAt      time.Time `json:"fault_at,omitzero"`
	Fault        string    `json:"fault,omitempty"` // the fault drill's fault, as `hadrill fault` takes it
	WritesPerS   int       `json:"writes_per_s"`
	Writes       int       `json:"writes"`
	WritesAcked  int       `json:"writes_acked"`
	WritesFailed int       `json:"writes_failed"`
	Reads        int       `json:"reads"`
	ReadsFailed  int       `json:"reads_failed"`
	Gap          Gap       `json:"client_gap"`
	WritesBackS  *float64  `json:"writes_back_s"`        // fault → the acknowledgement that ended the first pause after it (WritesBack)
	ReformedS    *float64  `json:"reformed_s,omitempty"` // fault → a primary component without the faulted nodes (full outage: any primary component; a primary cluster: another node takes writes)
	SyncedS      *float64  `json:"synced_s"`             // fault → every node Synced in one primary component again (a primary cluster: one writer, every other node replicating from it or fenced)
	// TakeoverS: a load balancer pair's drill, fault → the other host
	// holding the virtual IP (nil: it never did within LBTakeover).
	TakeoverS *float64 `json:"takeover_s,omitempty"`
	// Repaired is what the drill's repair brought back that the drill had
	// not broken (a standby's keepalived found dead, say): it was broken
	// before the drill and the drill's result carries it.
	Repaired []string `json:"repaired,omitempty"`
	// Interventions are what the drill had to do, beyond undoing its fault,
	// for the cluster to recover (a DBA's step: a quorum given back).
	Interventions []string `json:"interventions,omitempty"`
	// Reversals are the times a Galera member left its cluster because
	// the primary component it was rejoining had applied fewer write sets
	// than it had (Galera: "Reversing history … Data loss is possible"),
	// from the members' error logs: whether what only it had applied was
	// acknowledged work, the audit and the history say.
	Reversals []string `json:"reversals,omitempty"`
	// SemiSyncFallbacks are the times a semi-sync primary went on
	// committing without a replica's acknowledgement during the drill
	// (node, from when to when, from its error log): what it acknowledged
	// then was on it alone, the one way a semi-sync failover loses an
	// acknowledged commit.
	SemiSyncFallbacks []string   `json:"semi_sync_fallbacks,omitempty"`
	Codes             []CodeSpan `json:"error_codes"`
	// Phases are the writes before the fault, during it (until whole
	// again) and after: rate, failures, latency; what the fault cost the
	// clients beyond the gap (a donor's desync, a WAN's round trips).
	Phases []Phase `json:"phases,omitempty"`
	// Balancer is what the load balancer logged from a second before the
	// fault to the end: the servers it marked down (why, and the sessions
	// it shut) and took back, when its writes had no server.
	Balancer        *BalancerLog                 `json:"load_balancer,omitempty"`
	Audit           []NodeAudit                  `json:"audit"`                      // per node: verified, missing or unverified
	Lost            map[string][]int64           `json:"lost_acked_writes"`          // node → acknowledged ids it was read and found to lack
	LostCount       int                          `json:"lost_count"`                 // acknowledged writes missing from at least one node, each counted once
	Checksums       map[string]map[string]string `json:"checksums"`                  // node → table → CHECKSUM TABLE (nodes that were read)
	ChecksumsUnread map[string]string            `json:"checksums_unread,omitempty"` // node → why its checksums could not be read
	ChecksumsAgree  bool                         `json:"checksums_agree"`            // every node read, and all the same
	// Fenced: a primary cluster's nodes kept out of replication at the end
	// (a former primary holding transactions the new primary never
	// received: node → what); their checksums are not compared.
	Fenced map[string]string `json:"fenced,omitempty"`
	// Consistency is the history workload's history checked (with
	// --workload append or bank), stored as the run's history.jsonl.
	Consistency *consistency.Result `json:"consistency,omitempty"`
	Workload    string              `json:"workload,omitempty"` // the history workload beside the audit (append, bank)
	// TPCC is TPC-C's traffic under the drill (--workload tpcc) and its
	// consistency conditions checked once the cluster was whole again.
	TPCC *workload.TPCCUnderFault `json:"tpcc,omitempty"`
	// FirstAnomaly is the history's first anomaly placed on the fault
	// timeline (the first forbidden one, when any is).
	FirstAnomaly *Placed  `json:"first_anomaly,omitempty"`
	Interrupted  bool     `json:"interrupted"` // a signal ended the drill early; what it broke was undone
	Verdict      string   `json:"verdict"`     // passed, lost, failed, unverified or interrupted
	Problems     []string `json:"problems,omitempty"`
	Passed       bool     `json:"passed"`
	// Capacity is how the lab carried the traffic before the fault (a
	// drill refuses to inject it into traffic the lab cannot carry).
	Capacity *Capacity `json:"capacity,omitempty"`
	// Schedule is the chaos drill's schedule (also the run's
	// schedule.json), Applied its steps as applied.
	Schedule *schedule.Schedule `json:"schedule,omitempty"`
	Applied  []Applied          `json:"applied,omitempty"`
}

// BalancerLog is a load balancer's events during a drill.
type BalancerLog struct {
	Name   string     `json:"name"`
	Events []lb.Event `json:"events"`
}

type drill struct {
	l        Lab
	sc       *Scenario
	o        Options
	lb       *plan.LB
	cluster  *plan.Cluster
	nodes    []*plan.Node
	t        *traffic
	s        *sampler
	faultAt  time.Time
	wholeAt  time.Time // the cluster whole again after the fault
	res      *Result
	problems []string           // what went wrong while running the drill (not the audit's findings)
	takeover time.Duration      // a load balancer pair's bound for the other host to take the address
	sched    *schedule.Schedule // the chaos drill's
}

// Run runs a drill and stores it as a run. A drill that loses acknowledged
// writes or ends with nodes disagreeing still returns its result (and the
// run is stored); Verdict says what it found. When ctx is cancelled (a
// signal), the drill stops its traffic, undoes what it broke, judges what it
// saw and stores the run marked interrupted: nothing after the fault is cut
// short by the interruption itself.
func Run(ctx context.Context, l Lab, o Options) (*Result, error) {
	d, err := prepare(l, o)
	if err != nil {
		return nil, err
	}
	run, err := workload.NewRun(ctx, l, results.Drill, o.Command, map[string]any{"scenario": o.Scenario, "targets": d.res.Targets,
		"writes_per_s": o.Rate, "lb": d.lb.Name})
	if err != nil {
		return nil, err
	}
	d.res.RunID = run.ID
	w, r, err := d.connect(ctx, run.ID)
	if err != nil {
		workload.Abandon(l, run)
		return nil, err
	}
	defer w.Close()
	defer r.Close()
	bg := context.WithoutCancel(ctx) // repairing, judging and storing outlive an interruption
	var tpccLoad *workload.TPCCLoad
	if o.Workload == TPCCWorkload {
		if tpccLoad, err = d.startTPCC(ctx, run.ID); err != nil {
			workload.Abandon(l, run)
			return nil, err
		}
	}
	stopTPCC := func() { // on a drill that ends before its fault
		if tpccLoad != nil {
			tpccLoad.Abandon()
		}
	}
	marks := d.logMarks(bg)
	d.s = startSampler(bg, l, d.cluster, d.nodes, 100*time.Millisecond)
	trafficAt := time.Now()
	d.t = startTraffic(ctx, w, r, run.ID, o.Rate)
	var appends *workload.HistoryRun
	if workload.IsHistory(o.Workload) {
		if appends, err = d.startAppends(ctx); err != nil {
			d.t.finish()
			d.s.finish()
			stopTPCC()
			workload.Abandon(l, run)
			return nil, err
		}
	}
	unfinished := d.provisional(run)
	d.logf("%s drill on cluster %s: %d writes/s and %d reads/s through %s", o.Scenario, d.cluster.Name, o.Rate, o.Rate/2, d.lb.Name)
	sleep(ctx, o.Before)
	if now := time.Now(); o.Before >= 2*time.Second && ctx.Err() == nil {
		c := Carried(d.t.snapshot(), trafficAt.Add(time.Second), now, now)
		d.res.Capacity = &c
		if !c.Carried { // no fault injected: the run is not kept
			d.t.finish()
			if appends != nil {
				appends.Stop()
			}
			stopTPCC()
			unfinished()
			lab := d.afterLoad(ctx, trafficAt)
			d.s.finish()
			workload.Abandon(l, run)
			_ = os.RemoveAll(results.RunDir(l.Home(), run.ID))
			return nil, hderr.User("%s", c.Refusal(o.Rate, o.Before, lab))
		}
	}
	ferr := d.fault(ctx)
	switch {
	case ctx.Err() != nil:
		d.res.Interrupted = true
		if !d.faultAt.IsZero() && d.wholeAt.IsZero() {
			if err := d.repair(bg); err != nil {
				d.problems = append(d.problems, err.Error())
			}
		}
	case ferr != nil:
		d.problems = append(d.problems, ferr.Error())
	default:
		d.logf("cluster whole again; %v more traffic", o.After)
		sleep(ctx, o.After)
		d.res.Interrupted = ctx.Err() != nil
	}
	ops := d.t.finish()
	if appends != nil {
		hist := appends.Stop()
		d.checkAppends(l, run.ID, hist, appends.Started(), appends.FinalReads())
	}
	if tpccLoad != nil {
		d.checkTPCC(bg, tpccLoad)
	}
	unfinished()
	d.s.finish()
	end := time.Now()
	logs := d.logsSince(bg, marks)
	d.res.Reversals, d.res.SemiSyncFallbacks = d.reversals(logs), d.fallbacks(logs)
	jctx, cancel := context.WithTimeout(bg, 2*time.Minute)
	defer cancel()
	d.judge(jctx, ops, run.Started, end)
	if err := d.store(run, ops, end); err != nil {
		return d.res, err
	}
	return d.res, ctx.Err()
}

// startTPCC prepares TPC-C's dataset and starts its clients through the
// drill's load balancer.
func (d *drill) startTPCC(ctx context.Context, runID string) (*workload.TPCCLoad, error) {
	e, err := workload.Resolve(ctx, d.l, d.lb.Name, "")
	if err != nil {
		return nil, err
	}
	log := d.o.Log
	if log == nil {
		log = io.Discard
	}
	d.logf("tpcc workload: %d clients over %d warehouse through %s, its consistency conditions checked once the cluster is whole again", tpccClients, tpccWarehouses, d.lb.Name)
	return workload.StartTPCC(ctx, d.l, e, tpccWarehouses, tpccClients, runID, log)
}

// checkTPCC stops TPC-C's clients and checks its consistency conditions on
// what the fault left: one that does not hold fails the drill.
func (d *drill) checkTPCC(ctx context.Context, x *workload.TPCCLoad) {
	f := x.Stop(ctx)
	f.Check = x.Check(ctx)
	d.res.TPCC, d.res.Workload = &f, TPCCWorkload
	if !f.Check.Passed {
		d.problems = append(d.problems, "a TPC-C consistency condition does not hold after the drill: "+strings.Join(f.Check.Failures, "; "))
	}
}

// startAppends starts the history workload's clients (append or bank),
// two on each node of the cluster, directly.
func (d *drill) startAppends(ctx context.Context) (*workload.HistoryRun, error) {
	var targets []workload.Endpoint
	var names []string
	// a Galera cluster takes them on every node; a primary cluster's
	// replicas are read-only, so its clients go where its writes go: the
	// load balancer, which follows a failover to the new primary
	on := d.cluster.Nodes
	if d.cluster.Kind == spec.KindPrimary {
		on = []string{d.lb.Name}
	}
	for _, name := range on {
		e, err := workload.Resolve(ctx, d.l, name, "")
		if err != nil {
			return nil, err
		}
		targets, names = append(targets, e), append(names, name)
	}
	clients := 2 * len(targets)
	if len(on) == 1 {
		clients = 2 * len(d.nodes)
	}
	readers, readNames, err := workload.ResolveReads(ctx, d.l, d.o.ReadTarget)
	if err != nil {
		return nil, err
	}
	p := workload.HistoryParams{Workload: d.o.Workload, Clients: clients, Keys: workload.HistoryKeys(d.o.Workload), MaxOps: 4, SyncWait: -1, Model: d.o.Model, Targets: names, ReadTargets: readNames}
	reads := ""
	if len(readNames) > 0 {
		reads = ", read-only transactions on " + strings.Join(readNames, ", ")
	}
	d.logf("%s workload: %d clients over %s%s, checked as %s", p.Workload, p.Clients, strings.Join(names, ", "), reads, p.Model)
	return workload.StartHistory(ctx, d.l, targets, readers, p)
}

// checkAppends stores the history workload's history with the run and
// checks it: what the model forbids fails the drill, and so does an
// acknowledged append lost (absent from every read, final reads that
// succeeded included: finalOK of them, each made once its node had
// applied everything committed before it), whatever the model; an
// interrupted drill says its history was cut short rather than calling it
// consistent.
func (d *drill) checkAppends(l Lab, runID string, ops []consistency.Op, started time.Time, finalOK int) {
	if err := workload.WriteHistory(l.Home(), runID, ops); err != nil {
		d.problems = append(d.problems, err.Error())
	}
	res, err := consistency.Check(context.Background(), ops, d.o.Model)
	if err != nil {
		d.problems = append(d.problems, "the "+d.o.Workload+" workload's history could not be checked: "+err.Error())
		return
	}
	d.res.Consistency, d.res.Workload = res, d.o.Workload
	d.res.FirstAnomaly = placeFirst(res, started, d.faultAt, d.res.Applied)
	switch {
	case res.Err() != nil:
		where := ""
		if p := d.res.FirstAnomaly; p != nil {
			where = "; " + p.Where
		}
		d.problems = append(d.problems, res.Err().Error()+where+" (the "+d.o.Workload+" workload's history; hadrill check it again from the run's "+workload.HistoryFile+")")
	case d.res.Interrupted:
		d.problems = append(d.problems, "the "+d.o.Workload+" workload's history was cut short by the interruption: its check covers what ran, not the whole drill")
	}
	if finalOK == 0 || d.res.Interrupted {
		return
	}
	for _, a := range res.Losses() {
		d.problems = append(d.problems, fmt.Sprintf("acknowledged writes lost (%s: %s): committed, and absent from every read since, the final reads (each made once its node had applied everything committed before it) included (the %s workload's history)",
			a.Type, a.Counted(), d.o.Workload))
	}
}

// steadyAfterLoad is how long a cluster must stay whole after a load it
// could not carry before the lab is called whole: a node still applying
// the load's backlog on a starved CPU may be evicted seconds after the
// load stopped (Galera suspects a silent peer after 5 s).
const steadyAfterLoad = 5 * time.Second

// afterLoad waits, once a load the lab could not carry has stopped, until
// the cluster is whole again and stays so for steadyAfterLoad (an
// overloaded node may leave the primary component without any fault) and
// says how the lab was left.
func (d *drill) afterLoad(ctx context.Context, from time.Time) string {
	stopped := time.Now()
	whole, ok := d.s.waitSteady(ctx, stopped, d.o.Timeout, steadyAfterLoad, d.whole)
	if !ok {
		return fmt.Sprintf("No fault was injected, but the load alone left cluster %s not whole %v after it stopped (hadrill status shows its nodes)",
			d.cluster.Name, time.Since(stopped).Round(time.Second))
	}
	if apartAt, apart := d.s.first(from, func(s Sample) bool { return !d.whole(s) }); apart && apartAt.Before(whole) {
		return fmt.Sprintf("No fault was injected; the load alone took cluster %s apart for a while, and it is whole again", d.cluster.Name)
	}
	return "Nothing was broken"
}

// repair undoes an interrupted drill's fault (lift partitions, resume, start
// what was killed; a cluster with every node down is recovered) and waits
// until the cluster is whole again.
func (d *drill) repair(ctx context.Context) error {
	d.logf("interrupted: undoing the fault (lifting partitions, starting what was killed); the run is kept, marked interrupted")
	since := time.Now()
	if err := d.l.Heal(ctx); err != nil {
		return fmt.Errorf("undoing the fault after the interruption: %w", err)
	}
	if d.sc.undo != nil {
		if err := d.sc.undo(ctx, d); err != nil {
			return fmt.Errorf("after the interruption: %w", err)
		}
	}
	t, ok := d.s.waitFor(ctx, since, d.o.Timeout, func(s Sample) bool { return s.Whole(d.cluster.Members()) })
	if !ok {
		return fmt.Errorf("cluster %s not whole within %v after undoing the interrupted fault", d.cluster.Name, d.o.Timeout)
	}
	d.wholeAt = t
	d.logf("cluster %s whole again", d.cluster.Name)
	return nil
}

// Problems are what is wrong with the options themselves, before any lab
// is looked at (the command line names them with the lab's problems).
func (o Options) Problems() []string {
	var problems []string
	sc, ok := Lookup(o.Scenario)
	if !ok {
		problems = append(problems, fmt.Sprintf("SCENARIO: unknown drill %q (drills: %s)", o.Scenario, names()))
	}
	if o.Rate < 1 || o.Rate > 1000 {
		problems = append(problems, fmt.Sprintf("--rate: expected 1 to 1000 writes/s, got %d", o.Rate))
	}
	bounds := []struct {
		flag   string
		v, min time.Duration
	}{{"--before", o.Before, 0}, {"--after", o.After, 0}, {"--hold", o.Hold, time.Second}, {"--timeout", o.Timeout, time.Second}}
	if o.Scenario == ChaosDrill { // its --hold is its schedule's
		bounds = slices.Delete(bounds, 2, 3)
		if o.Chaos != nil {
			problems = append(problems, o.Chaos.problems()...)
		}
	}
	for _, b := range bounds {
		if b.v < b.min || b.v > MaxWait {
			problems = append(problems, fmt.Sprintf("%s: expected %v to %v, got %v", b.flag, b.min, MaxWait, b.v))
		}
	}
	if ok && sc.MaxTargets >= 0 && len(o.Targets) > sc.MaxTargets {
		problems = append(problems, fmt.Sprintf("TARGET: %s drill takes at most %d targets, got %v", sc.Name, sc.MaxTargets, o.Targets))
	}
	return append(problems, o.workloadProblems()...)
}

// workloadProblems are what is wrong with the workload beside the
// acknowledged writes ("": none): its name, the promise its history is
// checked against (required with a history workload), where its reads go.
func (o Options) workloadProblems() []string {
	var problems []string
	if o.Workload != "" && !slices.Contains(Workloads, o.Workload) { // "": the acknowledged writes alone
		problems = append(problems, fmt.Sprintf("--workload: expected one of %s, got %q", strings.Join(Workloads, ", "), o.Workload))
	}
	if why := consistency.ModelProblem(o.Model); why != "" && (o.Model != "" || workload.IsHistory(o.Workload)) {
		problems = append(problems, why)
	}
	if o.ReadTarget != "" && !workload.IsHistory(o.Workload) {
		problems = append(problems, fmt.Sprintf("--read-target: applies to the history workloads (--workload %s), got --workload %s", strings.Join(workload.HistoryWorkloads, ", "), o.Workload))
	}
	return problems
}

func prepare(l Lab, o Options) (*drill, error) {
	problems := o.Problems()
	sc, _ := Lookup(o.Scenario)
	if len(l.Plan().LoadBalancers) == 0 {
		problems = append(problems, fmt.Sprintf("lab %s has no load balancer: drills send their traffic through one", l.Plan().Lab))
	}
	if err := hderr.Users(problems); err != nil {
		return nil, err
	}
	d := &drill{l: l, sc: sc, o: o, lb: &l.Plan().LoadBalancers[0], takeover: LBTakeover}
	if o.LB != "" {
		lb, err := l.LB(o.LB)
		if err != nil {
			return nil, err
		}
		d.lb = lb
	}
	d.cluster, _ = l.Plan().Cluster(d.lb.Cluster)
	switch c := d.cluster; {
	case c.Kind == spec.KindPrimary && !sc.Replicated:
		return nil, hderr.User("SCENARIO: load balancer %s fronts primary cluster %s; the %s drill needs a Galera cluster (primary clusters: %s)",
			d.lb.Name, c.Name, sc.Name, replicatedNames())
	case c.Kind == spec.KindPrimary && sc.AutoFailover && !c.AutoFailover:
		return nil, hderr.User("SCENARIO: cluster %s fails over by hand (failover: manual): nothing would promote a replica when its primary dies; "+
			"set failover: auto on the cluster to drill it", c.Name)
	case c.Kind != spec.KindGalera && c.Kind != spec.KindPrimary:
		return nil, hderr.User("drill: load balancer %s fronts %s cluster %s; drills need a Galera or a primary cluster", d.lb.Name, c.Kind, c.Name)
	}
	d.nodes = nodes(l.Plan(), d.cluster.Nodes)
	d.res = &Result{Scenario: o.Scenario, Cluster: d.cluster.Name, Profile: d.nodes[0].ProfileLabel(), WritesPerS: o.Rate, Lost: map[string][]int64{}, Crash: o.Crash}
	if o.Crash && !sc.CrashFlag {
		return nil, hderr.User("--crash: applies to the failover drill only")
	}
	if why := l.Plan().WithoutFirewall(); o.Crash && why != "" {
		return nil, hderr.User("--crash: a crash cuts a host off the network, which %s", why)
	}
	t, err := sc.targets(d, append([]string(nil), o.Targets...))
	d.res.Targets = t
	return d, err
}

// activeOr resolves targets where "active" (the default) names the load
// balancer's writer now.
func (d *drill) activeOr(given []string) ([]string, error) {
	if len(given) == 0 {
		given = []string{"active"}
	}
	for i, name := range given {
		if name == "active" {
			w, err := d.writer()
			if err != nil {
				return nil, err
			}
			given[i] = w
		}
	}
	return given, nil
}

// writer is the node the load balancer sends writes to now.
func (d *drill) writer() (string, error) { return d.l.LBWriter(context.Background(), d.lb) }

func (d *drill) logf(format string, a ...any) {
	if d.o.Log != nil {
		fmt.Fprintf(d.o.Log, format+"\n", a...)
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
}
