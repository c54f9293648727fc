package main

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/golden"
	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/workload"
	"github.com/hadrill/hadrill/internal/workload/sysbench"
	"github.com/hadrill/hadrill/internal/workload/tpcc"
)

// hadrill runs a command in this process, as main does, and returns what
// it printed on stdout and stderr and its exit status.
func hadrill(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return run(t, &app{}, args...)
}

// run runs a command as hadrill does, on this app.
func run(t *testing.T, cli *app, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	outR, outW, _ := os.Pipe()
	errR, errW, _ := os.Pipe()
	oldOut, oldErr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = outW, errW
	got := make(chan [2]string)
	go func() {
		o, _ := io.ReadAll(outR)
		e, _ := io.ReadAll(errR)
		got <- [2]string{string(o), string(e)}
	}()
	root := cli.newRoot()
	root.SetArgs(args)
	code = exitCode(root.ExecuteContext(context.Background()))
	for _, u := range cli.unlocks { // as main does
		u()
	}
	os.Stdout, os.Stderr = oldOut, oldErr
	outW.Close()
	errW.Close()
	g := <-got
	return g[0], g[1], code
}

func storeRun(t *testing.T, home, id string, kind results.Kind, res any) {
	t.Helper()
	b, _ := json.Marshal(res)
	r := &results.Run{ID: id, Kind: kind, Lab: "lab", Started: time.Unix(0, 0).UTC(), Finished: time.Unix(60, 0).UTC(),
		Params: map[string]any{"warehouses": 1}, Results: b}
	if err := results.Save(home, r); err != nil {
		t.Fatal(err)
	}
}

func tpccPoint(clients int, tpmc ...float64) tpcc.Point {
	var runs []tpcc.Result
	for _, v := range tpmc {
		runs = append(runs, tpcc.Result{TpmC: v, TpmTotal: 2.2 * v, Errors: 1, ByCode: map[string]int{"connection": 1},
			Txns: []tpcc.Txn{{Name: "NEW_ORDER", Count: int64(v), TPM: v, P50: 4, P95: 9.5, P99: 14.2, MaxMs: 40}}})
	}
	return tpcc.Summarize(clients, runs, false)
}

// TestRunsCompareTPCC: runs compare's text and JSON of two TPC-C runs
// (golden), and its refusals: runs of two kinds, an unknown run, a run of
// another kind (each exit 2, every problem at once).
func TestRunsCompareTPCC(t *testing.T) {
	home := t.TempDir()
	a, b, s := "20261128-080000-aaaa", "20261128-090000-bbbb", "20261128-100000-cccc"
	storeRun(t, home, a, results.TPCC, workload.TPCCOutcome{RunID: a, Target: "lb", Warehouses: 1, Results: []tpcc.Point{tpccPoint(2, 11000, 11500, 12000), tpccPoint(4, 12000, 12500, 12700)},
		Check: &workload.TPCCCheck{Passed: true, Seconds: 0.7}, Costs: map[int]workload.Cost{2: {CPUms: 2.85, Known: true}, 4: {CPUms: 2.8, Known: true}}})
	storeRun(t, home, b, results.TPCC, workload.TPCCOutcome{RunID: b, Target: "db1", Warehouses: 1, Results: []tpcc.Point{tpccPoint(2, 16000, 16500, 17000)},
		Check: &workload.TPCCCheck{Failures: []string{"check warehouse 1 at condition 3.3.2.1 failed"}}})
	storeRun(t, home, s, results.Drill, map[string]any{"scenario": "failover"})

	out, errs, code := hadrill(t, "--home", home, "runs", "compare", a, b)
	if code != 0 {
		t.Fatalf("runs compare: exit %d\n%s", code, errs)
	}
	golden.Check(t, "runs-compare-tpcc.txt", []byte(out))
	out, errs, code = hadrill(t, "--home", home, "runs", "compare", a, b, "-o", "json")
	if code != 0 {
		t.Fatalf("runs compare -o json: exit %d\n%s", code, errs)
	}
	golden.Check(t, "runs-compare-tpcc.json", []byte(out))

	sb := "20261128-120000-eeee"
	storeSweep(t, home, sb, "oltp_read_write", map[int]float64{1: 250})
	_, errs, code = hadrill(t, "--home", home, "runs", "compare", a, sb, b)
	if want := "RUN_ID: runs of one kind are compared: " + sb + " are sysbench runs; " + a + ", " + b + " are TPC-C runs"; code != 2 || !strings.Contains(errs, want) {
		t.Errorf("runs compare of TPC-C and sysbench runs: exit %d, want 2 and %q in\n%s", code, want, errs)
	}
	_, errs, code = hadrill(t, "--home", home, "runs", "compare", a, s, "20261128-110000-dddd")
	for _, want := range []string{"RUN_ID: " + s + " is a drill run; runs compare sets sysbench or TPC-C runs side by side",
		`RUN_ID: no run "20261128-110000-dddd"`} {
		if code != 2 || !strings.Contains(errs, want) {
			t.Errorf("runs compare of a drill and an unknown run: exit %d, want 2 and %q in\n%s", code, want, errs)
		}
	}
}

