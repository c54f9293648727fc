package drill

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/chaos"
	"github.com/hadrill/hadrill/internal/drill/schedule"
	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/netem"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/results"
)

// ScheduleFile is where a chaos drill's run keeps its schedule (what
// --replay reads).
const ScheduleFile = "schedule.json"

// Chaos says how a chaos drill gets its schedule: drawn (Params; a zero
// Seed draws one at random, said and stored), or a stored one run again
// (Replay, a run's id, or File), cut at Until when set.
type Chaos struct {
	Params schedule.Params
	Replay string
	File   string
	Until  time.Duration
	// SeedGiven: --seed was given (refused with a replay, whose schedule
	// is the stored one).
	SeedGiven, DrawGiven bool
}

// Applied is a step of the schedule as the drill applied it: when, from
// the drill's first fault, against when the schedule said.
type Applied struct {
	Step  int     `json:"step"`
	Says  string  `json:"says"`
	PlanS float64 `json:"plan_s"`
	AtS   float64 `json:"at_s"`
	// HealS is when its hold ended and the heal began, HealedS when the
	// heal returned (every server started again and the cluster settled).
	HealS   float64 `json:"heal_s"`
	HealedS float64 `json:"healed_s"`
	// LateS: the step began this long after its planned time (the one
	// before took longer to recover than the schedule's wait).
	LateS float64 `json:"late_s,omitempty"`
	// Skipped are faults the lab refused as they came (a node still
	// restarting from the step before cannot be paused): the schedule
	// goes on, as Jepsen's does when a fault fails.
	Skipped []string `json:"skipped,omitempty"`
	// HealFailed is why its heal failed (a member that died again while
	// another joined it, a balancer with no healthy node behind it): the
	// cluster was then made whole by hand, an intervention, and the
	// schedule went on.
	HealFailed string `json:"heal_failed,omitempty"`
	Error      string `json:"error,omitempty"`
}

// chaosDrill: a random (or replayed) schedule of faults under the traffic
// and the history workload, each step healed before the next; at the end
// the cluster whole again, then the usual audit and check.
var chaosDrill = Scenario{
	Name:  ChaosDrill,
	Usage: "chaos [--duration D] [--seed N] [--faults a,b] [--hold D] [--interval D] | --replay RUN | --schedule FILE [--until T]",
	Short: "Faults drawn at random from a seed (kills, pauses, crashes, partitions of Jepsen's shapes, clock bumps), each held, healed, then the next; the schedule stored to run again",
	// a primary cluster with failover: auto takes the same faults
	Replicated:   true,
	AutoFailover: true,
	targets: func(d *drill, _ []string) ([]string, error) {
		s, err := d.chaosSchedule()
		if err != nil {
			return nil, err
		}
		d.sched = &s
		return d.cluster.Nodes, nil
	},
	inject: func(ctx context.Context, d *drill) (time.Time, error) {
		return d.followSchedule(ctx)
	},
}

// problems are the chaos options' own problems, before the lab is looked
// at (the drill's other options are checked with them).
func (c *Chaos) problems() []string {
	var problems []string
	if c.Replay != "" && c.File != "" {
		problems = append(problems, "--replay and --schedule: give one schedule to run again, not two")
	}
	replaying := c.Replay != "" || c.File != ""
	if replaying && (c.SeedGiven || c.DrawGiven) {
		problems = append(problems, "--seed, --faults, --duration and --interval draw a schedule; a replay runs the stored one: leave them out")
	}
	if !replaying && c.Until != 0 {
		problems = append(problems, "--until: cuts a replayed schedule (with --replay or --schedule)")
	}
	if c.Until < 0 {
		problems = append(problems, fmt.Sprintf("--until: expected a positive time from the first step, got %v", c.Until))
	}
	if !replaying {
		var u *hderr.UserError
		if err := c.Params.Check(); errors.As(err, &u) {
			problems = append(problems, u.Problems...)
		}
	}
	return problems
}

