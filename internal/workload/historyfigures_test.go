package workload

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/consistency"
)

// Each history workload gives its own figures, described with what its
// clients do; a study's consistency step lists them all once, in order.
func TestHistoryFigures(t *testing.T) {
	if got, want := AllHistoryFigures(), []string{"committed_per_s", "lost_updates", "stale_reads", "realtime_cycles", "lost_appends", "cycles", "long_forks",
		"stale_read_pct", "behind_p99_ms", "wrong_totals", "negative_values", "lost_elements", "stale_elements", "visible_p99_ms", "lost_increments", "stale_counter_reads", "too_high_reads"}; !slices.Equal(got, want) {
		t.Errorf("every figure: %v, want %v", got, want)
	}
	for _, w := range HistoryWorkloads {
		if len(HistoryFigures(w)) == 0 || HistoryFigures(w)[0].Name != "committed_per_s" {
			t.Errorf("%s: figures %v, want committed_per_s first", w, HistoryFigures(w))
		}
	}
	if got, want := DescribeHistoryFigure("bank", "committed_per_s"), "Transfers and reads committed per second, transfers between five accounts from every client"; got != want {
		t.Errorf("bank committed_per_s: %q, want %q", got, want)
	}
	if got := DescribeHistoryFigure("bank", "stale_reads"); got != "" {
		t.Errorf("bank has no stale_reads figure, described as %q", got)
	}
	c := &consistency.Result{OK: 50, Anomalies: []consistency.Anomaly{{Type: "G-single-realtime", Count: 3}, {Type: "G2-item-realtime", Count: 2}, {Type: "lost-update", Count: 1}},
		Reads: []consistency.Freshness{{Reads: 200, Stale: 10, BehindP99: 0.25}}, Own: &consistency.Own{Values: map[string]float64{"lost": 4, "visible_after_p99_s": 0.5}}}
	values := func(w string) map[string]float64 {
		out := map[string]float64{}
		for _, f := range HistoryFigures(w) {
			out[f.Name] = f.Of(c, 10*time.Second)
		}
		return out
	}
	a, s := values("append"), values("set")
	for name, want := range map[string]float64{"committed_per_s": 5, "stale_reads": 3, "realtime_cycles": 5, "lost_updates": 1, "stale_read_pct": 5, "behind_p99_ms": 250} {
		if a[name] != want {
			t.Errorf("append %s = %v, want %v", name, a[name], want)
		}
	}
	if s["lost_elements"] != 4 || s["visible_p99_ms"] != 500 {
		t.Errorf("set figures %v", s)
	}
	// each workload's own figures are values its checker gives (a name
	// it does not give reads NaN)
	c, err := consistency.Check(context.Background(), consistency.SimulateSet(200, 4, 10, 3), "serializable")
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range values("set") {
		if math.IsNaN(v) {
			t.Errorf("set %s: not among the checker's figures %v", name, c.Own.Values)
		}
	}
	if s := values("set"); s["stale_elements"] == 0 {
		t.Errorf("a set read 3 adds behind: no stale element, %v", s)
	}
}
