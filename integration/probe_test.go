package integration

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestDonorProbe: the donor-probe study step through a load balancer
// balanced over galera3, with real servers. A member made
// Donor/Desynced takes no new connection where the health check keeps
// donors out (clustercheck's default), and keeps its share where the
// cluster's available_when_donor admits them: the same claim is then not
// reproduced, so the check can say no.
func TestDonorProbe(t *testing.T) {
	t.Parallel() // it mostly waits: see active
	e := newEnv(t)
	claim := `claim: "traffic only to Joined nodes", source: "a test", why: "none on a donor"`
	file := e.writeSpec("probe.yaml", `name: probe
title: the health check and a donor
source: a test
variants:
  - {name: synced, preset: galera3, baseline: true, patch: {load_balancers: [{name: lb, mode: balanced}], clusters: [{name: db, config: {innodb_buffer_pool_size: 128M}}]}}
  - {name: admitted, preset: galera3, patch: {load_balancers: [{name: lb, mode: balanced}], clusters: [{name: db, available_when_donor: true, config: {innodb_buffer_pool_size: 128M}}]}}
steps:
  - {name: donor, kind: donor-probe, node: db2}
scales:
  quick: {runs: 3, count: 60}
  full: {runs: 3, count: 60}
expect:
  - {step: donor, variant: synced, metric: donor_share, max: 0, `+claim+`}
  - {step: donor, variant: admitted, metric: donor_share, max: 0, `+claim+`}
  - {step: donor, variant: synced, metric: synced_share, min: 0.15, `+claim+`}
`)
	text, _ := os.ReadFile(file)
	bad := e.writeSpec("bad.yaml", strings.NewReplacer("count: 60}\n  full", "count: 5}\n  full", "node: db2", "node: db2, volume: data").Replace(
		strings.Split(string(text), "expect:")[0]))
	if r := e.run("study", "run", "--file", bad); r.code != 2 || !strings.Contains(r.stderr, "scales.quick.count: expected 10 to 10000 new connections a phase (step donor), got 5") ||
		!strings.Contains(r.stderr, "steps[0].volume") {
		t.Errorf("a bad donor-probe step: exit %d\n%s", r.code, r.stderr)
	}
	r := e.run("study", "run", "--file", file, "-o", "json")
	if r.code != 4 {
		t.Fatalf("study: exit %d, want 4 (one claim not reproduced)\n%s%s", r.code, r.stdout, r.stderr)
	}
	var out struct {
		Result struct {
			Checks []struct {
				Variant string `json:"variant"`
				Metric  string `json:"metric"`
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
	want := map[string]string{"synced donor_share": "reproduced", "admitted donor_share": "not_reproduced", "synced synced_share": "reproduced"}
	for _, c := range out.Result.Checks {
		k := c.Variant + " " + c.Metric
		t.Logf("%s: %.3f, %s", k, c.Ours.Value, c.Verdict)
		if c.Verdict != want[k] {
			t.Errorf("%s: %s (%.3f), want %s", k, c.Verdict, c.Ours.Value, want[k])
		}
		delete(want, k)
	}
	if len(want) > 0 {
		t.Errorf("checks missing: %v", want)
	}
}