// chaosSchedule draws the drill's schedule, or reads the one to replay,
// checked against this cluster's nodes; every problem at once.
func (d *drill) chaosSchedule() (schedule.Schedule, error) {
	c := d.o.Chaos
	if c == nil {
		return schedule.Schedule{}, hderr.User("drill chaos: no schedule options")
	}
	replaying := c.Replay != "" || c.File != ""
	links := labLinks(d.l.Plan())
	if !replaying {
		p := c.Params
		p.Nodes, p.Links = d.cluster.Nodes, links
		if p.Seed == 0 {
			p.Seed = rand.Uint64()
		}
		if slices.Contains(p.Faults, schedule.Disk) {
			for _, n := range nodes(d.l.Plan(), p.Nodes) {
				if len(n.Volumes) == 0 {
					return schedule.Schedule{}, hderr.User("--faults: disk acts on a node's emulated volumes, and %s has none (give its cluster storage volumes in the spec)", n.Name)
				}
			}
		}
		return schedule.Generate(p)
	}
	where := c.File
	if c.Replay != "" {
		where = filepath.Join(results.RunDir(d.l.Home(), c.Replay), ScheduleFile)
	}
	data, err := os.ReadFile(where)
	if err != nil {
		if c.Replay != "" {
			return schedule.Schedule{}, hderr.User("--replay: run %s has no chaos schedule (%v)", c.Replay, err)
		}
		return schedule.Schedule{}, hderr.User("--schedule: %v", err)
	}
	s, err := schedule.Parse(data, where, d.cluster.Nodes, links)
	if err != nil {
		return s, err
	}
	if c.Until > 0 {
		s = s.Until(c.Until)
	}
	return s, nil
}

// followSchedule applies each step at its time from the first fault:
// its faults, the heal at the end of its hold, a quorum given back as a
// DBA would when the cluster cannot form one by itself; the next step
// waits for its time and at least the schedule's wait after the heal
// returned (so it starts late, and says so, when recovering took longer).
// It returns the last heal's time.
func (d *drill) followSchedule(ctx context.Context) (time.Time, error) {
	s := d.sched
	d.faultAt = time.Now()
	d.res.Schedule = s
	if err := d.saveSchedule(); err != nil {
		return d.faultAt, err
	}
	d.logf("chaos: seed %d, %d steps over %v (drill chaos --replay %s runs them again)", s.Seed, len(s.Steps), s.End().Round(time.Second), d.res.RunID)
	last := d.faultAt
	for i, st := range s.Steps {
		if ctx.Err() != nil {
			return last, ctx.Err()
		}
		sleepUntil(ctx, d.faultAt.Add(st.At.D()))
		began := time.Now()
		a := Applied{Step: i + 1, Says: st.Says(), PlanS: float64(st.At), AtS: began.Sub(d.faultAt).Seconds()}
		if late := a.AtS - a.PlanS; late > 0.1 {
			a.LateS = late
		}
		d.logf("step %d at %.1f s: %s, held %.1f s", i+1, a.AtS, a.Says, float64(st.Hold))
		last = began
		var errs []string
		for _, e := range st.Events {
			sleepUntil(ctx, began.Add(e.Offset.D()))
			if ctx.Err() != nil {
				break
			}
			if err := d.applyEvent(ctx, e); err != nil {
				if hderr.IsUser(err) { // a node still coming back from the step before: Jepsen's faults fail too
					a.Skipped = append(a.Skipped, fmt.Sprintf("%s %s: %v", e.Kind, strings.Join(e.Targets, ","), err))
					d.logf("step %d: %s skipped: %v", i+1, e.Kind, err)
					continue
				}
				errs = append(errs, err.Error())
				d.logf("step %d: %s: %v", i+1, e.Kind, err)
			}
		}
		sleepUntil(ctx, began.Add(st.Hold.D()))
		healed := time.Now()
		a.HealS = healed.Sub(d.faultAt).Seconds()
		if err := d.l.Heal(context.WithoutCancel(ctx)); err != nil {
			if rerr := d.repairHeal(context.WithoutCancel(ctx), fmt.Sprintf("step %d (%s)", i+1, a.Says), err); rerr != nil {
				errs = append(errs, rerr.Error())
			}
			a.HealFailed = strings.SplitN(err.Error(), "\n", 2)[0]
		}
		a.HealedS = time.Since(d.faultAt).Seconds()
		// the next step comes at its time, recovered or not (faults do
		// not wait for a cluster to be whole), but never sooner after this
		// heal returned than the schedule's wait between them: a heal that
		// restarted servers outlasts short waits, and the next fault would
		// otherwise strike the moment it returned; only a cluster that
		// formed no primary component by then is given one, as a DBA would
		if i+1 < len(s.Steps) {
			next := s.Steps[i+1]
			wait := (next.At - st.At - st.Hold).D()
			sleepUntil(ctx, later(d.faultAt.Add(next.At.D()), time.Now().Add(wait)))
		}
		if err := d.primaryBack(context.WithoutCancel(ctx), healed, fmt.Sprintf("step %d (%s)", i+1, a.Says)); err != nil {
			errs = append(errs, err.Error())
		}
		a.Error = strings.Join(errs, "; ")
		d.res.Applied = append(d.res.Applied, a)
		if len(errs) > 0 && ctx.Err() == nil {
			return last, fmt.Errorf("chaos step %d (%s): %s", i+1, a.Says, a.Error)
		}
	}
	return last, ctx.Err()
}

