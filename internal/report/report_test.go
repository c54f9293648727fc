package report

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/chart"
	"github.com/hadrill/hadrill/internal/consistency"
	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/infra/machine"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/workload"
	"github.com/hadrill/hadrill/internal/workload/sysbench"
)

func store(t *testing.T, home, id string, pts []sysbench.Point, interrupted bool) {
	t.Helper()
	b, _ := json.Marshal(pts)
	r := &results.Run{ID: id, Kind: "sysbench", Lab: "lab", Started: time.Unix(0, 0), Finished: time.Unix(60, 0),
		Params: map[string]any{"workload": "oltp_read_write"}, Results: b, Interrupted: interrupted}
	if err := results.Save(home, r); err != nil {
		t.Fatal(err)
	}
	rows := [][]string{{"1", "1", "1.00", "100.0", "2000", "5.0", "0", "0"}, {"1", "1", "2.00", "110.0", "2200", "5.5", "0", "0"}}
	if err := results.WriteCSV(home, id, "timeseries.csv", []string{"threads", "run", "t_s", "tps", "qps", "lat", "err", "reconn"}, rows); err != nil {
		t.Fatal(err)
	}
}

func TestReportIsSelfContained(t *testing.T) {
	home := t.TempDir()
	store(t, home, "a", []sysbench.Point{{Threads: 1, TPS: 100, P95: 5, P99: 7}, {Threads: 4, TPS: 300, P95: 9, P99: 12}}, false)
	store(t, home, "b", []sysbench.Point{{Threads: 1, TPS: 90, P95: 6, P99: 8, Partial: true}}, true)
	status := [][]string{{"0.0", "db1", "Synced", "0", "0", "0", "0", "10"}, {"1.0", "db1", "Synced", "250000000", "4", "0", "0", "300"}}
	if err := results.WriteCSV(home, "a", "status.csv", []string{"t_s", "node", "state", "fc", "rq", "sq", "cf", "lc"}, status); err != nil {
		t.Fatal(err)
	}
	rep, err := Load(home, []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := rep.HTML()
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	if n := strings.Count(html, "<svg"); n != len(rep.Charts) || n != 7 {
		t.Errorf("%d inline SVG charts for %d charts (want 7: tps, p95, p99, two time series, flow control, receive queue)", n, len(rep.Charts))
	}
	if fc := rep.Runs[0].FlowControl["db1"]; len(fc) != 1 || fc[0][1] != 250 {
		t.Errorf("flow control paused 250 ms in 1 s, got %v", fc)
	}
	if ext := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:|//)|<script|@import|url\((?:[^d]|d[^a])`).FindString(html); ext != "" {
		t.Errorf("report refers to something outside itself: %q", ext)
	}
	for _, want := range []string{"Interrupted: the results are partial", "(partial)", "run a<", "run b<", "Lab lab, sysbench oltp_read_write (run a): 300 TPS (no per-second series kept) at 4 threads"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q in %s", want, html[strings.Index(html, "<section"):strings.Index(html, "</section>")])
		}
	}
	// the answer comes first: the finding before any table or chart, the method last
	if f, tbl, m := strings.Index(html, `class="finding"`), strings.Index(html, "<table"), strings.Index(html, "<h2>Method"); f < 0 || f > tbl || m < strings.LastIndex(html, "<svg") {
		t.Errorf("the finding (at %d) does not open the report before its first table (%d), or the method (%d) is not last", f, tbl, m)
	}
	dir := t.TempDir()
	if err := rep.WritePNGs(dir); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != len(rep.Charts) {
		t.Errorf("%d PNGs for %d charts", len(entries), len(rep.Charts))
	}
	if _, err := Load(home, []string{"a", "nope", "gone"}); err == nil || !strings.Contains(err.Error(), `"nope"`) || !strings.Contains(err.Error(), `"gone"`) {
		t.Errorf("unknown runs: %v", err)
	}
}

