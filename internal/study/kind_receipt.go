package study

import (
	"context"
	"errors"
	"io"

	"github.com/hadrill/hadrill/internal/workload"
)

// semisyncReceiptKind is the step kind semisync-receipt: what a semi-sync acknowledgement promises. The
// replica's applier stopped, autocommit INSERTs on the primary (from; by
// default the lab's first node) are timed one by one; the share the
// replica (to; by default the last node) acknowledged without having
// them committed, and the commits' time.
var semisyncReceiptKind = &stepKind{
	name:    "semisync-receipt",
	fields:  []string{"from", "to"},
	metrics: []string{"acked_unapplied", "async_share", "avg_ms"},
	scale: func(st Step, sc Scale, add func(string, string, ...any)) {
		if sc.Count < 1 || sc.Count > 100_000 {
			add("count", "expected 1 to 100000 INSERTs (step %s), got %d", st.Name, sc.Count)
		}
	},
	measure: func(ctx context.Context, m measurement) ([]Sample, error) {
		a, b, err := pair(ctx, m.lab, m.step)
		if err != nil {
			return nil, err
		}
		out, err := workload.SemiSyncReceipt(ctx, m.lab, a, b, m.scale.Count, m.opts.Command, io.Discard)
		if err != nil {
			return nil, err
		}
		rs, _ := out.Results.([]workload.Receipt)
		if len(rs) == 0 || rs[0].Commits == 0 {
			return nil, errors.New("no commit measured")
		}
		r := rs[0]
		return samples(m.step, out.RunID, "acked_unapplied", r.AckedUnapplied(), "async_share", float64(r.Async)/float64(r.Commits), "avg_ms", r.AvgMs), nil
	},
	describe: func(_ Step, metric string) string {
		switch metric {
		case "acked_unapplied":
			return "Share of commits the replica acknowledged without having them committed (its applier stopped)"
		case "async_share":
			return "Share of commits the primary returned without the replica's acknowledgement"
		}
		return "Mean time of an autocommit INSERT, the replica's applier stopped"
	},
}
