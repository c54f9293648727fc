package report

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/workload"
	"github.com/hadrill/hadrill/internal/workload/tpcc"
)

func storeTPCC(t *testing.T, home, id string, o workload.TPCCOutcome) {
	t.Helper()
	b, _ := json.Marshal(o)
	r := &results.Run{ID: id, Kind: results.TPCC, Lab: "lab", Started: time.Unix(0, 0), Finished: time.Unix(60, 0),
		Params: map[string]any{"warehouses": o.Warehouses}, Results: b}
	if err := results.Save(home, r); err != nil {
		t.Fatal(err)
	}
}

func tpccPoint(clients int, tpmc ...float64) tpcc.Point {
	var runs []tpcc.Result
	for _, v := range tpmc {
		runs = append(runs, tpcc.Result{TpmC: v, TpmTotal: 2.2 * v, Errors: 3, ByCode: map[string]int{"1213": 2, "connection": 1},
			Txns: []tpcc.Txn{{Name: "NEW_ORDER", Count: int64(v), TPM: v, P50: 4, P95: 9.5, P99: 14.2, MaxMs: 40}, {Name: "PAYMENT", Count: int64(v), TPM: v, P99: 8}}})
	}
	return tpcc.Summarize(clients, runs, false)
}

// TestTPCCReport: a TPC-C run is shown as TPC-C (its own table, chart and
// finding), never as a sysbench sweep of zeros; a second run is set
// against the first.
func TestTPCCReport(t *testing.T) {
	home := t.TempDir()
	storeTPCC(t, home, "a", workload.TPCCOutcome{Target: "lb", Warehouses: 1, Results: []tpcc.Point{tpccPoint(2, 11000, 11500, 12000), tpccPoint(4, 12000, 12500, 12700)},
		Check: &workload.TPCCCheck{Passed: true, Seconds: 0.7}, Costs: map[int]workload.Cost{2: {CPUms: 2.85, Known: true}}})
	storeTPCC(t, home, "b", workload.TPCCOutcome{Target: "db1", Warehouses: 1, Results: []tpcc.Point{tpccPoint(2, 16000, 16500, 17000)},
		Check: &workload.TPCCCheck{Passed: false, Failures: []string{"check warehouse 1 at condition 3.3.2.1 failed"}}})
	rep, err := Load(home, []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Sweeps) != 0 {
		t.Errorf("TPC-C runs listed as sysbench sweeps: %d", len(rep.Sweeps))
	}
	if len(rep.Finding) != 2 {
		t.Fatalf("finding: %q", rep.Finding)
	}
	for _, want := range []string{"TPC-C, lab lab, 1 warehouse(s) through lb (run a): 12500 tpmC (median of 3 runs, 12000–12700, its range of 3 (a 75 % interval)) at 4 clients, New-Order p99 14.2 ms (the highest of 2 client counts)",
		"18 transactions failed (by server error: 1213 × 12, connection × 6)", "TPC-C's consistency conditions hold"} {
		if !strings.Contains(rep.Finding[0], want) {
			t.Errorf("first finding lacks %q:\n%s", want, rep.Finding[0])
		}
	}
	for _, want := range []string{"a TPC-C consistency condition does not hold: check warehouse 1 at condition 3.3.2.1 failed", "against run a (tpcc, lab lab): +43 % at 2 clients (beyond noise)"} {
		if !strings.Contains(rep.Finding[1], want) {
			t.Errorf("second finding lacks %q:\n%s", want, rep.Finding[1])
		}
	}
	b, err := rep.HTML()
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	for _, want := range []string{`id="tpmc"`, "<td>11500.0</td>", "1213 × 6, connection × 3", "<td>2.85</td>", "&#43;43.5 %</td>", "NEW_ORDER", "A TPC-C consistency condition does not hold"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
