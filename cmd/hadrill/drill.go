package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hadrill/hadrill/internal/chaos"
	"github.com/hadrill/hadrill/internal/consistency"
	"github.com/hadrill/hadrill/internal/drill"
	"github.com/hadrill/hadrill/internal/drill/schedule"
	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/lab"
	"github.com/hadrill/hadrill/internal/lb"
	"github.com/hadrill/hadrill/internal/workload"
	"github.com/hadrill/hadrill/internal/workload/tpcc"
)

func (cli *app) drillCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "drill",
		Short: "Run a fault drill under traffic and prove nothing acknowledged was lost",
		Long: `A drill sends an open-loop writer (unique ids, every acknowledgement timestamped) and a
reader through the lab's load balancer, applies a fault, recovers, waits until every node
is Synced in one primary component, and reports: the client-visible gap, the error codes
over time, the time until writes resumed, the cluster re-formed and healed, the
acknowledged-write audit (every acknowledged id on every node) and cross-node table
checksums. The drill is stored as a run (hadrill report draws its timeline with the
fault marked). It exits 1 when an acknowledged write is missing or the nodes disagree.`,
	}
	for _, scn := range drill.Scenarios() {
		c.AddCommand(cli.drillScenarioCmd(scn))
	}
	c.AddCommand(cli.drillAuditCmd())
	return c
}

// drillFlags are one drill's options as its flags fill them.
type drillFlags struct {
	o             drill.Options
	node          string
	ch            drill.Chaos // the chaos drill's own flags
	chaosWorkload string
}

func (cli *app) drillScenarioCmd(scn *drill.Scenario) *cobra.Command {
	var df drillFlags
	sc := &cobra.Command{
		Use:     scn.Usage,
		Aliases: scn.Aliases,
		Short:   scn.Short,
		Args:    args(0, scn.MaxTargets, "targets as shown in the usage"),
		RunE: func(cmd *cobra.Command, a []string) error {
			o, l, err := cli.drillOptions(cmd, scn.Name, a, &df)
			if err != nil {
				return err
			}
			return cli.runDrill(cmd, l, o)
		},
	}
	df.declare(sc, scn)
	return sc
}

// declare gives a drill's command its flags.
func (df *drillFlags) declare(sc *cobra.Command, scn *drill.Scenario) {
	o, ch := &df.o, &df.ch
	f := sc.Flags()
	f.IntVar(&o.Rate, "rate", 100, "writes per second (reads: half as many), each on a new connection")
	f.DurationVar(&o.Before, "before", 3*time.Second, "traffic before the fault")
	f.DurationVar(&o.After, "after", 3*time.Second, "traffic after the cluster is whole again")
	f.DurationVar(&o.Timeout, "timeout", 90*time.Second, "how long the cluster may take to be whole again after recovery")
	f.StringVar(&o.LB, "lb", "", "load balancer to send the traffic through (default: the first)")
	workloadUse := "acked (the acknowledged-write audit), " + workload.HistoryUsage() + ", on every node beside the acknowledged writes, their history checked (hadrill check), or tpcc (TPC-C through the load balancer too, its consistency conditions checked after)"
	if scn.Name == drill.ChaosDrill {
		f.StringVar(&df.chaosWorkload, "workload", workload.HistoryName(""), workloadUse)
		f.DurationVar(&ch.Params.Duration, "duration", 2*time.Minute, "how long the schedule runs (1s to 24h): steps until the next would end after it")
		f.Uint64Var(&ch.Params.Seed, "seed", 0, "the seed the schedule is drawn from (default: one at random, printed and stored); the same seed, faults, times and nodes draw the same schedule")
		f.StringSliceVar(&ch.Params.Faults, "faults", schedule.Default, "the faults drawn from: "+strings.Join(schedule.Kinds, ", "))
		f.DurationVar(&ch.Params.Hold, "hold", 10*time.Second, "the longest a step's faults are held (each: 1 s up to it) before the heal")
		f.DurationVar(&ch.Params.Interval, "interval", 5*time.Second, "the longest wait after a heal before the next step (each: half of it up to it)")
		f.StringVar(&ch.Replay, "replay", "", "run again the schedule of this chaos drill's run (its schedule.json), on this lab")
		f.StringVar(&ch.File, "schedule", "", "run this schedule file (JSON, as a chaos drill stores it)")
		f.DurationVar(&ch.Until, "until", 0, "with --replay or --schedule: only the steps that start before this time")
	} else {
		f.DurationVar(&o.Hold, "hold", 30*time.Second, "failover, partition: how long the fault stays if writes do not resume by themselves")
		f.StringVar(&o.Workload, "workload", drill.AckedWorkload, workloadUse)
	}
	f.StringVar(&o.Model, "model", "strict-serializable", "with a history workload (--workload "+strings.Join(workload.HistoryWorkloads, ", ")+"), the promise checked: "+strings.Join(consistency.Models, ", "))
	f.StringVar(&o.ReadTarget, "read-target", "", "with a history workload, where the read-only transactions go apart from the writes: "+workload.ReadReplicas+" (the replicas when the drill starts), "+workload.ReadBalanced+", or node and load balancer names")
	if scn.NodeFlag {
		f.StringVar(&df.node, "node", "", "the node to kill: active (the load balancer's writer) or a name")
	}
	if scn.CrashFlag {
		f.BoolVar(&o.Crash, "crash", false, "crash the node's host (every process killed, its NICs down: peers hear nothing) instead of kill -9 of its server")
	}
}

