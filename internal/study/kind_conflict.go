package study

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/hadrill/hadrill/internal/workload"
)

// conflictKind is the step kind conflict: two primaries replicating into each other (a ring) both
// increment rows at once, a commit an increment, each on its own server;
// once each has applied the other's writes, their rows are compared.
var conflictKind = &stepKind{
	name:    "conflict",
	fields:  []string{"from", "to", "keys", "rows"},
	metrics: []string{"lost_writes", "diverged_rows", "settle_s"},
	step: func(st Step, add func(string, string, ...any)) {
		if st.Keys != "" && st.Keys != workload.KeysShared && st.Keys != workload.KeysOwn {
			add("keys", "expected %s or %s, got %q", workload.KeysShared, workload.KeysOwn, st.Keys)
		}
		if st.Rows < 0 || st.Rows > 100_000 {
			add("rows", "expected 1 to 100000 rows (0: 10), got %d", st.Rows)
		}
	},
	scale: func(st Step, sc Scale, add func(string, string, ...any)) {
		if sc.Count < 1 || sc.Count > 1_000_000 {
			add("count", "expected 1 to 1000000 increments per server (step %s), got %d", st.Name, sc.Count)
		}
	},
	measure: func(ctx context.Context, m measurement) ([]Sample, error) {
		a, b, err := pair(ctx, m.lab, m.step)
		if err != nil {
			return nil, err
		}
		st := m.step
		out, err := workload.Conflicts(ctx, m.lab, a, b, cmp.Or(st.Keys, workload.KeysShared), cmp.Or(st.Rows, 10), m.scale.Count, m.opts.Command, io.Discard)
		if err != nil {
			return nil, err
		}
		got, _ := out.Results.([]workload.Conflict)
		if len(got) == 0 {
			return nil, errors.New("no conflict test completed")
		}
		c := got[0]
		return samples(st, out.RunID, "lost_writes", float64(c.Lost), "diverged_rows", float64(c.Diverged), "settle_s", c.SettleS), nil
	},
	describe: func(st Step, metric string) string {
		on := map[bool]string{true: "each its own rows", false: "the same rows"}[st.Keys == workload.KeysOwn]
		switch metric {
		case "lost_writes":
			return fmt.Sprintf("Acknowledged increments a server no longer counts, both primaries writing %s at once", on)
		case "diverged_rows":
			return fmt.Sprintf("Rows the two primaries hold differently once each applied the other's writes (%s)", on)
		}
		return fmt.Sprintf("Seconds from the last write until each primary applied the other's (%s)", on)
	},
}
