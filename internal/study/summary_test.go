package study

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hadrill/hadrill/internal/golden"
	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/workload/sysbench"
)

func TestOrder(t *testing.T) {
	v := []string{"a", "b", "c"}
	got := fmt.Sprint(Order(v, 1), Order(v, 2), Order(v, 3), Order(v, 4))
	if got != "[a b c] [b c a] [c a b] [a b c]" {
		t.Errorf("rounds: %s", got)
	}
}

// seed002Samples are three rounds of figures shaped like a quick run.
func seed002Samples() []Sample {
	var out []Sample
	fig := map[string][3]float64{"async": {0.31, 0.29, 0.33}, "semisync": {101.2, 100.9, 101.6}, "galera1": {0.62, 0.6, 0.71}, "galera2": {101.8, 102.4, 101.5}}
	tps := map[string][3]float64{"async": {612, 598, 605}, "semisync": {61, 60.5, 62}, "galera1": {640, 590, 615}, "galera2": {221, 225, 219}}
	for v, f := range fig {
		for r := 0; r < 3; r++ {
			out = append(out, Sample{Round: r + 1, Variant: v, Step: "commit", Metric: "avg_ms", Value: f[r]},
				Sample{Round: r + 1, Variant: v, Step: "commit", Metric: "p50_ms", Value: f[r] * 0.98},
				Sample{Round: r + 1, Variant: v, Step: "oltp", Metric: "tps@32", Value: tps[v][r]})
		}
	}
	return out
}

func TestSummarizeAndFinding(t *testing.T) {
	s, err := Embedded("seed002-wan")
	if err != nil {
		t.Fatal(err)
	}
	variants := []string{"async", "semisync", "galera1", "galera2"}
	cells, checks := Summarize(s, s.Scales.Quick, variants, seed002Samples())
	var semi, galera1 Cell
	for _, c := range cells {
		if c.Step == "commit" && c.Metric == "avg_ms" && c.Variant == "semisync" {
			semi = c
		}
		if c.Step == "oltp" && c.Variant == "galera1" {
			galera1 = c
		}
	}
	if semi.Median != 101.2 || semi.Delta == nil || semi.Delta.WithinNoise || semi.Published == nil || semi.Ratio < 0.99 || semi.Ratio > 0.993 {
		t.Errorf("semi-sync commit: %+v", semi)
	}
	if galera1.Delta == nil || !galera1.Delta.WithinNoise {
		t.Errorf("Galera one site against async, 32 clients: overlapping rounds are within noise: %+v", galera1)
	}
	if len(checks) != 4 || slices.ContainsFunc(checks, func(c Check) bool { return !c.Met }) {
		t.Errorf("checks %+v", checks)
	}
	golden.Check(t, "seed002-finding", []byte(Finding(s, "quick", 3, cells, checks, false)+"\n"))
}