func TestHostCharts(t *testing.T) {
	cpu, mem, sent := readHosts([][]string{
		{"1.000", "db1", "0.500", "0.9", "104857600", "0", "8000000", "1000", "40000000", "2000"},
		{"2.000", "db1", "0.480", "0.8", "209715200", "0", "8000000", "1000", "40000000", "2000"},
		{"1.000", "client", "0.200", "0", "1048576", "0", "1000", "8000000", "", ""},
		{"bad", "row"},
	})
	r := Run{Run: &results.Run{ID: "r1"}, HostCPU: cpu, HostMem: mem, HostSent: sent,
		Hosts: []machine.Summary{{Host: "db1", Machine: &plan.Machine{Name: "small", CPUs: 0.5, MemoryBytes: 1 << 30},
			NICs: []machine.NICSummary{{Name: "eth1", Network: plan.NetCluster, RateBps: 50e6}}}}}
	charts := hostCharts(r, "lab")
	if len(charts) != 4 {
		t.Fatalf("%d charts, want cpu, memory, application and cluster", len(charts))
	}
	names := func(c chart.Chart) string {
		var out []string
		for _, s := range c.Series {
			out = append(out, s.Name)
		}
		return strings.Join(out, ",")
	}
	if got := names(charts[0]); got != "client,db1,db1 quota" || !strings.Contains(charts[0].Title, "dashed") {
		t.Errorf("cpu chart %q: %s", charts[0].Title, got)
	}
	if got := charts[1].Series[1].Points[1][1]; got != 200 {
		t.Errorf("db1 memory at 2 s: %v MiB, want 200", got)
	}
	if got := names(charts[3]); got != "db1,db1 cap" || charts[3].Series[1].Points[0][1] != 50 {
		t.Errorf("cluster chart %q: %s", charts[3].Title, got)
	}
	if strings.Contains(charts[2].Title, "dashed") {
		t.Errorf("the application chart has no cap to draw: %q", charts[2].Title)
	}
	if hostCharts(Run{Run: &results.Run{ID: "r2"}}, "lab") != nil {
		t.Error("a run without hosts.csv has no host charts")
	}
}

// TestWindows: a fault's window runs until what undoes it, or to the end
// of the run; what undoes it is marked without a window.
func TestWindows(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	recs := []fault.Record{
		{At: at(2), Fault: fault.Pause, Targets: []string{"db2"}},
		{At: at(3), Fault: fault.Kill, Targets: []string{"db1"}},
		{At: at(5), Fault: fault.Resume, Targets: []string{"db2"}},
		{At: at(7), Fault: fault.Partition, Targets: []string{"db3"}},
		{At: at(9), Fault: fault.Recover},
		{At: at(12), Fault: fault.Heal},
		{At: at(14), Fault: fault.Delay, Targets: []string{"east-west"}, Value: "200ms"},
	}
	got := windows(recs, t0, 20)
	want := []struct{ x, to float64 }{{2, 5}, {3, 9}, {5, 0}, {7, 12}, {9, 0}, {12, 0}, {14, 20}}
	for i, w := range want {
		if got[i].X != w.x || got[i].To != w.to {
			t.Errorf("%s: window %.0f–%.0f, want %.0f–%.0f", got[i].Label, got[i].X, got[i].To, w.x, w.to)
		}
	}
}

// TestSetReport: a set workload's consistency run shows its elements'
// fate and its reads' staleness per node, in the finding and its table.
func TestSetReport(t *testing.T) {
	home := t.TempDir()
	res := &consistency.Result{Valid: true, Model: "serializable", Ops: 10, OK: 5, Anomalies: []consistency.Anomaly{},
		Reads: []consistency.Freshness{{Reads: 2, Stale: 1, BehindP50: 0.05, BehindP99: 0.05, BehindMax: 0.05}, {Node: "db1", Reads: 1}, {Node: "db2", Reads: 1, Stale: 1, BehindP50: 0.05, BehindP99: 0.05, BehindMax: 0.05}}}
	// the set's figures as a run recorded before Own kept them
	var earlier consistency.Result
	if err := json.Unmarshal([]byte(`{"set": {"adds": 3, "acknowledged": 3, "known": 3, "stable": 3, "stale": 1, "visible_after_p95_s": 0.05, "visible_after_p99_s": 0.05, "visible_after_max_s": 0.05}}`), &earlier); err != nil {
		t.Fatal(err)
	}
	res.Own = earlier.Own
	b, _ := json.Marshal(workload.ConsistencyOutcome{RunID: "s", Params: workload.HistoryParams{Workload: "set"}, Check: res})
	if err := results.Save(home, &results.Run{ID: "s", Kind: "consistency", Lab: "lab", Started: time.Unix(0, 0), Finished: time.Unix(5, 0), Results: b}); err != nil {
		t.Fatal(err)
	}
	rep, err := Load(home, []string{"s"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := rep.HTML()
	if err != nil {
		t.Fatal(err)
	}
	html := string(out)
	for _, want := range []string{"elements: 3 elements added (3 acknowledged, 0 failed, 0 unknown); of 3 known: 3 stable, 0 lost",
		"<th class=\"l\">elements</th>", "<th class=\"l\">reads on db2</th><td class=\"l\">db2: 1 of 1 reads stale (100.0 %), behind by 50.0 ms (median)"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
