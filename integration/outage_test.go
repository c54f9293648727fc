package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRelaxedOutage: a study step of kind drill runs the full-outage drill
// with the append workload on Galera's relaxed profile
// (innodb_flush_log_at_trx_commit=0): every node killed at once, the
// cluster recovered, the history checked against final reads. The appends
// committed and never read again are reported (Jepsen's lost commits), as
// each round's drill run counted them. The relaxed profile lost some in
// about three rounds of eight here, so the test does not ask for a loss
// (that the checker finds one is unit-tested); the durable profile's
// drill (TestDrills) must lose none.
func TestRelaxedOutage(t *testing.T) {
	t.Parallel() // it mostly waits: see active
	e := newEnv(t)
	file := e.writeSpec("outage.yaml", `name: outage
title: the relaxed profile's full outage
source: a test
variants:
  - {name: relaxed, preset: galera3, baseline: true, patch: {clusters: [{name: db, profile: relaxed}]}}
steps:
  - {name: outage, kind: drill, scenario: full-outage}
scales:
  quick: {runs: 2, time: 2}
  full: {runs: 2, time: 2}
expect:
  - {step: outage, variant: relaxed, metric: lost_appends, min: 1, why: "lost when every node crashes", claim: "committed transactions can be lost when nodes crash in quick succession", source: "a summary"}
`)
	if r := e.run("study", "run", "--file", strings.Replace(file, "outage.yaml", "nope.yaml", 1)); r.code != 2 {
		t.Errorf("a missing study file: exit %d", r.code)
	}
	bad := e.writeSpec("bad.yaml", `name: bad
title: a drill that names a node
source: a test
variants:
  - {name: v, preset: galera3}
steps:
  - {name: s, kind: drill, scenario: domain-outage, workload: ledger}
scales:
  quick: {runs: 1, time: 0}
  full: {runs: 1, time: 2}
`)
	if r := e.run("study", "run", "--file", bad); r.code != 2 || !strings.Contains(r.stderr, "steps[0].scenario: a study runs the drills that need no target named") ||
		!strings.Contains(r.stderr, `steps[0].workload: expected one of acked, append, `) || !strings.Contains(r.stderr, `, tpcc, got "ledger"`) || !strings.Contains(r.stderr, "scales.quick.time") {
		t.Errorf("a bad drill step: exit %d\n%s", r.code, r.stderr)
	}

	r := e.runDrill("study", "run", "--file", file, "-o", "json")
	if r.code != 0 && r.code != 4 {
		t.Fatalf("study: exit %d\n%s", r.code, r.stderr)
	}
	var out struct {
		Result struct {
			Samples []struct {
				Metric string  `json:"metric"`
				Value  float64 `json:"value"`
				RunID  string  `json:"run_id"`
			} `json:"samples"`
			Checks []struct {
				Verdict string `json:"verdict"`
			} `json:"checks"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	by := map[string][]float64{}
	runs := map[string]bool{}
	for _, s := range out.Result.Samples {
		by[s.Metric] = append(by[s.Metric], s.Value)
		runs[s.RunID] = true
	}
	if len(by["lost_appends"]) != 2 || len(by["committed_appends"]) != 2 || len(by["lost_any"]) != 2 || len(runs) != 2 {
		t.Errorf("two drills, each with its history checked: %v", by)
	}
	lostBy := map[string]float64{}
	for _, s := range out.Result.Samples {
		if s.Metric == "lost_appends" {
			lostBy[s.RunID] = s.Value
		}
	}
	for _, v := range by["committed_appends"] {
		if v < 100 {
			t.Errorf("a round committed only %v appends", v)
		}
	}
	if len(out.Result.Checks) != 1 || out.Result.Checks[0].Verdict == "not_measured" {
		t.Errorf("checks: %+v", out.Result.Checks)
	}
	// each round is a drill run of its own, its history stored with it
	for id := range runs {
		var d struct {
			Results struct {
				Scenario    string `json:"scenario"`
				Workload    string `json:"workload"`
				Consistency *struct {
					OK        int `json:"ok"`
					Anomalies []struct {
						Type  string `json:"type"`
						Count int    `json:"count"`
					} `json:"anomalies"`
				} `json:"consistency"`
			} `json:"results"`
		}
		b, err := os.ReadFile(filepath.Join(e.home, "runs", id, "run.json"))
		if err != nil || json.Unmarshal(b, &d) != nil {
			t.Fatalf("run %s: %v", id, err)
		}
		if d.Results.Scenario != "full-outage" || d.Results.Workload != "append" || d.Results.Consistency == nil {
			t.Fatalf("run %s: %+v", id, d.Results)
		}
		lost := 0
		for _, a := range d.Results.Consistency.Anomalies {
			if a.Type == "lost" {
				lost = a.Count
			}
		}
		if float64(lost) != lostBy[id] {
			t.Errorf("run %s: its history lost %d appends, the study says %v", id, lost, lostBy[id])
		}
		// the history ends with a final read of every key through each node
		h, _ := os.ReadFile(filepath.Join(e.home, "runs", id, "history.jsonl"))
		lines := strings.Split(strings.TrimSpace(string(h)), "\n")
		if len(lines) < 6 || !strings.Contains(lines[len(lines)-1], `["r",9,[`) {
			t.Errorf("run %s: no final reads at the end of its history: %.200s", id, lines[len(lines)-1])
		}
	}
	t.Logf("relaxed full outage, two rounds: lost appends %v, lost acknowledged writes %v", by["lost_appends"], by["lost_writes"])
}
