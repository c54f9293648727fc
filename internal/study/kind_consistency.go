package study

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/consistency"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/workload"
)

// consistency: list-append transactions (or, with workload bank, transfers
// between five accounts) from two clients per database node, each node
// directly (or as many through the target the step or its variant names),
// for the scale's time; the history is stored with the step's run and
// checked (hadrill check): its figures are what the check found.
func init() {
	register(&stepKind{
		name: "consistency",
		metrics: []string{"committed_per_s", "lost_updates", "stale_reads", "realtime_cycles", "lost_appends", "cycles", "long_forks", "stale_read_pct", "behind_p99_ms", "wrong_totals", "negative_values",
			"lost_elements", "stale_elements", "visible_p99_ms"},
		fields: []string{"workload"},
		metricsOf: func(st Step) []string {
			switch st.Workload {
			case "bank":
				return []string{"committed_per_s", "wrong_totals", "negative_values"}
			case "set":
				return []string{"committed_per_s", "lost_elements", "stale_elements", "visible_p99_ms", "stale_read_pct", "behind_p99_ms"}
			}
			return []string{"committed_per_s", "lost_updates", "stale_reads", "realtime_cycles", "lost_appends", "cycles", "long_forks", "stale_read_pct", "behind_p99_ms"}
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
			c := out.Check
			realtime := 0
			for _, a := range c.Anomalies {
				if strings.HasSuffix(a.Type, "-realtime") {
					realtime += a.Count
				}
			}
			if f := c.Set; f != nil { // the set's figures only
				return samples(m.step, out.RunID,
					"committed_per_s", float64(c.OK)/p.Time.Seconds(),
					"lost_elements", float64(f.Lost),
					"stale_elements", float64(f.Stale),
					"visible_p99_ms", 1000*f.VisibleP99,
					"stale_read_pct", stalePct(c),
					"behind_p99_ms", behindP99(c)), nil
			}
			if p.Workload == "bank" { // the bank's figures only: the list-append ones are not measured by it
				return samples(m.step, out.RunID,
					"committed_per_s", float64(c.OK)/p.Time.Seconds(),
					"wrong_totals", float64(c.Count("wrong-total")),
					"negative_values", float64(c.Count("negative-value"))), nil
			}
			return samples(m.step, out.RunID,
				"committed_per_s", float64(c.OK)/p.Time.Seconds(),
				"lost_updates", float64(c.Count("lost-update")),
				"stale_reads", float64(c.Count("G-single-realtime")),
				"realtime_cycles", float64(realtime),
				"lost_appends", float64(c.Count("lost")),
				"cycles", float64(c.Count(consistency.DataCycles...)),
				"long_forks", float64(c.Count(consistency.LongFork)),
				"stale_read_pct", stalePct(c),
				"behind_p99_ms", behindP99(c)), nil
		},
		describe: func(st Step, metric string) string {
			what := map[string]string{
				"committed_per_s": "Transactions committed per second",
				"lost_updates":    "Lost updates (P4): two committed transactions read the same version and both wrote it",
				"stale_reads":     "Stale reads: G-single through real time (a transaction missed one that completed before it began)",
				"realtime_cycles": "Every cycle through real time (stale reads, and write skew across real time)",
				"lost_appends":    "Acknowledged appends no later read ever saw",
				"cycles":          "Dependency cycles without real-time or process order (G0, G1c, G-single, G2-item with G-nonadjacent and long forks, and reads undecided between two)",
				"long_forks":      "Long forks: two readers saw two writes in opposite orders (snapshot isolation forbids it)",
				"stale_read_pct":  "Share of committed reads that missed a write acknowledged before they began, in %",
				"behind_p99_ms":   "How far behind the stale reads were at the 99th percentile, at least (the time since the earliest write they missed was acknowledged), in ms",
				"wrong_totals":    "Reads of every balance whose total was not the opening one (money made or destroyed)",
				"negative_values": "Reads that saw a balance below zero",
				"lost_elements":   "Set elements acknowledged (or seen) and then missing from every read since some moment",
				"stale_elements":  "Set elements every read saw in the end, but one that began after they were known missed",
				"visible_p99_ms":  "How long after its acknowledgement a set element was still missed by a read, at the 99th percentile of the elements, at least, in ms",
			}[metric]
			if st.Workload == "set" {
				if metric == "committed_per_s" {
					what = "Adds and reads committed per second"
				}
				return what + ", adds of unique elements and reads of the whole set from every client"
			}
			if st.Workload == "bank" {
				if metric == "committed_per_s" {
					what = "Transfers and reads committed per second"
				}
				return what + ", transfers between five accounts from every client"
			}
			return fmt.Sprintf("%s, list-append transactions from every client", what)
		},
	})
}

// stalePct is the share of the committed reads that were stale, in %.
func stalePct(c *consistency.Result) float64 {
	if len(c.Reads) == 0 || c.Reads[0].Reads == 0 {
		return 0
	}
	return 100 * float64(c.Reads[0].Stale) / float64(c.Reads[0].Reads)
}

// behindP99 is the stale reads' 99th percentile behind, in ms (0: none).
func behindP99(c *consistency.Result) float64 {
	if len(c.Reads) == 0 {
		return 0
	}
	return 1000 * c.Reads[0].BehindP99
}
