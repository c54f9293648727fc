package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunStoreOddities (the review's M7, M8, L7, L8, L10): hand-made and
// damaged runs, odd homes. A sysbench run of one thread count reports
// (it panicked); a NaN in its series is left out of the chart; damaged
// runs stay listed with what is wrong and are refused as bad input (exit
// 2); a run whose record names another run, or whose results are not
// points, is refused; --png naming a file is refused before anything is
// written; --home "" and a home that is a file are refused.
func TestRunStoreOddities(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	put := func(id, runJSON, csv string) {
		dir := filepath.Join(e.home, "runs", id)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "run.json"), []byte(runJSON), 0o644); err != nil {
			t.Fatal(err)
		}
		if csv != "" {
			if err := os.WriteFile(filepath.Join(dir, "timeseries.csv"), []byte(csv), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	var ivs []string
	var csv strings.Builder
	csv.WriteString("threads,run,t_s,tps,qps,lat,err,reconn\n")
	for i := 1; i <= 20; i++ {
		ivs = append(ivs, fmt.Sprintf(`{"t": %d, "threads": 1, "tps": %d}`, i, 260+i%5))
		tps := fmt.Sprint(260 + i%5)
		if i == 7 {
			tps = "NaN"
		}
		fmt.Fprintf(&csv, "1,1,%d,%s,0,1.0,0,0\n", i, tps)
	}
	run := `{"run_id": "%s", "kind": "sysbench", "lab": "x", "started": "2026-11-26T11:00:00Z", "finished": "%s", "params": {"workload": "oltp_read_write"},
  "results": %s}`
	point := `[{"threads": 1, "tps": %s, "p95": 4, "p99": 6, "runs": [{"threads": 1, "intervals": [` + strings.Join(ivs, ",") + `]}]}]`
	put("20261126-110000-t1", fmt.Sprintf(run, "20261126-110000-t1", "2026-11-26T11:00:20Z", fmt.Sprintf(point, "270")), csv.String())
	put("20261126-110000-back", fmt.Sprintf(run, "20261126-110000-back", "2026-11-26T09:55:00Z", fmt.Sprintf(point, "270")), "")
	put("20261126-110000-huge", fmt.Sprintf(run, "20261126-110000-huge", "2026-11-26T11:00:20Z", fmt.Sprintf(point, "1e308")), "")
	put("20261126-110000-obj", fmt.Sprintf(run, "20261126-110000-obj", "2026-11-26T11:00:20Z", `{"a": 1}`), "")
	put("20261126-110000-moved", fmt.Sprintf(run, "../../../etc", "2026-11-26T11:00:20Z", fmt.Sprintf(point, "270")), "")
	put("20261126-110000-null", "null", "")
	put("20261126-110000-cut", `{"run_id": "20261126-110000-cut", "kind": "sysb`, "")

	html := filepath.Join(t.TempDir(), "r.html")
	if r := e.run("report", "20261126-110000-t1", "-o", html); r.code != 0 {
		t.Errorf("a one-thread-count run: exit %d %s", r.code, r.stderr)
	}
	if r := e.run("report", "20261126-110000-t1", "-o", html, "--json"); r.code != 0 || !strings.Contains(r.stdout, `"charts"`) {
		t.Errorf("report --json: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	afile := filepath.Join(t.TempDir(), "afile")
	_ = os.WriteFile(afile, nil, 0o644)
	other := filepath.Join(t.TempDir(), "other.html")
	if r := e.run("report", "20261126-110000-t1", "-o", other, "--png", afile); r.code != 2 || !strings.Contains(r.stderr, "--png: "+afile+" is a file") {
		t.Errorf("--png naming a file: exit %d %s", r.code, r.stderr)
	}
	if _, err := os.Stat(other); err == nil {
		t.Errorf("the report was written before --png was refused")
	}
	r := e.run("runs", "list")
	for _, want := range []string{"20261126-110000-null", "20261126-110000-cut", "its run.json is damaged", "20261126-110000-moved", "names another run",
		"its finish is not after its start"} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("runs list: exit %d, no %q in\n%s%s", r.code, want, r.stdout, r.stderr)
		}
	}
	if strings.Contains(r.stdout, "0001-01-01") || strings.Contains(r.stdout, "-3900") || strings.Contains(r.stdout, "\n../") {
		t.Errorf("runs list shows what a damaged record says:\n%s", r.stdout)
	}
	for _, c := range []struct{ id, want string }{
		{"20261126-110000-cut", "its run.json is damaged"}, {"20261126-110000-null", "its run.json is damaged"},
		{"20261126-110000-moved", "names another run"},
	} {
		if r := e.run("report", c.id, "-o", html); r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("report %s: exit %d %s", c.id, r.code, r.stderr)
		}
	}
	for _, id := range []string{"20261126-110000-obj", "20261126-110000-huge"} {
		if r := e.run("runs", "compare", "20261126-110000-t1", id); r.code != 2 || !strings.Contains(r.stderr, "are not sysbench's points") {
			t.Errorf("runs compare with %s: exit %d %s%s", id, r.code, r.stdout, r.stderr)
		}
	}
	if r := e.run("runs", "compare", "20261126-110000-t1"); r.code != 0 || strings.Contains(r.stdout, ";;") {
		t.Errorf("runs compare of a short run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := e.run("--home", "", "runs", "list"); r.code != 2 || !strings.Contains(r.stderr, "--home: expected a directory, got an empty name") {
		t.Errorf(`--home "": exit %d %s`, r.code, r.stderr)
	}
	if r := e.run("--home", afile, "runs", "list"); r.code != 2 || !strings.Contains(r.stderr, "is a file, expected hadrill's home directory") {
		t.Errorf("--home a file: exit %d %s", r.code, r.stderr)
	}
}