// repairHeal makes the cluster whole after a step's heal failed, as a DBA
// would before going on (MakeWhole: every fault healed again, a cluster
// without a primary component recovered, a member that cannot rejoin
// rebuilt), and records it among the interventions; an error when even
// that leaves it broken (the schedule then stops).
func (d *drill) repairHeal(ctx context.Context, step string, healErr error) error {
	began := time.Now().UTC()
	why := strings.SplitN(healErr.Error(), "\n", 2)[0]
	d.logf("%s: the heal failed (%s); making the cluster whole as a DBA would", step, why)
	did, err := MakeWhole(ctx, d.l, QuorumGrace)
	if err != nil {
		return fmt.Errorf("%s: the heal failed (%s), and making the cluster whole failed too: %w", step, why, err)
	}
	if did == "" {
		did = "it was whole again by itself"
	}
	d.res.Interventions = append(d.res.Interventions, fmt.Sprintf("%s: the heal failed (%s); made whole at %.1f s: %s",
		step, why, began.Sub(d.faultAt).Seconds(), did))
	return nil
}

// primaryBack makes sure the cluster has a primary component (a primary
// cluster: a writer) before the schedule goes on: one seen in the last
// moment is enough; else it waits until QuorumGrace after the heal, then
// gives it one as hadrill recover does, and records the intervention.
func (d *drill) primaryBack(ctx context.Context, healed time.Time, step string) error {
	has := func(s Sample) bool {
		for _, n := range s.Nodes {
			if (s.Replicated && n.Writable) || (!s.Replicated && n.Primary) {
				return true
			}
		}
		return false
	}
	wait := max(time.Until(healed.Add(QuorumGrace)), time.Second)
	if _, ok := d.s.waitFor(ctx, time.Now().Add(-300*time.Millisecond), wait, has); ok || ctx.Err() != nil {
		return nil
	}
	return d.recoverQuorum(ctx, step, fmt.Sprintf("no primary component %v after the heal", time.Since(healed).Round(time.Second)))
}

