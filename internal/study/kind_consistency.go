package study

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/workload"
)

// consistency: list-append transactions from two clients per database
// node, each node directly (or as many through the target the step or its
// variant names), for the scale's time; the history is stored with the step's
// run and checked (hadrill check): its figures are what the check found.
func init() {
	register(&stepKind{
		name:    "consistency",
		metrics: []string{"committed_per_s", "lost_updates", "stale_reads", "realtime_cycles", "lost_appends", "cycles"},
		scale: func(st Step, sc Scale, add func(string, string, ...any)) {
			if sc.Time < 1 || sc.Time > 86400 {
				add("time", "expected 1 to 86400 seconds (step %s), got %d", st.Name, sc.Time)
			}
		},
		measure: func(ctx context.Context, m measurement) ([]Sample, error) {
			names := m.lab.Plan().NodeNames() // by default every node directly
			if m.named && m.target != plan.NodesAlias {
				names = strings.Split(m.target, ",")
			}
			var targets []workload.Endpoint
			for _, n := range names {
				e, err := workload.Resolve(ctx, m.lab, n, "")
				if err != nil {
					return nil, err
				}
				targets = append(targets, e)
			}
			p := workload.AppendParams{Clients: 2 * len(targets), Time: time.Duration(m.scale.Time) * time.Second, Keys: 10, MaxOps: 4,
				SyncWait: -1, Model: "strict-serializable", Targets: names}
			out, err := workload.Consistency(ctx, m.lab, targets, p, m.opts.Command, io.Discard)
			if err != nil {
				return nil, err
			}
			if out.Check == nil {
				return nil, errors.New("no history checked")
			}
			count := func(match func(string) bool) float64 {
				n := 0
				for _, a := range out.Check.Anomalies {
					if match(a.Type) {
						n += a.Count
					}
				}
				return float64(n)
			}
			is := func(t string) func(string) bool { return func(s string) bool { return s == t } }
			base := func(s string) bool {
				return s == "G0" || s == "G1c" || s == "G-single" || s == "G2-item"
			}
			return samples(m.step, out.RunID,
				"committed_per_s", float64(out.Check.OK)/p.Time.Seconds(),
				"lost_updates", count(is("lost-update")),
				"stale_reads", count(is("G-single-realtime")),
				"realtime_cycles", count(func(s string) bool { return strings.HasSuffix(s, "-realtime") }),
				"lost_appends", count(is("lost")),
				"cycles", count(base)), nil
		},
		describe: func(st Step, metric string) string {
			what := map[string]string{
				"committed_per_s": "Transactions committed per second",
				"lost_updates":    "Lost updates (P4): two committed transactions read the same version and both wrote it",
				"stale_reads":     "Stale reads: G-single through real time (a transaction missed one that completed before it began)",
				"realtime_cycles": "Every cycle through real time (stale reads, and write skew across real time)",
				"lost_appends":    "Acknowledged appends no later read ever saw",
				"cycles":          "Dependency cycles without real-time or process order (G0, G1c, G-single, G2-item)",
			}[metric]
			return fmt.Sprintf("%s, list-append transactions from every client", what)
		},
	})
}