// storeSweep stores a sysbench run at these thread counts, each 20
// seconds near its level (one run a count).
func storeSweep(t *testing.T, home, id, workloadName string, levels map[int]float64) {
	t.Helper()
	var pts []sysbench.Point
	for _, th := range slices.Sorted(maps.Keys(levels)) {
		var ivs []sysbench.Interval
		for i := range 20 {
			ivs = append(ivs, sysbench.Interval{T: float64(i + 1), TPS: levels[th] * (1 + float64(i%5-2)/100)})
		}
		pts = append(pts, sysbench.Point{Threads: th, TPS: levels[th], P95: 9.5, P99: 12.25, Runs: []sysbench.Result{{Intervals: ivs}}})
	}
	b, _ := json.Marshal(pts)
	r := &results.Run{ID: id, Kind: results.Sysbench, Lab: "lab", Started: time.Unix(0, 0).UTC(), Finished: time.Unix(60, 0).UTC(),
		Params: map[string]any{"workload": workloadName}, Versions: map[string]string{"sysbench": "1.0.20"}, Results: b}
	if err := results.Save(home, r); err != nil {
		t.Fatal(err)
	}
}

// TestRunsListAndCompare: runs list's and runs compare's text and JSON
// (golden) over a store with two sysbench runs, a drill and a damaged run
// (listed with what is wrong, never left out).
func TestRunsListAndCompare(t *testing.T) {
	home := t.TempDir()
	a, b, d, x := "20261129-080000-aaaa", "20261129-090000-bbbb", "20261129-100000-dddd", "20261129-110000-xxxx"
	storeSweep(t, home, a, "oltp_read_write", map[int]float64{1: 250, 8: 410})
	storeSweep(t, home, b, "oltp_write_only", map[int]float64{1: 240, 8: 520, 16: 530})
	storeRun(t, home, d, results.Drill, map[string]any{"scenario": "failover"})
	if err := os.MkdirAll(results.RunDir(home, x), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(results.RunDir(home, x), "run.json"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"runs-list.txt", []string{"runs", "list"}},
		{"runs-list.json", []string{"runs", "list", "-o", "json"}},
		{"runs-compare-sysbench.txt", []string{"runs", "compare", a, b}},
		{"runs-compare-sysbench.json", []string{"runs", "compare", a, b, "-o", "json"}},
	} {
		out, errs, code := hadrill(t, append([]string{"--home", home}, c.args...)...)
		if code != 0 {
			t.Errorf("%s: exit %d\n%s", strings.Join(c.args, " "), code, errs)
			continue
		}
		golden.Check(t, c.name, []byte(strings.ReplaceAll(out, home, "HOME")))
	}
}
