package tpcc

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/hadrill/hadrill/internal/golden"
	"github.com/hadrill/hadrill/internal/stats"
)

// TestParse reads a real go-tpc v1.0.7 run (1 warehouse, 4 clients, 20 s
// through galera3's load balancer): the last [Summary] lines, the errors
// of each type, tpmC.
func TestParse(t *testing.T) {
	out, err := os.ReadFile("testdata/run-1w-4t.out")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Parse(string(out))
	if err != nil {
		t.Fatal(err)
	}
	if r.TpmC != 12582.0 || r.Errors != 3 || len(r.Txns) != 5 || r.Txn("NEW_ORDER").Errors != 2 || r.Txn("PAYMENT").P99 != 16.8 || r.Txn("DELIVERY").Count != 371 {
		t.Errorf("%+v", r)
	}
	if d := r.TpmTotal - (1126.1 + 12582.0 + 1128.6 + 12271.2 + 1102.7); d > 0.01 || d < -0.01 {
		t.Errorf("tpm total %v", r.TpmTotal)
	}
	b, _ := json.MarshalIndent(r, "", "  ")
	golden.Check(t, "run-1w-4t.json", b)
	cut := "[mysql] 2026/11/28 05:46:39 statement.go:48: invalid connection\nexec failed Error 1213 (40001): Deadlock found\n[Summary] NEW_ORDER - Takes(s): 1.0, Count: 10, TPM: 600.0\n[Summary] NEW_ORDER_ERR - Takes(s): 1.0, Count: 2, TPM: 120.0\n"
	if r, err := Parse(cut); err != nil || r.ByCode["1213"] != 1 || r.ByCode["connection"] != 1 || r.Errors != 2 || r.TpmC != 600 {
		t.Errorf("errors by code: %+v %v", r, err)
	}
	if _, err := Parse("Finished\n"); err == nil {
		t.Error("output without a summary parsed")
	}
}

func TestSummarize(t *testing.T) {
	runs := []Result{{TpmC: 100, Errors: 1}, {TpmC: 300, Txns: []Txn{{Name: "NEW_ORDER", TPM: 300}}}, {TpmC: 200, TpmTotal: 450, Txns: []Txn{{Name: "NEW_ORDER", TPM: 200}}}}
	p := Summarize(4, runs, false)
	if p.TpmC.Median != 200 || p.TpmC.Lo != 100 || p.TpmC.Hi != 300 || p.TpmC.Coverage != 0.75 || p.TpmTotal != 450 || p.Errors != 1 || p.Txns[0].TPM != 200 {
		t.Errorf("%+v", p)
	}
	if p := Summarize(1, nil, true); p.TpmC.N != 0 || !p.Partial {
		t.Errorf("no runs: %+v", p)
	}
}