// applyEvent injects one fault of a step.
func (d *drill) applyEvent(ctx context.Context, e schedule.Event) error {
	switch e.Kind {
	case schedule.Kill:
		return d.l.Inject(ctx, chaos.Process{Kind: fault.Kill, Names: e.Targets})
	case schedule.Pause:
		return d.l.Inject(ctx, chaos.Process{Kind: fault.Pause, Names: e.Targets})
	case schedule.Crash:
		return d.l.Inject(ctx, chaos.Crash(e.Targets))
	case schedule.PartitionOne, schedule.PartitionMinority, schedule.PartitionBridge:
		return d.l.Inject(ctx, chaos.Partition{Targets: e.Targets, From: e.From})
	case schedule.PartitionPrimary: // the writer now
		w, err := d.writer()
		if err != nil {
			return hderr.User("the node the writes go to is not known now: %v", err) // skipped, as a fault on a node still coming back
		}
		d.logf("partition-primary: the writes go to %s", w)
		return d.l.Inject(ctx, chaos.Partition{Targets: []string{w}})
	case schedule.PartitionRing:
		if len(e.From) > 0 { // three or four nodes: one pair
			return d.l.Inject(ctx, chaos.Partition{Targets: e.Targets, From: e.From})
		}
		for _, cut := range schedule.RingCuts(e.Targets) {
			if err := d.l.Inject(ctx, chaos.Partition{Targets: []string{cut[0]}, From: []string{cut[1]}}); err != nil {
				return err
			}
		}
		return nil
	case schedule.OneWay:
		return d.l.Inject(ctx, chaos.Partition{From: e.From, To: e.Targets})
	case schedule.CPU:
		return d.l.Inject(ctx, chaos.CPU{Hosts: hostsOf(d.l.Plan(), e.Targets), Cores: e.Cores})
	case schedule.ClockBump, schedule.ClockStrobe:
		f, err := chaos.ParseClock(e.Targets[0], e.Clock, "")
		if err != nil {
			return err
		}
		f.Strobe = e.Strobe.D()
		return d.l.Inject(ctx, f)
	case schedule.Memory:
		return d.l.Inject(ctx, chaos.Memory{Hosts: hostsOf(d.l.Plan(), e.Targets), Limit: e.Limit})
	case schedule.Disk:
		f := chaos.Disk{Node: e.Targets[0]}
		switch e.Disk {
		case schedule.DiskStall:
			f.Stall = chaos.MaxStall // until the step's heal
		case schedule.DiskEIO:
			f.EIO = []string{"fsync"}
		case schedule.DiskSlow:
			f.Slow = 20
		case schedule.DiskPowerCut: // armed, then the host goes down with it
			f.LoseUnsynced = true
			if err := d.l.Inject(ctx, f); err != nil {
				return err
			}
			return d.l.Inject(ctx, chaos.Crash(e.Targets))
		}
		return d.l.Inject(ctx, f)
	case schedule.Disconnect:
		return d.l.Inject(ctx, chaos.Disconnect{Names: e.Targets})
	case schedule.Packets:
		return d.l.Inject(ctx, chaos.Link{Verb: fault.Kind(e.Packet), Link: e.Targets[0], Value: fmt.Sprintf("%g%%", e.Share)})
	}
	return fmt.Errorf("unknown fault %q", e.Kind)
}

// hostsOf are the hosts of the nodes named (a machine fault acts on them).
func hostsOf(p *plan.Plan, names []string) []string {
	var hosts []string
	for _, n := range nodes(p, names) {
		hosts = append(hosts, n.Host)
	}
	return hosts
}

// labLinks are the names of the lab's WAN links (none without regions).
func labLinks(p *plan.Plan) []string {
	out := []string{}
	if p.WAN == nil {
		return out
	}
	for _, k := range p.WAN.Links {
		if len(k.Between) == 2 {
			out = append(out, netem.LinkName(k.Between[0], k.Between[1]))
		}
	}
	return out
}

// saveSchedule stores the schedule with the run, before its first step:
// an interrupted drill's schedule can be run again too.
func (d *drill) saveSchedule() error {
	b, err := json.MarshalIndent(d.sched, "", "  ")
	if err != nil {
		return err
	}
	dir := results.RunDir(d.l.Home(), d.res.RunID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ScheduleFile), append(b, '\n'), 0o644)
}

// later is the later of two times.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// sleepUntil sleeps until t (or ctx ends).
func sleepUntil(ctx context.Context, t time.Time) {
	if d := time.Until(t); d > 0 {
		sleep(ctx, d)
	}
}
