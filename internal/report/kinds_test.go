package report

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/consistency"
	"github.com/hadrill/hadrill/internal/drill"
	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/golden"
	"github.com/hadrill/hadrill/internal/lb/proxy"
	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/workload"
	"github.com/hadrill/hadrill/internal/workload/fio"
	"github.com/hadrill/hadrill/internal/workload/slap"
	"github.com/hadrill/hadrill/internal/workload/sysbench"
)

// everyKind stores one run of every kind of run in a new home and returns
// the home and their ids, in the order they were stored.
func everyKind(t *testing.T) (string, []string) {
	t.Helper()
	home := t.TempDir()
	var ids []string
	at := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	save := func(kind results.Kind, params map[string]any, res any, faults ...fault.Record) string {
		t.Helper()
		id := fmt.Sprintf("r%02d-%s", len(ids), kind)
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		r := &results.Run{ID: id, Kind: kind, Lab: "lab", Started: at, Finished: at.Add(30 * time.Second), Params: params, Results: b}
		if len(faults) > 0 {
			r.Faults = faults
		}
		if err := results.Save(home, r); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		return id
	}
	store(t, home, "sweep-a", []sysbench.Point{{Threads: 1, TPS: 100, P95: 5, P99: 7}, {Threads: 4, TPS: 300, P95: 9, P99: 12}}, false)
	ids = append(ids, "sweep-a")
	save(results.Slap, map[string]any{"queries": 100}, []slap.Point{{Concurrency: 1, AvgS: 0.2, MinS: 0.19, MaxS: 0.22, QueriesPerClient: 100, QPS: 500},
		{Concurrency: 8, AvgS: 1.5, MinS: 1.4, MaxS: 1.6, QueriesPerClient: 100, QPS: 533.3}})
	save(results.CommitLatency, map[string]any{"commits": 50}, []workload.Latency{{Target: "db1", Count: 50, P50: 0.31, P95: 0.7, P99: 0.9, Avg: 0.35, Max: 1.2}})
	save(results.Visibility, map[string]any{"rows": 10}, []map[string]any{{"from": "db1", "to": "db2", "p50_ms": 1.5}})
	save(results.BulkReplication, map[string]any{"rows": 1000}, []map[string]any{{"from": "db1", "to": "db2", "last_row_s": 0.8}})
	save(results.SemiSyncReceipt, map[string]any{"commits": 20}, []workload.Receipt{{Primary: "db1", Replica: "db2", Commits: 20, AckedSemiSync: 20, AvgMs: 102.1, P99Ms: 104.3, AppliedS: 0.31}})
	save(results.DonorProbe, map[string]any{"connections": 60}, []workload.Donor{{LB: "lb", Node: "db2", Nodes: 3, Connections: 60, SyncedShare: 0.333, BackShare: 0.331, DonorState: "Donor/Desynced", SyncedProbe: 200, DonorProbe: 503, BackProbe: 200, OutS: 0.16, BackS: 0.4}})
	save(results.Conflict, map[string]any{"rows": 5}, []map[string]any{{"node": "db1", "deadlocks": 3}})
	save(results.Consistency, map[string]any{"workload": "append"}, workload.ConsistencyOutcome{RunID: "c", Params: workload.HistoryParams{Workload: "append"},
		Check: &consistency.Result{Valid: true, Model: "serializable", Ops: 40, OK: 18, Fail: 1, Info: 1, Anomalies: []consistency.Anomaly{}}})
	synced := 3.2
	d := save(results.Drill, map[string]any{"scenario": "failover"}, drill.Result{Scenario: "failover", Cluster: "db", Profile: "durable", Targets: []string{"db1"},
		WritesPerS: 100, Writes: 3000, WritesAcked: 2990, Gap: drill.Gap{Seconds: 0.6}, ChecksumsAgree: true, SyncedS: &synced, Passed: true,
		FaultAt: at.Add(10 * time.Second), Balancer: &drill.BalancerLog{Name: "lb", Events: []proxy.Event{
			{At: at.Add(10300 * time.Millisecond), Proxy: "writes", Server: "db1", What: proxy.Down, Reason: "Layer4 connection problem"},
			{At: at.Add(10300 * time.Millisecond), Proxy: "reads", Server: "db1", What: proxy.Down, Reason: "Layer4 connection problem"},
			{At: at.Add(21 * time.Second), Proxy: "writes", Server: "db1", What: proxy.Up}}}},
		fault.Record{At: at.Add(10 * time.Second), Fault: fault.Kill, Targets: []string{"db1"}}, fault.Record{At: at.Add(20 * time.Second), Fault: fault.Restart, Targets: []string{"db1"}})
	rows := [][]string{{"1.0", "100", "0", "50", "0", ""}, {"2.0", "40", "10", "50", "1", "1213:10"}, {"3.0", "100", "0", "50", "0", ""}}
	if err := results.WriteCSV(home, d, drill.TimelineFile, drill.TimelineHeader, rows); err != nil {
		t.Fatal(err)
	}
	save(results.DiskBench, map[string]any{"volumes": []string{"db1/data"}, "tests": []string{"randread", "randwrite", "latency", "seqread"}, "runs": 3}, []workload.DiskResult{
		{Node: "db1", Volume: "data", Runs: 3, Result: fio.Result{Test: "randread", IOPS: 9120, MBps: 149.4, P50Ms: 1.6, P99Ms: 3.1, Seconds: 20}, TargetIOPS: 3000},
		{Node: "db1", Volume: "data", Runs: 3, Result: fio.Result{Test: "randwrite", IOPS: 412, MBps: 6.8, P50Ms: 38, P99Ms: 61, Seconds: 20}, TargetIOPS: 3000},
		{Node: "db1", Volume: "data", Runs: 3, Result: fio.Result{Test: "latency", IOPS: 480, MBps: 7.9, P50Ms: 2.05, P99Ms: 2.6, Seconds: 20}, TargetMs: 2},
		{Node: "db1", Volume: "data", Runs: 3, Result: fio.Result{Test: "seqread", IOPS: 250, MBps: 262, P50Ms: 15, P99Ms: 18, Seconds: 20}, TargetMBps: 250},
		{Node: "db1", Volume: "data", Runs: 3, Result: fio.Result{Test: "fsync", IOPS: 800, MBps: 13.1, P50Ms: 1.2, P99Ms: 1.9, Seconds: 20}}})
	save("later", nil, map[string]any{"a kind the report does not know": true}) // shown by its finding, without a table
	storeTPCC(t, home, "tpcc-a", workload.TPCCOutcome{Target: "lb", Warehouses: 1, Results: nil})
	ids = append(ids, "tpcc-a")
	return home, ids
}

