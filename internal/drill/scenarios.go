package drill

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/spec"
)

// Scenario is one drill: the fault it applies under traffic and how the
// cluster recovers from it. A new drill is a file defining one Scenario and
// a line in registry; the CLI builds its commands from the registry, and
// judging (verdict.go) is the same for every scenario.
type Scenario struct {
	Name  string
	Usage string // the command line after `hadrill drill`
	Short string
	// MaxTargets is how many targets the command takes (-1: any number,
	// 0: none: the scenario acts on the whole cluster). NodeFlag adds
	// --node as another way to name the one target.
	MaxTargets int
	NodeFlag   bool
	// CrashFlag adds --crash: the target's host crashes (every process,
	// its NICs down) instead of its server being killed.
	CrashFlag bool
	// Aliases are other names the CLI takes for the drill.
	Aliases []string
	// OnLB: the fault is a load balancer host's; the cluster itself is not
	// touched (no re-forming or syncing to report).
	OnLB bool
	// Replicated: the drill also runs on a primary cluster (replicas
	// following a primary); AutoFailover: there, only with failover: auto.
	Replicated, AutoFailover bool
	// targets resolves the targets given (defaults when none) and checks
	// them against the lab before anything starts.
	targets func(d *drill, given []string) ([]string, error)
	// inject applies the fault and its recovery; it returns the time of the
	// last fault step (the cluster must be whole after it).
	inject func(ctx context.Context, d *drill) (time.Time, error)
	// faulted is how many of the cluster's members the fault takes away
	// while it holds; reformed, whether a sample shows the cluster re-formed
	// without them. Nil: the scenario has no re-formed time of its own.
	faulted  func(d *drill) int
	reformed func(d *drill, r *Result)
	// undo is what an interrupted drill undoes beyond Heal (nil: nothing).
	undo func(ctx context.Context, d *drill) error
}

// Reforms says whether the drill has a re-formed time of its own (the
// survivors forming a primary component without the faulted members).
func (s *Scenario) Reforms() bool { return s.reformed != nil }

// The drills' names.
const (
	Failover       = "failover"
	Partition      = "partition"
	FullOutage     = "full-outage"
	RollingRestart = "rolling-restart"
	LBFailover     = "lb-failover"
	LBCrash        = "lb-crash"
	DomainOutage   = "domain-outage"
	Pause          = "pause"
	CrashPartition = "crash-partition"
	Drain          = "drain"
	Resync         = "resync"
	Flap           = "flap"
	FaultDrill     = "fault"
	ChaosDrill     = "chaos"
)

// registry lists the drills, in the order the CLI shows them.
var registry = []*Scenario{&failover, &partition, &fullOutage, &rollingRestart, &pause, &crashPartition, &drain, &resync, &flap, &lbFailover, &lbCrash, &domainOutage, &anyFault, &chaosDrill}

// Scenarios are the drills there are.
func Scenarios() []*Scenario { return registry }

// Lookup finds a drill by name.
func Lookup(name string) (*Scenario, bool) {
	i := slices.IndexFunc(registry, func(s *Scenario) bool { return s.Name == name })
	if i < 0 {
		return nil, false
	}
	return registry[i], true
}

// names lists the drills' names, for messages.
func names() string {
	var out []string
	for _, s := range registry {
		out = append(out, s.Name)
	}
	return strings.Join(out, ", ")
}

// wholeCluster: scenarios acting on every node of the cluster take no targets.
func wholeCluster(d *drill, given []string) ([]string, error) {
	return append([]string(nil), d.cluster.Nodes...), nil
}

// reformedWithout records when the survivors re-formed a primary component
// without the faulted members (and before the cluster was whole again).
func reformedWithout(d *drill, r *Result) {
	survivors := d.cluster.Members() - d.sc.faulted(d)
	moved := func(s Sample) bool { return s.Reformed(r.Targets, survivors) && !s.Whole(d.cluster.Members()) }
	if d.cluster.Kind == spec.KindPrimary {
		// a primary cluster re-forms when another node takes the writes of
		// a faulted primary (it may be whole at once: the old one fenced)
		if !slices.Contains(r.Targets, d.s.writerBefore(d.faultAt)) {
			return // the fault spared the primary: nothing had to re-form
		}
		moved = func(s Sample) bool { return s.Reformed(r.Targets, 0) }
	}
	if t, ok := d.s.first(d.faultAt, moved); ok {
		r.ReformedS = secs(t.Sub(d.faultAt))
	}
}

// replicatedNames lists the drills that run on primary clusters.
func replicatedNames() string {
	var out []string
	for _, s := range registry {
		if s.Replicated {
			out = append(out, s.Name)
		}
	}
	return strings.Join(out, ", ")
}

// oneNode: scenarios acting on one node of the cluster, the load
// balancer's writer by default.
func oneNode(d *drill, given []string) ([]string, error) {
	t, err := d.activeOr(given)
	if err != nil {
		return nil, err
	}
	if len(t) != 1 || !slices.Contains(d.cluster.Nodes, t[0]) {
		return nil, hderr.User("NODE: %q is not a node of cluster %s (nodes: %s, or active)", strings.Join(t, " "), d.cluster.Name, strings.Join(d.cluster.Nodes, ", "))
	}
	return t, nil
}