// drillOptions are a drill's options from its flags and arguments, and
// the lab it changes (locked), every problem named at once (with a
// missing lab's); the fault drill's fault is tried on the lab without
// being applied.
func (cli *app) drillOptions(cmd *cobra.Command, scenario string, a []string, df *drillFlags) (drill.Options, *lab.Lab, error) {
	o := df.o
	var problems []error
	if scenario == drill.ChaosDrill {
		ch := df.ch
		o.Workload, o.Chaos = df.chaosWorkload, &ch
		ch.SeedGiven = cmd.Flags().Changed("seed")
		ch.DrawGiven = cmd.Flags().Changed("faults") || cmd.Flags().Changed("duration") || cmd.Flags().Changed("interval") || cmd.Flags().Changed("hold")
	}
	var inject chaos.Fault
	if scenario == drill.FaultDrill {
		var err error
		if inject, err = cli.parseFault(a); err != nil {
			problems = append(problems, err)
		}
	}
	pure := o
	pure.Scenario, pure.Targets = scenario, a
	if p := pure.Problems(); len(p) > 0 {
		problems = append(problems, hderr.Users(p))
	}
	if df.node != "" && len(a) > 0 {
		problems = append(problems, hderr.User("NODE: give the node either as an argument or with --node, not both"))
	}
	l, err := cli.changeLab()
	if err == nil {
		err = stopped(l)
	}
	if err != nil {
		problems = append(problems, err)
	}
	if len(problems) > 0 {
		return o, nil, hderr.Join(problems)
	}
	if _, _, err := workload.ResolveReads(cmd.Context(), l, o.ReadTarget); err != nil {
		return o, nil, err
	}
	if inject != nil {
		if err := l.Inject(fault.Dry(cmd.Context()), inject); err != nil {
			return o, nil, err
		}
		o.Fault = &drill.Injection{Label: strings.Join(a, " "), Fault: inject}
	}
	if df.node != "" {
		a = []string{df.node}
	}
	o.Scenario, o.Targets, o.Command, o.Log = scenario, a, os.Args, cli.progressLog()
	return o, l, nil
}

// runDrill runs a drill and prints its result; it fails when the drill
// did.
func (cli *app) runDrill(cmd *cobra.Command, l *lab.Lab, o drill.Options) error {
	res, err := drill.Run(cmd.Context(), l, o)
	if res == nil {
		return err
	}
	if eerr := cli.emit(res, func() { printDrill(os.Stdout, res) }); eerr != nil {
		return eerr
	}
	if err != nil {
		return err
	}
	if !res.Passed {
		return fmt.Errorf("drill %s: %s", res.Verdict, strings.Join(res.Problems, "; "))
	}
	return nil
}

