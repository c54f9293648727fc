package study

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/drill"
)

// drill: a fault under load, as `hadrill drill SCENARIO --workload append`
// runs it: acknowledged writes through the load balancer and list-append
// transactions from clients on every node, the scale's time of traffic
// before the fault and after the cluster is whole again; its figures are
// the acknowledged-write audit's and the checked history's.
func init() {
	register(&stepKind{
		name: "drill",
		metrics: []string{"lost_writes", "gap_s", "lost_appends", "lost_any", "lost_updates", "stale_reads", "cycles",
			"committed_appends", "unknown_appends", "passed", "recovered_by_hand"},
		fields: []string{"scenario", "workload"},
		step: func(st Step, add func(string, string, ...any)) {
			if _, ok := drill.Lookup(st.Scenario); !ok {
				add("scenario", "expected a drill (%s), got %q", strings.Join(drillNames(), ", "), st.Scenario)
			} else if !slices.Contains(studyDrills, st.Scenario) {
				add("scenario", "a study runs the drills that need no target named (%s), got %q", strings.Join(studyDrills, ", "), st.Scenario)
			}
			if st.Workload != "" && !slices.Contains(drill.Workloads, st.Workload) {
				add("workload", "expected one of %s, got %q", strings.Join(drill.Workloads, ", "), st.Workload)
			}
		},
		scale: func(st Step, sc Scale, add func(string, string, ...any)) {
			if sc.Time < 1 || sc.Time > 3600 {
				add("time", "expected 1 to 3600 seconds of traffic before the fault and after recovery (step %s), got %d", st.Name, sc.Time)
			}
		},
		measure: func(ctx context.Context, m measurement) ([]Sample, error) {
			l, ok := m.lab.(drill.Lab)
			if !ok {
				return nil, errors.New("a drill step needs a lab of hadrill's own")
			}
			wl := m.step.Workload
			if wl == "" {
				wl = "append"
			}
			t := time.Duration(m.scale.Time) * time.Second
			// read-committed: the drill passes unless it lost acknowledged
			// work or shows what no isolation level allows; every anomaly
			// found is counted whatever the model
			res, err := drill.Run(ctx, l, drill.Options{Scenario: m.step.Scenario, Workload: wl, Model: "read-committed", Rate: 100,
				Before: t, After: t, Hold: 30 * time.Second, Timeout: 90 * time.Second, Command: m.opts.Command, Log: io.Discard})
			if res == nil {
				return nil, err
			}
			if res.Interrupted {
				return nil, fmt.Errorf("drill %s interrupted", m.step.Scenario)
			}
			passed := 0.0
			if res.Passed {
				passed = 1
			}
			out := []any{"lost_writes", float64(res.LostCount), "gap_s", res.Gap.Seconds, "passed", passed, "recovered_by_hand", float64(len(res.Interventions))}
			lostAny := 0.0
			if res.LostCount > 0 || res.Consistency != nil && res.Consistency.Count("lost") > 0 {
				lostAny = 1
			}
			out = append(out, "lost_any", lostAny)
			if c := res.Consistency; c != nil {
				out = append(out, "lost_appends", float64(c.Count("lost")), "lost_updates", float64(c.Count("lost-update")),
					"stale_reads", float64(c.Count("G-single-realtime")), "cycles", float64(c.Count("G0", "G1c", "G-single", "G2-item")),
					"committed_appends", float64(c.OK), "unknown_appends", float64(c.Info))
			}
			return samples(m.step, res.RunID, out...), nil
		},
		describe: func(st Step, metric string) string {
			what := map[string]string{
				"lost_writes":       "Acknowledged writes lost",
				"gap_s":             "Seconds the clients saw no acknowledged write",
				"lost_appends":      "Acknowledged appends no later read saw",
				"lost_any":          "Drills that lost acknowledged work (1) or not (0)",
				"lost_updates":      "Lost updates (P4)",
				"stale_reads":       "Stale reads (G-single through real time)",
				"cycles":            "Dependency cycles without real-time or process order",
				"committed_appends": "List-append transactions committed",
				"unknown_appends":   "List-append transactions of unknown outcome",
				"passed":            "Drills passed (1) or not (0): nothing acknowledged lost, nothing read committed forbids",
				"recovered_by_hand": "Times the cluster had to be given a primary component back by hand (hadrill recover)",
			}[metric]
			return fmt.Sprintf("%s, drill %s with list-append transactions from every node", what, st.Scenario)
		},
	})
}

// studyDrills are the drills a study step runs: those that need no target
// named (the whole cluster, or the load balancer's writer by default).
var studyDrills = []string{"failover", "partition", "pause", "crash-partition", "full-outage", "rolling-restart"}

func drillNames() []string {
	var out []string
	for _, s := range drill.Scenarios() {
		out = append(out, s.Name)
	}
	return out
}
