package study

import (
	"context"
	"errors"
	"io"

	"github.com/hadrill/hadrill/internal/workload"
)

// commitLatencyKind is the step kind commit-latency: autocommit INSERTs, one at a time, timed one by one.
var commitLatencyKind = &stepKind{
	name:     "commit-latency",
	metrics:  []string{"avg_ms", "p50_ms", "p99_ms"},
	endpoint: true,
	scale: func(st Step, sc Scale, add func(string, string, ...any)) {
		if sc.Count < 1 || sc.Count > 1_000_000 {
			add("count", "expected 1 to 1000000 INSERTs (step %s), got %d", st.Name, sc.Count)
		}
	},
	measure: func(ctx context.Context, m measurement) ([]Sample, error) {
		e, err := workload.Resolve(ctx, m.lab, m.target, m.credentials)
		if err != nil {
			return nil, err
		}
		out, err := workload.CommitLatency(ctx, m.lab, []workload.Endpoint{e}, m.scale.Count, m.opts.Command, io.Discard)
		if err != nil || len(out.Results) == 0 {
			return nil, errors.Join(err, errIf(err == nil, "no commit measured"))
		}
		r := out.Results[0]
		return samples(m.step, out.RunID, "avg_ms", r.Avg, "p50_ms", r.P50, "p99_ms", r.P99), nil
	},
	describe: func(Step, string) string { return "Mean time of an autocommit INSERT" },
}