func (cli *app) drillAuditCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "audit RUN_ID",
		Short: "Check again that every write a drill had acknowledged is on every node of its cluster",
		Args:  args(1, 1, "a drill's run id"),
		RunE: func(cmd *cobra.Command, a []string) error {
			l, err := cli.openLab()
			if err != nil {
				return err
			}
			res, err := drill.Audit(cmd.Context(), l, a[0])
			if err != nil {
				return err
			}
			if err := cli.emit(res, func() {
				fmt.Printf("run %s: %d acknowledged writes, checked on every node of cluster %s\n", res.RunID, res.Acked, res.Cluster)
				printAudit(os.Stdout, res.Nodes)
				fmt.Println("  verdict: " + res.Verdict)
			}); err != nil {
				return err
			}
			switch res.Verdict {
			case drill.VerdictPassed:
				return nil
			case drill.VerdictLost:
				return fmt.Errorf("audit: acknowledged writes of run %s are missing", res.RunID)
			}
			return fmt.Errorf("audit: run %s could not be verified on every node", res.RunID)
		},
	}
}

func printDrill(out io.Writer, r *drill.Result) {
	after := func(what string, v *float64) string {
		if v == nil {
			return what + ": never"
		}
		return fmt.Sprintf("%s after %.2f s", what, *v)
	}
	what := ""
	switch {
	case r.Fault != "":
		what = ", fault: " + r.Fault
	case len(r.Targets) > 0:
		what = ", targets " + strings.Join(r.Targets, ",")
	}
	fmt.Fprintf(out, "drill %s on cluster %s (profile %s)%s — run %s\n", r.Scenario, r.Cluster, r.Profile, what, r.RunID)
	fmt.Fprintf(out, "  writes: %d issued, %d acknowledged, %d failed; reads: %d, %d failed\n", r.Writes, r.WritesAcked, r.WritesFailed, r.Reads, r.ReadsFailed)
	gap := fmt.Sprintf("%.3f s", r.Gap.Seconds)
	if r.Gap.Open {
		gap = fmt.Sprintf("at least %.3f s, still open when the traffic ended (writes did not resume within the drill)", r.Gap.Seconds)
	}
	if from, later := r.LaterPause(); later {
		gap += fmt.Sprintf(" (the longest pause, from %.2f s after the fault)", from)
	}
	sc, _ := drill.Lookup(r.Scenario)
	switch {
	case sc != nil && sc.OnLB:
		fmt.Fprintf(out, "  client-visible gap: %s; %s (through the same address); %s\n", gap, after("writes back", r.WritesBackS), after("taken over", r.TakeoverS))
	case sc != nil && !sc.Reforms():
		fmt.Fprintf(out, "  client-visible gap: %s; %s; %s\n", gap, after("writes back", r.WritesBackS), after("whole again", r.SyncedS))
	default:
		fmt.Fprintf(out, "  client-visible gap: %s; %s; %s; %s\n",
			gap, after("writes back", r.WritesBackS), after("re-formed", r.ReformedS), after("whole again", r.SyncedS))
	}
	printChaosSteps(out, r)
	printDrillNotes(out, r)
	printPhases(out, r.Phases)
	if b := r.Balancer; b != nil {
		fmt.Fprintf(out, "  %s\n", lb.Say(b.Name, b.Events, r.FaultAt, "the fault"))
	}
	for _, c := range r.Codes {
		fmt.Fprintf(out, "  error %s: %d writes, %d reads, from %.2f s to %.2f s\n", c.Code, c.Writes, c.Reads, c.First, c.Last)
	}
	printAudit(out, r.Audit)
	agree := fmt.Sprint(r.ChecksumsAgree)
	if len(r.ChecksumsUnread) > 0 {
		agree = "not known (not read on every node)"
	}
	fmt.Fprintf(out, "  acknowledged writes missing: %d; table checksums agree: %s\n", r.LostCount, agree)
	printDrillHistory(out, r)
	printDrillTPCC(out, r.TPCC)
	printDrillVerdict(out, r)
}

