package study

import (
	"context"
	"fmt"
	"github.com/hadrill/hadrill/internal/words"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/workload"
)

// stepKind is one kind of study step: the figures it yields, what it asks
// of a step and of a scale, how it measures and how a report describes its
// figures. Each kind registers itself from a file of its own (kind_*.go);
// nothing else in the package switches on a step's kind.
type stepKind struct {
	name string
	// metrics are the figures a run yields; with per, each of them once
	// per count the scale gives ("tps@32").
	metrics []string
	per     func(Scale) []int
	// metricsOf, when set, narrows metrics to what a step measures (a
	// consistency step's workload decides its figures).
	metricsOf func(Step) []string
	// endpoint: the kind runs against a server outside any lab
	// (mysql://HOST:PORT). hostList: it may target the nodes as one host
	// list. local: it measures something emulated on this computer, so it
	// cannot run on remote hosts.
	endpoint, hostList, local bool
	// tool is the load program it runs (its version is set beside the
	// document's); warmup: it runs the scale's warm-up before each
	// measured run.
	tool   string
	warmup bool
	// least is the least time a step takes once at a scale (what the
	// scale fixes: measured and warm-up time), for a study's estimate.
	least func(st Step, sc Scale) time.Duration
	// serverless: it measures no server (a disk's own benchmark), so the
	// server's version is no deviation of it.
	serverless bool
	// priced: its tps figures give TPS per dollar for a priced variant;
	// histograms: its runs store latency histograms the report draws.
	priced, histograms bool
	// fields are the step's fields (beside name, kind, target, about) the
	// kind reads; a step of another kind that sets one is refused.
	fields []string
	// step reports problems with a step's own fields (add names the
	// field); scale, with what a scale gives this step.
	step  func(st Step, add func(field, format string, a ...any))
	scale func(st Step, sc Scale, add func(field, format string, a ...any))
	// measure runs the step once on a lab, against target (a load
	// balancer, a node, or an endpoint with its credentials file).
	measure func(ctx context.Context, m measurement) ([]Sample, error)
	// describe says in words what a figure is.
	describe func(st Step, metric string) string
	// data is the data set the kind loads on each node at a scale (nil:
	// none worth counting), for what a study's labs need.
	data func(sc Scale) dataset
}

// measurement is what one step's run is given.
type measurement struct {
	lab                 workload.Lab
	log                 *labLog // where the lab says what it does (nil: not a lab the study made)
	step                Step
	scale               Scale
	opts                Options
	target, credentials string
	named               bool   // the step or its variant named the target (else the default, lb)
	readTarget          string // the variant's read target (consistency steps)
	// study and round (1, 2, …): a chaos step's schedule is drawn from
	// them, so every variant of a round takes the same schedule
	study string
	round int
}

// stepKinds are the step kinds, in the order they are listed (a new kind:
// its file's variable, and a place here).
var stepKinds = []*stepKind{sysbenchKind, slapKind, tpccKind, commitLatencyKind, bulkReplicationKind, semisyncReceiptKind,
	donorProbeKind, conflictKind, diskKind, drillKind, consistencyKind}

// kindOf is a step's kind (nil for one that does not exist; Load refuses it).
func kindOf(st Step) *stepKind { return kindNamed(st.Kind) }

func kindNamed(name string) *stepKind {
	for _, k := range stepKinds {
		if k.name == name {
			return k
		}
	}
	return nil
}

// StepKindNames are the step kinds' names, sorted.
func StepKindNames() []string {
	var out []string
	for _, k := range stepKinds {
		out = append(out, k.name)
	}
	sort.Strings(out)
	return out
}

// Metrics are the figures a step yields at a scale: sysbench's per thread
// count ("tps@32").
func (st Step) Metrics(sc Scale) []string {
	k := kindOf(st)
	if k == nil {
		return nil
	}
	if k.metricsOf != nil {
		return k.metricsOf(st)
	}
	if k.per == nil {
		return k.metrics
	}
	var out []string
	for _, n := range k.per(sc) {
		for _, m := range k.metrics {
			out = append(out, fmt.Sprintf("%s@%d", m, n))
		}
	}
	return out
}

// stepFields are the fields some kinds read, and whether a step sets each.
var stepFields = []struct {
	name string
	set  func(Step) bool
}{
	{"workload", func(s Step) bool { return s.Workload != "" }},
	{"rand_type", func(s Step) bool { return s.RandType != "" }},
	{"auto_inc", func(s Step) bool { return s.AutoInc != nil }},
	{"time_factor", func(s Step) bool { return s.TimeFactor != 0 }},
	{"from", func(s Step) bool { return s.From != "" }},
	{"to", func(s Step) bool { return s.To != "" }},
	{"keys", func(s Step) bool { return s.Keys != "" }},
	{"rows", func(s Step) bool { return s.Rows != 0 }},
	{"node", func(s Step) bool { return s.Node != "" }},
	{"volume", func(s Step) bool { return s.Volume != "" }},
	{"test", func(s Step) bool { return s.Test != "" }},
	{"idle_before", func(s Step) bool { return s.IdleBefore != 0 }},
	{"load", func(s Step) bool { return s.Load != "" }},
	{"dataset", func(s Step) bool { return s.Dataset != "" }},
	{"query", func(s Step) bool { return s.Query != "" }},
	{"queries", func(s Step) bool { return s.Queries != 0 }},
	{"scenario", func(s Step) bool { return s.Scenario != "" }},
	{"check", func(s Step) bool { return s.Check }},
}

// stepProblems checks a step against its kind: the kind exists, the
// fields set are the kind's, and the kind's own checks pass.
func stepProblems(st Step, add func(field, format string, a ...any)) {
	k := kindOf(st)
	if k == nil {
		add("kind", "expected one of %s, got %q", strings.Join(StepKindNames(), ", "), st.Kind)
		return
	}
	for _, f := range stepFields {
		if f.set(st) && !slices.Contains(k.fields, f.name) {
			add(f.name, "is for %s steps, got a %s step", words.And(kindsReading(f.name)), st.Kind)
		}
	}
	if st.Target == plan.NodesAlias && !k.hostList {
		add("target", "%q (the nodes as one host list) is for %s steps only, got a %s step", st.Target, words.And(kindsWhere(func(k *stepKind) bool { return k.hostList })), st.Kind)
	}
	if k.step != nil {
		k.step(st, add)
	}
}

// kindsReading are the kinds that read a step field.
func kindsReading(field string) []string {
	return kindsWhere(func(k *stepKind) bool { return slices.Contains(k.fields, field) })
}

func kindsWhere(keep func(*stepKind) bool) []string {
	var out []string
	for _, k := range stepKinds {
		if keep(k) {
			out = append(out, k.name)
		}
	}
	sort.Strings(out)
	return out
}

// counts checks a list of counts a scale gives a step (thread counts, row
// counts, …).
func counts(add func(field, format string, a ...any), field, what, step string, list []int, most int) {
	if len(list) == 0 {
		add(field, "at least one %s is required (step %s)", what, step)
	}
	for _, n := range list {
		if n < 1 || n > most {
			add(field, "expected %ss from 1 to %d, got %d", what, most, n)
		}
	}
}

// samples names a run's figures for a step.
func samples(st Step, runID string, figures ...any) []Sample {
	var out []Sample
	for i := 0; i+1 < len(figures); i += 2 {
		out = append(out, Sample{Step: st.Name, Metric: figures[i].(string), Value: figures[i+1].(float64), RunID: runID})
	}
	return out
}
