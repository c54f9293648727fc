package study

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/hadrill/hadrill/internal/workload"
)

// bulkReplicationKind is the step kind bulk-replication: N single-row commits on one node, timed until all are
// readable on another (by default the first and the last node: in two
// regions, one in each).
var bulkReplicationKind = &stepKind{
	name:    "bulk-replication",
	fields:  []string{"from", "to"},
	metrics: []string{"visible_s", "after_last_s"},
	per:     func(sc Scale) []int { return sc.Rows },
	scale: func(st Step, sc Scale, add func(string, string, ...any)) {
		counts(add, "rows", "row count", st.Name, sc.Rows, 10_000_000)
	},
	measure: func(ctx context.Context, m measurement) ([]Sample, error) {
		a, b, err := pair(ctx, m.lab, m.step)
		if err != nil {
			return nil, err
		}
		out, err := workload.BulkReplication(ctx, m.lab, a, b, m.scale.Rows, m.opts.Command, io.Discard)
		if err != nil {
			return nil, err
		}
		var got []Sample
		rows, _ := out.Results.([]workload.Bulk)
		for _, r := range rows {
			got = append(got, samples(m.step, out.RunID, fmt.Sprintf("visible_s@%d", r.Rows), r.VisibleS, fmt.Sprintf("after_last_s@%d", r.Rows), r.AfterLastS)...)
		}
		return got, nil
	},
	describe: func(st Step, metric string) string {
		n := metric[strings.Index(metric, "@")+1:]
		if strings.HasPrefix(metric, "after_last_s@") {
			return fmt.Sprintf("Seconds from the last of %s single-row commits until all are on the other node", n)
		}
		return fmt.Sprintf("Seconds from the first of %s single-row commits until all are on the other node", n)
	},
}

// pair resolves the two nodes a step writes on and reads from (From and
// To; by default the lab's first and last node).
func pair(ctx context.Context, l workload.Lab, st Step) (from, to workload.Endpoint, err error) {
	names := l.Plan().NodeNames()
	a, b := st.From, st.To
	if a == "" {
		a = names[0]
	}
	if b == "" {
		b = names[len(names)-1]
	}
	if from, err = workload.Resolve(ctx, l, a, ""); err != nil {
		return
	}
	to, err = workload.Resolve(ctx, l, b, "")
	return
}