func TestHTML(t *testing.T) {
	s, _ := Embedded("seed002-wan")
	variants := []string{"async", "semisync", "galera1", "galera2"}
	res := &Result{Study: s, Scale: "quick", Protocol: s.Scales.Quick, Variants: variants, Rounds: 3, Samples: seed002Samples(),
		Labs: map[string]string{"async": "stasync"}}
	res.Cells, res.Checks = Summarize(s, s.Scales.Quick, variants, res.Samples)
	res.Finding = Finding(s, "quick", 3, res.Cells, res.Checks, false)
	ctx := Context{Settings: []Difference{{Setting: "galera.wsrep_on", Values: map[string]string{"async": "OFF", "galera1": "ON"}}},
		Hosts:    []HostRow{{Variant: "galera2", Host: "db3", Machine: "d1 (1 CPU, 3.5G)", CPU: "0.80 mean, 0.99 p95", Disks: "db3-data0 (data): 500 IOPS cap"}},
		Computer: map[string]string{"cpus": "2", "memory": "24 GiB", "kernel": "6.18"},
		Histograms: []Histogram{{Step: "oltp", Threads: 32, Variants: map[string][]sysbench.Bucket{
			"async": {{Value: 1.2, Count: 10}, {Value: 2.5, Count: 5}}, "galera2": {{Value: 101, Count: 3}, {Value: 210, Count: 1}}}}}}
	b, err := HTML(&results.Run{ID: "20261123-000000-abcd"}, res, ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"reproduced on 4 of 4 counts", "<svg", "published ~102 ms", "logarithmic axis", "within noise", "✔", "<td>galera.wsrep_on</td><td>OFF</td><td></td><td>ON</td>", "same versions", "innodb_flush_log_at_trx_commit: &#34;2&#34;", "<td>wan2-semisync</td>",
		"Hosts, as measured", "<td>Galera, two sites</td><td>db3</td><td>d1 (1 CPU, 3.5G)</td>", "all ran on one computer: 2 CPUs",
		"Latency distribution, step oltp with 32 clients", "<polyline", "async (control) (15 transactions)"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

func TestRelativeExpect(t *testing.T) {
	s, err := Embedded("seed003-alloc")
	if err != nil {
		t.Fatal(err)
	}
	var samples []Sample
	for r, v := range []float64{4.6, 4.5, 4.7} {
		samples = append(samples, Sample{Round: r + 1, Variant: "au4k", Step: "write", Metric: "seconds", Value: v},
			Sample{Round: r + 1, Variant: "au64k", Step: "write", Metric: "seconds", Value: v + 0.05})
	}
	cells, checks := Summarize(s, s.Scales.Quick, []string{"au4k", "au64k"}, samples)
	if len(checks) != 1 || !checks[0].Measured || checks[0].Met || checks[0].Median < 1.0 || checks[0].Median > 1.02 {
		t.Errorf("64K against 4K: %+v", checks)
	}
	f := Finding(s, "quick", 3, cells, checks, false)
	for _, want := range []string{"Seconds of fio's file1g test", "XFS, 64K blocks 4.65 s", "published 2.0 s (NTFS 64K, 16 disks)",
		"reproduced on 0 of 1 counts measured; not reproduced: XFS, 64K blocks write 1.01× XFS, 4K blocks (the document: 64K clusters wrote the file 20 % faster)",
		"XFS, 4K blocks 4.60 s (range of 3 (a 75 % interval) 4.50–4.70)"} {
		if !strings.Contains(f, want) {
			t.Errorf("finding lacks %q:\n%s", want, f)
		}
	}
}

func TestClaimedDifferenceMustStandOutOfNoise(t *testing.T) {
	s, _ := Embedded("seed000-bufferpool")
	var samples []Sample
	for r, v := range [][2]float64{{634, 672}, {535, 634}, {660, 711}} {
		samples = append(samples, Sample{Round: r + 1, Variant: "pool128m", Step: "oltp", Metric: "tps@8", Value: v[0]},
			Sample{Round: r + 1, Variant: "pool2g", Step: "oltp", Metric: "tps@8", Value: v[1]})
	}
	_, checks := Summarize(s, s.Scales.Quick, []string{"pool128m", "pool2g"}, samples)
	if len(checks) != 1 || checks[0].Met || !checks[0].WithinNoise || checks[0].Median < 1.05 || checks[0].Outcome() != "not established" {
		t.Errorf("+6 %% within noise is not a reproduced gain: %+v", checks)
	}
	cells, _ := Summarize(s, s.Scales.Quick, []string{"pool128m", "pool2g"}, samples)
	if f := Finding(s, "quick", 3, cells, checks, false); !strings.Contains(f, "reproduced on 0 of 1 counts measured; not established:") ||
		!strings.Contains(f, "which 3 round(s) cannot tell from noise (Welch's t-test, p 0.") || !strings.Contains(f, "at most 5 % of the time") {
		t.Errorf("finding:\n%s", f)
	}
}

// TestInterruptedStudyCounts: a study stopped before some checks were
// measured counts them as not measured, never as not reproduced.
func TestInterruptedStudyCounts(t *testing.T) {
	s, _ := Embedded("seed000-bufferpool")
	_, checks := Summarize(s, s.Scales.Quick, []string{"pool128m", "pool2g"}, []Sample{{Round: 1, Variant: "pool128m", Step: "oltp", Metric: "tps@8", Value: 600}})
	if len(checks) != 1 || checks[0].Measured || checks[0].Outcome() != "not measured" {
		t.Fatalf("checks %+v", checks)
	}
	f := Finding(s, "quick", 0, nil, checks, true)
	if !strings.Contains(f, "reproduced on 0 of 0 counts measured") || strings.Contains(f, "not reproduced") ||
		!strings.Contains(f, "1 count(s) not measured, so neither reproduced nor not (the study stopped before they ran)") {
		t.Errorf("finding of an interrupted study:\n%s", f)
	}
}

func TestSlapFinding(t *testing.T) {
	s, err := Embedded("seed001-slap")
	if err != nil {
		t.Fatal(err)
	}
	var samples []Sample
	for r := 1; r <= 3; r++ {
		for _, c := range []int{1, 4, 8} {
			f := float64(r) / 100
			samples = append(samples,
				Sample{Round: r, Variant: "osdisk", Step: "read", Metric: fmt.Sprintf("avg_s@%d", c), Value: 0.4*float64(c) + f},
				Sample{Round: r, Variant: "stripe4", Step: "read", Metric: fmt.Sprintf("avg_s@%d", c), Value: 0.2*float64(c) + f},
				Sample{Round: r, Variant: "osdisk", Step: "write", Metric: fmt.Sprintf("avg_s@%d", c), Value: 14 + f},
				Sample{Round: r, Variant: "stripe4", Step: "write", Metric: fmt.Sprintf("avg_s@%d", c), Value: 12 + f})
		}
	}
	cells, checks := Summarize(s, s.Scales.Quick, []string{"osdisk", "stripe4"}, samples)
	if len(checks) != 1 || !checks[0].Met || checks[0].Median < 1.9 {
		t.Errorf("the stripe reads twice as fast: %+v", checks)
	}
	f := Finding(s, "quick", 3, cells, checks, false)
	for _, want := range []string{"Seconds for 1 mariadb-slap client to run the query over the generated employees dataset: OS disk (ext4, host-cached) 0.420 s",
		"Seconds for 8 mariadb-slap clients to run its generated write load", "reproduced on 1 of 1 counts"} {
		if !strings.Contains(f, want) {
			t.Errorf("finding lacks %q:\n%s", want, f)
		}
	}
	res := &Result{Study: s, Scale: "quick", Protocol: s.Scales.Quick, Variants: []string{"osdisk", "stripe4"}, Rounds: 3, Samples: samples,
		Cells: cells, Checks: checks, Finding: f}
	b, err := HTML(&results.Run{ID: "x"}, res, Context{})
	if err != nil {
		t.Fatal(err)
	}
	// one chart across the client counts per step, as document 001 draws it
	for _, want := range []string{"<h2>Seconds for mariadb-slap&#39;s clients to run the query over the generated employees dataset</h2>", "<polyline", "seconds (median of the rounds"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(string(b), "<h2>Seconds for 4 mariadb-slap clients") {
		t.Error("a bar chart per client count beside the chart across them")
	}
}