func TestParamsCheck(t *testing.T) {
	good := Params{Warehouses: 1, Threads: []int{1, 4}, Time: 30, Runs: 3}
	if p := good.Check(); len(p) != 0 {
		t.Errorf("good params refused: %v", p)
	}
	bad := Params{Warehouses: 0, Threads: []int{0}, Time: 2, Warmup: -1, Runs: 0}
	got := strings.Join(bad.Check(), "\n")
	for _, want := range []string{"--warehouses: expected 1 to 10000, got 0", "--threads: expected counts of 1 to 1024, got 0", "--time: expected 5 to 86400 seconds, got 2",
		"--warmup: expected 0 to 3600 seconds, got -1", "--runs: expected 1 to 100, got 0"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
}

func TestArgvAndCheckFailures(t *testing.T) {
	tg := Target{Host: "10.0.0.1", Port: 3306, User: "u", Password: "p"}
	got := strings.Join(Argv("/b/go-tpc", tg, 2, 8, 60, "run"), " ")
	if got != "/b/go-tpc tpcc --host 10.0.0.1 --port 3306 --user u --password p --db tpcc --warehouses 2 --threads 8 --time 60s --interval 10s run" {
		t.Errorf("run: %s", got)
	}
	if got := strings.Join(Argv("go-tpc", tg, 1, 4, 0, "prepare"), " "); !strings.HasSuffix(got, "--dropdata prepare --no-check") {
		t.Errorf("prepare: %s", got)
	}
	out := "begin to check warehouse 1 at condition 3.3.2.1\ncheck warehouse 1 at condition 3.3.2.1 failed sum(d_ytd) - max(w_ytd) should be 0 in warehouse 1, but got 5\nFinished\n"
	if f := CheckFailures(out); len(f) != 1 || !strings.Contains(f[0], "3.3.2.1 failed sum") {
		t.Errorf("failures: %q", f)
	}
	if f := CheckFailures("begin to check warehouse 1 at condition 3.3.2.1\nFinished\n"); len(f) != 0 {
		t.Errorf("no failure read as %q", f)
	}
}

func TestVersus(t *testing.T) {
	spread := func(v ...float64) stats.Spread { return stats.SpreadOf(v) }
	for _, c := range []struct {
		name               string
		p, base            stats.Spread
		pct                float64
		withinNoise, known bool
	}{
		{"overlapping ranges", spread(105, 110, 100), spread(100, 95, 102), 5, true, true},
		{"apart", spread(150, 160, 155), spread(100, 95, 102), 55, false, true},
		{"slower, apart", spread(50, 55, 52), spread(100, 95, 102), -48, false, true},
		{"one run each: no interval", spread(120), spread(100), 20, false, false},
		{"no baseline", spread(120, 130), stats.Spread{}, 0, false, false},
		{"baseline without new orders", spread(120, 130), spread(0, 0), 0, false, false},
	} {
		pct, noise, known := Versus(c.p, c.base)
		if math.Abs(pct-c.pct) > 0.01 || noise != c.withinNoise || known != c.known {
			t.Errorf("%s: %.2f %% within noise %v known %v, want %.2f %% %v %v", c.name, pct, noise, known, c.pct, c.withinNoise, c.known)
		}
	}
}

func TestCompare(t *testing.T) {
	pt := func(threads int, tpmc ...float64) Point {
		var runs []Result
		for _, v := range tpmc {
			runs = append(runs, Result{TpmC: v, ByCode: map[string]int{"1213": 1}})
		}
		return Summarize(threads, runs, false)
	}
	got := Compare([][]Point{{pt(2, 100, 104), pt(4, 200, 210)}, {pt(4, 300, 310), pt(8, 400, 410)}})
	if len(got) != 2 || len(got[0].Points) != 2 || got[0].Points[0].DeltaPct != nil {
		t.Fatalf("the first run is the baseline, without a change: %+v", got)
	}
	four, eight := got[1].Points[0], got[1].Points[1]
	if four.DeltaPct == nil || math.Abs(*four.DeltaPct-48.78) > 0.01 || four.WithinNoise == nil || *four.WithinNoise {
		t.Errorf("4 clients, 305 against 205: %+v", four)
	}
	if eight.DeltaPct != nil {
		t.Errorf("8 clients has no baseline point, got a change %v", *eight.DeltaPct)
	}
	if n := four.ErrorsByCode()["1213"]; n != 2 {
		t.Errorf("errors by code over both runs: %d, want 2", n)
	}
}

// TestUnconnected: go-tpc's panic when its first connection failed (it
// then measured nothing) is told from a run that failed as it ran, and
// the panic's line is what a message quotes.
func TestUnconnected(t *testing.T) {
	refused := "panic: failed to connect to database when loading data\n\ngoroutine 1 [running]:\ngithub.com/pingcap/go-tpc/tpcc.NewWorkloader(0x0?, 0x2ec08824a280?)\n"
	ran := "[Current] NEW_ORDER - Takes(s): 1.0, Count: 12, TPM: 720.0\nexecute run failed, err Error 1213: Deadlock found\n"
	for _, c := range []struct {
		out         string
		unconnected bool
		panic       string
	}{
		{refused, true, "panic: failed to connect to database when loading data"},
		{ran, false, ""},
		{"panic: runtime error: index out of range [3] with length 3\n", false, "panic: runtime error: index out of range [3] with length 3"},
		{"", false, ""},
	} {
		if got := Unconnected(c.out); got != c.unconnected {
			t.Errorf("Unconnected(%q) = %v", c.out, got)
		}
		if got := Panic(c.out); got != c.panic {
			t.Errorf("Panic(%q) = %q", c.out, got)
		}
	}
}
