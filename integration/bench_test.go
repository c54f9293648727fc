package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSysbenchSweep: a short sweep through the load balancer records a run
// with the contract fields; bad parameters are named; runs compare works.
func TestSysbenchSweep(t *testing.T) {
	t.Parallel() // it asserts the record's shape, not its throughput
	e := newEnv(t)
	// Galera's stock failure detection: the subject is the record, and
	// fast detection (0.5 s) beside other labs once re-formed the cluster
	// as the second sweep connected (every node non-primary for a moment,
	// the load balancer without a server)
	e.ok("up", "-f", e.writeSpec("itsb", `name: itsb
clusters: [{name: db, nodes: 3, failure_detection: stock}]
load_balancers: [{name: lb, cluster: db}]
client: {name: client}
`))
	// what a prepare that failed half way leaves (a table, no record of a
	// dataset): the next prepare removes it instead of failing on it
	e.sql("itsb", "db1", "CREATE DATABASE IF NOT EXISTS sbtest; CREATE TABLE sbtest.sbtest1 (id INT PRIMARY KEY)")
	r := e.ok("bench", "sysbench", "--name", "itsb", "--threads", "1,2", "--time", "2", "--tables", "1", "--table-size", "200", "-o", "json")
	var out struct {
		RunID   string `json:"run_id"`
		Results []struct {
			Threads       int
			TPS, P95, P99 float64
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if out.RunID == "" || len(out.Results) != 2 || out.Results[1].Threads != 2 {
		t.Fatalf("sweep output: %+v", out)
	}
	for _, p := range out.Results {
		if p.TPS <= 0 || p.P95 <= 0 || p.P99 < p.P95 {
			t.Errorf("threads %d: tps %.1f p95 %.2f p99 %.2f", p.Threads, p.TPS, p.P95, p.P99)
		}
	}
	if r := e.ok("runs", "compare", out.RunID); !strings.Contains(r.stdout, out.RunID) {
		t.Errorf("compare: %s", r.stdout)
	}
	// Two runs of 12 s give an interval (t over the runs); a run of 2 s none:
	// a change against it has unknown noise, a run against itself is within it.
	var b struct {
		RunID string `json:"run_id"`
	}
	_ = json.Unmarshal([]byte(e.ok("bench", "sysbench", "--name", "itsb", "--threads", "1,2", "--time", "5", "--runs", "2", "--tables", "1", "--table-size", "200", "-o", "json").stdout), &b)
	// the rounds interleave the thread counts: 1, 2, then 1, 2 again
	if steps, _ := os.ReadFile(filepath.Join(e.home, "runs", b.RunID, "steps.csv")); !regexp.MustCompile(`(?s)^threads,run,.*\n1,1,.*\n2,1,.*\n1,2,.*\n2,2,`).Match(steps) {
		t.Errorf("the sweep's order (steps.csv):\n%s", steps)
	}
	var cols []struct {
		Points []struct {
			Threads int `json:"threads"`
			TPS     struct {
				Mean, Lo, Hi float64
				Known        bool
				Method       string
			} `json:"tps"`
			DeltaPct    *float64 `json:"delta_pct"`
			WithinNoise *bool    `json:"within_noise"`
		} `json:"points"`
	}
	if err := json.Unmarshal([]byte(e.ok("runs", "compare", out.RunID, b.RunID, "-o", "json").stdout), &cols); err != nil || len(cols) != 2 {
		t.Fatalf("runs compare -o json: %v %+v", err, cols)
	}
	var bp = cols[1].Points[0]
	for _, p := range cols[1].Points {
		if p.Threads == 2 {
			bp = p
		}
	}
	if !bp.TPS.Known || bp.TPS.Method != "t over 2 runs" || !(bp.TPS.Lo < bp.TPS.Mean && bp.TPS.Mean < bp.TPS.Hi) || bp.DeltaPct == nil || bp.WithinNoise != nil {
		t.Errorf("two runs against a 2 s run: %+v (want an interval, a change, and no judgement of noise)", bp)
	}
	cols = nil
	if err := json.Unmarshal([]byte(e.ok("runs", "compare", b.RunID, b.RunID, "-o", "json").stdout), &cols); err != nil || len(cols) != 2 {
		t.Fatalf("runs compare -o json: %v %+v", err, cols)
	}
	if self := cols[1].Points[0]; self.DeltaPct == nil || *self.DeltaPct != 0 || self.WithinNoise == nil || !*self.WithinNoise {
		t.Errorf("a run against itself: %+v, want +0 %% within noise", self)
	}
	// the report answers first, with intervals and human labels, and fits a 1280 px window
	html := filepath.Join(e.home, "sweeps.html")
	e.ok("report", out.RunID, b.RunID, "-o", html)
	dom, sideways := e.inBrowser(html)
	if sideways {
		t.Error("the report scrolls sideways at 1280 px")
	}
	first := dom[strings.Index(dom, "<h1"):]
	if f, tbl := strings.Index(first, "Lab itsb, sysbench oltp_read_write (run "+b.RunID+")"), strings.Index(first, "<table"); f < 0 || f > tbl ||
		!strings.Contains(first, "95 % interval") || !strings.Contains(first, "sysbench oltp_read_write, lab itsb") {
		t.Errorf("the report does not open with its finding, intervals and labels:\n%.2000s", first)
	}
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"--threads", "1,x", "--time", "0", "--workload", "nope"}, []string{"--threads:", "--time:", `--workload: unknown workload "nope"`}},
		{[]string{"--target", "db9"}, []string{`--target: unknown target "db9"`}},
		{[]string{"--target", "mysql://" + e.lbAddress("itsb") + ":3999", "--credentials", private(t, e.writeSpec("creds.cnf", "user=app\npassword=x\n"))}, []string{"--target: cannot connect"}},
		// a password others may read is refused, as OpenSSH refuses such a key
		{[]string{"--target", "mysql://" + e.lbAddress("itsb") + ":3999", "--credentials", e.writeSpec("open.cnf", "user=app\npassword=x\n")},
			[]string{"--credentials: " + e.home + "/open.cnf holds a password and others may read it (mode 0644)"}},
	}
	for _, c := range cases {
		r := e.run(append([]string{"bench", "sysbench", "--name", "itsb"}, c.args...)...)
		if r.code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", c.args, r.code, r.stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%v: stderr does not name %q:\n%s", c.args, w, r.stderr)
			}
		}
	}
	// Commit latency on every node and through the load balancer.
	r = e.ok("bench", "commit-latency", "--name", "itsb", "--count", "50", "--target", "all,lb", "-o", "json")
	var cl struct {
		RunID   string `json:"run_id"`
		Results []struct {
			Target   string
			Count    int
			P50, P99 float64
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &cl); err != nil || len(cl.Results) != 4 || cl.Results[3].Target != "lb" {
		t.Fatalf("commit-latency: %v %+v", err, cl)
	}
	for _, c := range cl.Results {
		if c.Count != 50 || c.P50 <= 0 || c.P99 < c.P50 {
			t.Errorf("commit latency on %s: %+v", c.Target, c)
		}
	}
	if r := e.run("bench", "commit-latency", "--name", "itsb", "--count", "0", "--target", "db9"); r.code != 2 ||
		!strings.Contains(r.stderr, "--count:") || !strings.Contains(r.stderr, `unknown target "db9"`) {
		t.Errorf("commit-latency bad input: exit %d %s", r.code, r.stderr)
	}
	// Replication visibility and seed 003's bulk test, node to node.
	r = e.ok("bench", "visibility", "--name", "itsb", "--count", "20", "-o", "json")
	if !strings.Contains(r.stdout, `"wsrep_sync_wait": 1`) || !strings.Contains(r.stdout, `"count": 20`) {
		t.Errorf("visibility: %s", r.stdout)
	}
	r = e.ok("bench", "bulk-replication", "--name", "itsb", "--rows", "100", "--from", "db2", "--to", "db3", "-o", "json")
	if !strings.Contains(r.stdout, `"rows": 100`) || !strings.Contains(r.stdout, `"to": "db3"`) {
		t.Errorf("bulk-replication: %s", r.stdout)
	}
	if r := e.run("bench", "bulk-replication", "--name", "itsb", "--rows", "0,x", "--from", "db2", "--to", "db2"); r.code != 2 ||
		!strings.Contains(r.stderr, "--rows:") || !strings.Contains(r.stderr, "--to: must differ") {
		t.Errorf("bulk-replication bad input: exit %d %s", r.code, r.stderr)
	}
	// mariadb-slap: a concurrency sweep; a failing query is a failure, not numbers.
	r = e.ok("bench", "slap", "--name", "itsb", "--concurrency", "1,4", "--iterations", "1", "--number-of-queries", "100", "-o", "json")
	if !strings.Contains(r.stdout, `"concurrency": 4`) || !strings.Contains(r.stdout, `"qps"`) {
		t.Errorf("slap: %s", r.stdout)
	}
	var sl struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &sl); err != nil {
		t.Fatalf("slap -o json: %v", err)
	}
	if r := e.run("bench", "slap", "--name", "itsb", "--concurrency", "1", "--iterations", "1", "--query", "SELECT nope FROM missing"); r.code != 1 ||
		!strings.Contains(r.stderr, "doesn't exist") {
		t.Errorf("slap with a failing query: exit %d %s", r.code, r.stderr)
	}
	if r := e.run("bench", "slap", "--name", "itsb", "--concurrency", "0", "--load", "burst"); r.code != 2 ||
		!strings.Contains(r.stderr, "--concurrency:") || !strings.Contains(r.stderr, "--load:") {
		t.Errorf("slap bad input: exit %d %s", r.code, r.stderr)
	}
	html = e.writeSpec("report.html", "")
	if r := e.ok("report", out.RunID, cl.RunID, sl.RunID, "-o", html); !strings.Contains(r.stdout, "report of 3 run(s)") {
		t.Errorf("report: %s", r.stdout)
	}
	// the slap run shown in its own way: its best queries a second first
	if page, err := os.ReadFile(html); err != nil || !regexp.MustCompile(`mariadb-slap, lab itsb \(run [^)]+\): [0-9,]+ queries a second at most, with [14] clients?`).Match(page) {
		t.Errorf("report: no finding of the slap run (%v)", err)
	}
	if r := e.run("runs", "compare", "nope"); r.code != 2 || !strings.Contains(r.stderr, `no run "nope"`) {
		t.Errorf("unknown run: exit %d %s", r.code, r.stderr)
	}
}

// private makes a file its owner's only (mode 0600) and returns its path.
func private(t *testing.T, path string) string {
	t.Helper()
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
