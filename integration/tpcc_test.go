package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

type tpccOut struct {
	RunID   string `json:"run_id"`
	Results []struct {
		Threads int `json:"threads"`
		TpmC    struct {
			N      int     `json:"n"`
			Median float64 `json:"median"`
			Lo     float64 `json:"ci_lo"`
			Hi     float64 `json:"ci_hi"`
		} `json:"tpmc"`
		Txns []struct {
			Name  string  `json:"name"`
			Count int64   `json:"count"`
			P95   float64 `json:"p95_ms"`
		} `json:"transactions"`
	} `json:"results"`
	Check *struct {
		Passed   bool     `json:"passed"`
		Failures []string `json:"failures"`
	} `json:"check"`
	Costs map[string]struct {
		CPUms float64 `json:"cpu_ms_per_tx"`
		Known bool    `json:"known"`
	} `json:"costs_per_transaction"`
}

// TestTPCC: go-tpc's TPC-C through galera3's load balancer at one
// warehouse: tpmC at two client counts with an interval over two runs,
// every transaction type measured, the consistency conditions hold; then a
// warehouse's year-to-date total changed by hand breaks conditions 3.3.2.1
// and 3.3.2.8 and the check says so (exit 5; go-tpc stops at the first it
// tries, in no set order). Bad parameters are refused before
// anything runs, and the run's own account is gone afterwards.
func TestTPCC(t *testing.T) {
	t.Parallel() // no timing bound a test beside it could break
	e := newEnv(t)
	e.ok("up", "--name", "ittpc")
	if r := e.run("bench", "tpcc", "--name", "ittpc", "--warehouses", "0", "--threads", "x", "--time", "1", "--runs", "0"); r.code != 2 ||
		!strings.Contains(r.stderr, "--warehouses: expected 1 to 10000, got 0") || !strings.Contains(r.stderr, `--threads: expected client counts from 1 to 1024 separated by commas, got "x"`) ||
		!strings.Contains(r.stderr, "--time: expected 5 to 86400 seconds, got 1") || !strings.Contains(r.stderr, "--runs: expected 1 to 100, got 0") {
		t.Errorf("bad parameters: exit %d\n%s", r.code, r.stderr)
	}
	if r := e.run("bench", "tpcc", "--name", "ittpc", "--warehouses", "10000", "--time", "5", "--runs", "1"); r.code != 2 ||
		!strings.Contains(r.stderr, "--warehouses: 10000 warehouse(s) are about 976.56G a node, 2.86T for the lab's 3 nodes on this computer's disk, which has") {
		t.Errorf("a dataset larger than the lab's disk: exit %d\n%s", r.code, r.stderr)
	}
	if r := e.ok("runs", "list", "-o", "json"); strings.Contains(r.stdout, "tpcc") {
		t.Errorf("a refused run was stored:\n%s", r.stdout)
	}

	var out tpccOut
	r := e.run("bench", "tpcc", "--name", "ittpc", "--warehouses", "1", "--threads", "2,4", "--time", "5", "--warmup", "1", "--runs", "2", "--check", "-o", "json")
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.code != 0 {
		t.Fatalf("bench tpcc: exit %d %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if len(out.Results) != 2 || out.Check == nil || !out.Check.Passed {
		t.Fatalf("bench tpcc: %+v", out)
	}
	for _, p := range out.Results {
		c := out.Costs[strconv.Itoa(p.Threads)]
		t.Logf("TPC-C, 1 warehouse, %d clients: tpmC %.0f (%.0f–%.0f over %d runs), %.2f CPU ms a transaction", p.Threads, p.TpmC.Median, p.TpmC.Lo, p.TpmC.Hi, p.TpmC.N, c.CPUms)
		if !c.Known || c.CPUms <= 0 {
			t.Errorf("%d clients: no CPU per transaction: %+v", p.Threads, out.Costs)
		}
		if p.TpmC.N != 2 || p.TpmC.Median < 100 || p.TpmC.Lo > p.TpmC.Median || p.TpmC.Hi < p.TpmC.Median {
			t.Errorf("%d clients: %+v", p.Threads, p.TpmC)
		}
		seen := map[string]bool{}
		for _, x := range p.Txns {
			seen[x.Name] = x.Count > 0 && x.P95 > 0
		}
		for _, name := range []string{"NEW_ORDER", "PAYMENT", "ORDER_STATUS", "DELIVERY", "STOCK_LEVEL"} {
			if !seen[name] {
				t.Errorf("%d clients: %s not measured: %+v", p.Threads, name, p.Txns)
			}
		}
	}
	var runs []struct {
		ID   string `json:"run_id"`
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal([]byte(e.ok("runs", "list", "-o", "json").stdout), &runs); err != nil || len(runs) != 1 || runs[0].ID != out.RunID || runs[0].Kind != "tpcc" {
		t.Errorf("the run store after one TPC-C run: %+v %v", runs, err)
	}

	// TPC-C through a failover of the writer: its consistency holds after
	tpccDrill := func() (int, drillTPCC, string) {
		r := e.runDrill("drill", "failover", "--name", "ittpc", "--workload", "tpcc", "--rate", "30", "--before", "3s", "--after", "3s", "-o", "json")
		var d drillTPCC
		if err := json.Unmarshal([]byte(r.stdout), &d); err != nil || d.TPCC == nil {
			t.Fatalf("drill failover --workload tpcc: exit %d %v\n%s%s", r.code, err, r.stdout, r.stderr)
		}
		return r.code, d, r.stderr
	}
	if code, d, stderr := tpccDrill(); code != 0 || !d.Passed || d.TPCC.Check == nil || !d.TPCC.Check.Passed || d.TPCC.NewOrders <= 0 || len(d.TPCC.Runs) < 2 {
		t.Errorf("TPC-C through a failover: exit %d %+v %+v\n%s", code, d, d.TPCC, stderr)
	} else {
		t.Logf("TPC-C through a failover: %d New-Orders, %.0f tpmC over the drill, runs %v, errors %v", d.TPCC.NewOrders, d.TPCC.TpmC, d.TPCC.Runs, d.TPCC.ByCode)
	}

	// W_YTD = sum(D_YTD) broken by hand: the check must say no. Every
	// node is drained as the run begins (the load balancer has no server,
	// as when a reconfiguration of the cluster has them all marked down
	// for a moment): the run waits until one is back, then measures.
	first := out.RunID
	e.sql("ittpc", "db1", "UPDATE tpcc.warehouse SET w_ytd = w_ytd + 1")
	e.ok("drain", "--name", "ittpc", "db1", "db2", "db3") // returns once the load balancer has marked them down
	undrain, undrained := e.cmd("undrain", "--name", "ittpc", "db1", "db2", "db3"), make(chan error, 1)
	go func() {
		time.Sleep(3 * time.Second)
		out, err := undrain.CombinedOutput()
		if err != nil {
			err = fmt.Errorf("%w: %s", err, out)
		}
		undrained <- err
	}()
	r = e.run("bench", "tpcc", "--name", "ittpc", "--warehouses", "1", "--threads", "2", "--time", "5", "--warmup", "0", "--runs", "1", "--check", "-o", "json")
	if err := <-undrained; err != nil {
		t.Fatalf("undrain: %v", err)
	}
	if w := regexp.MustCompile(`.*waited \d+\.\d s for lb to take a session`).FindString(r.stderr); w == "" {
		t.Errorf("a run begun while the load balancer had no server does not say it waited:\n%s", r.stderr)
	} else {
		t.Logf("begun while the load balancer had no server: %s", w)
	}
	out = tpccOut{}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.code != 5 || out.Check == nil || out.Check.Passed ||
		len(out.Check.Failures) == 0 || !strings.Contains(out.Check.Failures[0], "3.3.2.1 failed") && !strings.Contains(out.Check.Failures[0], "3.3.2.8 failed") {
		t.Errorf("a broken condition: exit %d %v %+v\n%s", r.code, err, out.Check, r.stderr)
	}

	// and a drill's check says no too: the drill fails
	if code, d, _ := tpccDrill(); code == 0 || d.Passed || !strings.Contains(strings.Join(d.Problems, "; "), "a TPC-C consistency condition does not hold after the drill") {
		t.Errorf("a drill over a broken condition: exit %d, passed %v, problems %q", code, d.Passed, d.Problems)
	}

	// the two runs side by side, in runs compare and in the report
	if r := e.run("runs", "compare", first, out.RunID); r.code != 0 || !strings.Contains(r.stdout, "A tpmC") || !strings.Contains(r.stdout, "consistency check FAILED") ||
		!regexp.MustCompile(`(?m)^\s*2\s+\d+\s+\d+–\d+ .* [+-]\d+\.\d %`).MatchString(r.stdout) {
		t.Errorf("runs compare of two TPC-C runs: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var cols []struct {
		ID     string `json:"run_id"`
		Points []struct {
			Threads  int      `json:"threads"`
			DeltaPct *float64 `json:"delta_pct"`
		} `json:"points"`
	}
	if r := e.ok("runs", "compare", first, out.RunID, "-o", "json"); json.Unmarshal([]byte(r.stdout), &cols) != nil || len(cols) != 2 ||
		len(cols[0].Points) != 2 || len(cols[1].Points) != 1 || cols[1].Points[0].DeltaPct == nil {
		t.Errorf("runs compare -o json of two TPC-C runs:\n%s", r.stdout)
	}
	html := filepath.Join(t.TempDir(), "report.html")
	if r := e.run("report", first, out.RunID, "-o", html); r.code != 0 {
		t.Errorf("report of two TPC-C runs: exit %d\n%s", r.code, r.stderr)
	} else if b, err := os.ReadFile(html); err != nil || !strings.Contains(string(b), `id="tpmc"`) || !strings.Contains(string(b), "TPC-C, lab ittpc, 1 warehouse(s)") {
		t.Errorf("the report of two TPC-C runs lacks its chart or finding (%v)", err)
	}
	// runs of two kinds are not set side by side: a sysbench run made from
	// the first (its kind changed in its record)
	b, err := os.ReadFile(filepath.Join(e.home, "runs", first, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(e.home, "runs", "20000101-000000-5b5b")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	rec := strings.Replace(strings.Replace(string(b), `"kind": "tpcc"`, `"kind": "sysbench"`, 1), `"run_id": "`+first+`"`, `"run_id": "20000101-000000-5b5b"`, 1)
	if err := os.WriteFile(filepath.Join(other, "run.json"), []byte(rec), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := e.run("runs", "compare", first, "20000101-000000-5b5b"); r.code != 2 || !strings.Contains(r.stderr, "runs of one kind are compared: 20000101-000000-5b5b are sysbench runs; "+first+" are TPC-C runs") {
		t.Errorf("runs compare of a TPC-C and a sysbench run: exit %d\n%s", r.code, r.stderr)
	}
	_ = os.RemoveAll(other)
	for _, n := range []string{"db1", "db2", "db3"} {
		if got := e.sql("ittpc", n, "SELECT COUNT(*) FROM mysql.user WHERE user LIKE 'hd_tpcc%'"); !strings.HasSuffix(got, "\n0") {
			t.Errorf("%s keeps the runs' accounts: %q", n, got)
		}
		if got := e.sql("ittpc", n, "SELECT COUNT(*) FROM information_schema.statistics WHERE table_schema='tpcc' AND index_name='hd_check_customer'"); !strings.HasSuffix(got, "\n0") {
			t.Errorf("%s keeps the check's index: %q", n, got)
		}
	}
	e.ok("down", "--name", "ittpc")
	e.assertNoLeftovers()
}

// drillTPCC is what a drill with --workload tpcc prints (-o json).
type drillTPCC struct {
	Passed   bool     `json:"passed"`
	Problems []string `json:"problems"`
	TPCC     *struct {
		NewOrders int64          `json:"new_orders"`
		TpmC      float64        `json:"tpmc"`
		Runs      []float64      `json:"runs_tpmc"`
		ByCode    map[string]int `json:"errors_by_code"`
		Check     *struct {
			Passed   bool     `json:"passed"`
			Failures []string `json:"failures"`
		} `json:"check"`
	} `json:"tpcc"`
}

// TestTPCCStudy: a study step of kind tpcc on galera3 with real servers:
// tpmC measured each round, the consistency conditions checked each round;
// a bound the figure meets is reproduced and one it cannot meet is not,
// so the study exits 4. Three rounds, each after a warm-up: two cold
// rounds on a busy computer (6,750 tpmC, one far from the other) left a
// bound of 100 inside their interval.
func TestTPCCStudy(t *testing.T) {
	t.Parallel() // no timing bound a test beside it could break
	e := newEnv(t)
	claim := `claim: "a test", source: "a test", why: "a test"`
	file := e.writeSpec("tpcc.yaml", `name: tpcc-step
title: TPC-C as a study step
source: a test
variants:
  - {name: g, preset: galera3, baseline: true, patch: {clusters: [{name: db, config: {innodb_buffer_pool_size: 256M}}]}}
steps:
  - {name: tpcc, kind: tpcc, check: true}
scales:
  quick: {runs: 3, warehouses: 1, threads: [2], time: 5, warmup: 2}
  full: {runs: 3, warehouses: 1, threads: [2], time: 5, warmup: 2}
expect:
  - {step: tpcc, variant: g, metric: tpmc@2, min: 100, `+claim+`}
  - {step: tpcc, variant: g, metric: tpmc@2, min: 100000000, `+claim+`}
`)
	r := e.run("study", "run", "--file", file, "-o", "json")
	if r.code != 4 {
		t.Fatalf("study: exit %d, want 4 (one claim not reproduced)\n%s%s", r.code, r.stdout, r.stderr)
	}
	var out struct {
		Result struct {
			Checks []struct {
				Verdict string `json:"verdict"`
				Ours    struct {
					Value float64 `json:"value"`
				} `json:"ours"`
			} `json:"checks"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if c := out.Result.Checks; len(c) != 2 || c[0].Verdict != "reproduced" || c[1].Verdict != "not_reproduced" || c[0].Ours.Value < 100 {
		t.Errorf("checks: %+v", c)
	} else {
		t.Logf("TPC-C as a study step: %.0f tpmC over 3 rounds", c[0].Ours.Value)
	}
	e.assertNoLeftovers()
}