// printAudit says, per node, what the acknowledged-write audit saw.
func printAudit(out io.Writer, audit []drill.NodeAudit) {
	for _, a := range audit {
		switch a.State {
		case drill.NodeVerified:
			fmt.Fprintf(out, "  %s: verified, all %d acknowledged writes present\n", a.Node, a.Checked)
		case drill.NodeMissing:
			fmt.Fprintf(out, "  %s: MISSING %d of %d acknowledged writes\n", a.Node, len(a.Missing), a.Checked)
			if a.Reason != "" {
				fmt.Fprintf(out, "    (%s)\n", a.Reason)
			}
		case drill.NodeFenced:
			fmt.Fprintf(out, "  %s: fenced, out of service, not audited: it %s\n", a.Node, a.Reason)
		case drill.NodeLagging:
			fmt.Fprintf(out, "  %s: LAGGING: lacks %d of %d acknowledged writes, and %s (late, not shown lost)\n", a.Node, len(a.Missing), a.Checked, a.Reason)
		default:
			fmt.Fprintf(out, "  %s: unverified (could not be read: %s)\n", a.Node, a.Reason)
		}
	}
}

// printPhases prints the writes before, during and after the fault, the
// latency during and after as a change from before.
func printPhases(out io.Writer, ps []drill.Phase) {
	if len(ps) == 0 {
		return
	}
	fmt.Fprintf(out, "  %-8s %8s %9s %7s %9s %9s\n", "writes", "span s", "acked/s", "failed", "p50 ms", "p99 ms")
	for _, p := range ps {
		delta := ""
		if b := ps[0]; p.Name != "before" && b.Name == "before" && b.P99Ms > 0 && p.P99Ms > 0 {
			delta = fmt.Sprintf("  (p50 %+.0f%%, p99 %+.0f%% on before)", 100*(p.P50Ms/b.P50Ms-1), 100*(p.P99Ms/b.P99Ms-1))
		}
		p50, p99 := fmt.Sprintf("%.2f", p.P50Ms), fmt.Sprintf("%.2f", p.P99Ms)
		if p.AckedPerS == 0 { // no write acknowledged: no latency to show
			p50, p99 = "-", "-"
		}
		fmt.Fprintf(out, "  %-8s %8.1f %9.1f %7d %9s %9s%s\n", p.Name, p.Seconds, p.AckedPerS, p.Failed, p50, p99, delta)
	}
}

// printChaosSteps lists a chaos drill's steps as they were applied.
func printChaosSteps(out io.Writer, r *drill.Result) {
	if s := r.Schedule; s != nil {
		fmt.Fprintf(out, "  chaos: seed %d, %d of %d steps applied (faults: %s); run the same schedule again: hadrill drill chaos --replay %s\n",
			s.Seed, len(r.Applied), len(s.Steps), strings.Join(s.Faults, ","), r.RunID)
		for _, a := range r.Applied {
			late := ""
			if a.LateS > 0 {
				late = fmt.Sprintf(" (%.1f s late)", a.LateS)
			}
			fmt.Fprintf(out, "    step %d at %.1f s%s: %s, healed at %.1f s%s\n", a.Step, a.AtS, late, a.Says, a.HealedS, map[bool]string{true: "; " + a.Error}[a.Error != ""])
			for _, x := range a.Skipped {
				fmt.Fprintf(out, "      skipped: %s\n", x)
			}
			if a.HealFailed != "" {
				fmt.Fprintf(out, "      heal failed: %s (the cluster made whole by hand: see recovered by hand)\n", a.HealFailed)
			}
		}
	}
}

// printDrillNotes says what was repaired or recovered by hand, each
// fallback to async and each reversal Galera warned of.
func printDrillNotes(out io.Writer, r *drill.Result) {
	for _, x := range r.Repaired {
		fmt.Fprintf(out, "  repaired: %s\n", x)
	}
	for _, x := range r.Interventions {
		fmt.Fprintf(out, "  recovered by hand: %s\n", x)
	}
	for _, x := range r.SemiSyncFallbacks {
		fmt.Fprintf(out, "  semi-sync fell back to async: %s (no replica acknowledged within its timeout; commits acknowledged then were on that node alone)\n", x)
	}
	for _, x := range r.Reversals {
		fmt.Fprintf(out, "  Galera says data loss is possible: %s (what only this member had applied is gone from the cluster; it rejoined by a full state transfer, without it)\n", x)
	}
}

