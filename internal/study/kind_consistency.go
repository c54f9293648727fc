package study

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/workload"
)

// consistencyKind is the step kind consistency: a history workload's
// clients (workload: list-append transactions, a bank's transfers, a set's
// adds; its figures are the workload's, workload.HistoryFigures), two per
// database node, each node
// directly (or as many through the target the step or its variant names),
// for the scale's time; the history is stored with the step's run and
// checked (hadrill check): its figures are what the check found.
var consistencyKind = &stepKind{
	name:    "consistency",
	metrics: workload.AllHistoryFigures(),
	fields:  []string{"workload"},
	metricsOf: func(st Step) []string {
		var out []string
		for _, f := range workload.HistoryFigures(st.Workload) {
			out = append(out, f.Name)
		}
		return out
	},
	step: func(st Step, add func(string, string, ...any)) {
		if st.Workload != "" && !slices.Contains(workload.HistoryWorkloads, st.Workload) {
			add("workload", "expected one of %s, got %q", strings.Join(workload.HistoryWorkloads, ", "), st.Workload)
		}
	},
	scale: func(st Step, sc Scale, add func(string, string, ...any)) {
		if sc.Time < 1 || sc.Time > 86400 {
			add("time", "expected 1 to 86400 seconds (step %s), got %d", st.Name, sc.Time)
		}
	},
	measure: func(ctx context.Context, m measurement) ([]Sample, error) {
		names := m.lab.Plan().NodeNames() // by default every node directly
		switch {
		case m.named && m.target != plan.NodesAlias:
			names = strings.Split(m.target, ",")
		case m.readTarget != "": // reads apart: the writes where an application sends them
			names = []string{plan.LBAlias}
		}
		var targets []workload.Endpoint
		for _, n := range names {
			e, err := workload.Resolve(ctx, m.lab, n, "")
			if err != nil {
				return nil, err
			}
			targets = append(targets, e)
		}
		readers, readNames, err := workload.ResolveReads(ctx, m.lab, m.readTarget)
		if err != nil {
			return nil, err
		}
		clients := 2 * len(targets)
		if len(readers) > 0 {
			clients = 2 * max(len(targets), len(readers))
		}
		p := workload.HistoryParams{Workload: m.step.Workload, Clients: clients, Time: time.Duration(m.scale.Time) * time.Second, Keys: workload.HistoryKeys(m.step.Workload), MaxOps: 4,
			SyncWait: -1, Model: "strict-serializable", Targets: names, ReadTargets: readNames}
		out, err := workload.Consistency(ctx, m.lab, targets, readers, p, m.opts.Command, io.Discard)
		if err != nil {
			return nil, err
		}
		if out.Check == nil {
			return nil, errors.New("no history checked")
		}
		var figures []any
		for _, f := range workload.HistoryFigures(p.Workload) {
			figures = append(figures, f.Name, f.Of(out.Check, p.Time))
		}
		return samples(m.step, out.RunID, figures...), nil
	},
	describe: func(st Step, metric string) string { return workload.DescribeHistoryFigure(st.Workload, metric) },
}