var svgBody = regexp.MustCompile(`(?s)<svg.*?</svg>`)

// TestEveryKind: one run of every kind in one report (and one of a kind
// the report does not know): each shown by what
// it is (its finding, its table or its own section, its charts), none as
// a sysbench sweep of zeros. The golden file holds the findings, the
// charts and the HTML with each chart's drawing replaced by its digest.
func TestEveryKind(t *testing.T) {
	home, ids := everyKind(t)
	rep, err := Load(home, ids)
	if err != nil {
		t.Fatal(err)
	}
	rep.Generated = "2026-11-29 08:00 UTC"
	for _, k := range kinds {
		if !slices.ContainsFunc(rep.Runs, func(r Run) bool { return r.Kind == k.kind }) {
			t.Errorf("no run of kind %s in the report: add one to everyKind", k.kind)
		}
	}
	for _, r := range rep.Sweeps {
		if r.Kind != results.Sysbench {
			t.Errorf("run %s (%s) listed among the sysbench sweeps", r.ID, r.Kind)
		}
	}
	var b strings.Builder
	b.WriteString("# findings\n")
	for _, f := range rep.Finding {
		b.WriteString(f + "\n")
	}
	b.WriteString("\n# charts\n")
	for _, c := range rep.Charts {
		var names []string
		for _, s := range c.Series {
			names = append(names, fmt.Sprintf("%s (%d points)", s.Name, len(s.Points)))
		}
		fmt.Fprintf(&b, "%s: %s; markers %d: %s\n", c.ID, c.Title, len(c.Markers), strings.Join(names, ", "))
	}
	html, err := rep.HTML()
	if err != nil {
		t.Fatal(err)
	}
	page := string(html)
	page = page[strings.Index(page, "<body"):]
	page = svgBody.ReplaceAllStringFunc(page, func(s string) string { return fmt.Sprintf("<svg %x/>", sha256.Sum256([]byte(s)))[:16] + "/>" })
	b.WriteString("\n# html\n" + page)
	golden.Check(t, "every-kind", []byte(b.String()))
}