// printDrillHistory says what the checked history of the drill's workload
// showed.
func printDrillHistory(out io.Writer, r *drill.Result) {
	if c := r.Consistency; c != nil {
		fmt.Fprintf(out, "  %s workload: %d transactions committed, %d failed, %d unknown; %s\n", workload.HistoryName(r.Workload), c.OK, c.Fail, c.Info, c.Verdict())
		if c.Own != nil {
			fmt.Fprintf(out, "    %s: %s\n", c.Own.Of, c.Own.Text)
		}
		for _, f := range c.Reads {
			fmt.Fprintf(out, "    reads, %s\n", f.Text())
		}
		for _, a := range c.Anomalies {
			fmt.Fprintf(out, "    %s, %s: %s\n", a.Type, a.Counted(), a.Example)
		}
		if p := r.FirstAnomaly; p != nil {
			fmt.Fprintf(out, "    on the fault timeline: %s\n", p.Where)
		}
	}
}

// printDrillTPCC says how TPC-C beside the drill went.
func printDrillTPCC(out io.Writer, t *workload.TPCCUnderFault) {
	if t == nil {
		return
	}
	check := "not checked"
	if c := t.Check; c != nil && c.Passed {
		check = "its consistency conditions hold"
	} else if c != nil {
		check = "a consistency condition does NOT hold: " + strings.Join(c.Failures, "; ")
	}
	fmt.Fprintf(out, "  TPC-C (%d clients, %d warehouse): %d New-Orders, %.0f tpmC over the drill; runs of %d s: %s tpmC (%d failed); errors by code: %s; %s\n",
		t.Clients, t.Warehouses, t.NewOrders, t.TpmC, t.RunSeconds, tpmcRuns(t.Runs), t.Failed, tpcc.CodesText(t.ByCode), check)
}

// printDrillVerdict ends a drill's text with its verdict.
func printDrillVerdict(out io.Writer, r *drill.Result) {
	if r.Interrupted {
		fmt.Fprintln(out, "  INTERRUPTED: the drill was stopped early; what it broke was undone, its run is kept")
	}
	switch r.Verdict {
	case drill.VerdictPassed:
		fmt.Fprintln(out, "  PASSED: every acknowledged write is on every node in service")
	case drill.VerdictInterrupted:
		fmt.Fprintln(out, "  nothing acknowledged was lost in what the drill saw")
	default:
		for _, p := range r.Problems {
			fmt.Fprintf(out, "  %s: %s\n", strings.ToUpper(r.Verdict), p)
		}
	}
}

// parseFault reads the fault drill's fault (the arguments after --) as
// `hadrill fault` does, without applying it: the drill applies it under
// traffic and heals it.
func (cli *app) parseFault(a []string) (chaos.Fault, error) {
	if len(a) == 0 {
		return nil, hderr.User("FAULT: give the fault after --, as `hadrill fault` takes it (e.g. hadrill drill fault --hold 20s -- disk db2 --stall 2s)")
	}
	if slices.Contains([]string{"heal", "log", "resume", "help"}, a[0]) {
		return nil, hderr.User("FAULT: %q is not a fault to drill (the drill heals by itself)", a[0])
	}
	var got chaos.Fault
	fc := cli.faultCmd(func(_ *cobra.Command, f chaos.Fault) error { got = f; return nil })
	fc.SetArgs(a)
	fc.SetOut(io.Discard)
	fc.SetErr(io.Discard)
	fc.SilenceUsage, fc.SilenceErrors = true, true
	if err := fc.Execute(); err != nil {
		return nil, hderr.User("FAULT: %v", err)
	}
	if got == nil {
		return nil, hderr.User("FAULT: %q is not a fault (see hadrill fault --help)", strings.Join(a, " "))
	}
	return got, nil
}

// tpmcRuns lists runs' tpmC ("12000 11800 0 …").
func tpmcRuns(runs []float64) string {
	var out []string
	for _, v := range runs {
		out = append(out, fmt.Sprintf("%.0f", v))
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, " ")
}
