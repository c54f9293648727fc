package study

import (
	"errors"
	"fmt"
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

// seed002Samples are three rounds of figures shaped like a quick run:
// semi-sync and two-site Galera a round trip a commit, one-site Galera
// twice the control's commit (not the document's ten times), one-site
// Galera and the control's TPS overlapping (noise cannot tell), two-site
// Galera far above semi-sync.
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

func verdicts(checks []Check) string {
	var out []string
	for _, c := range checks {
		out = append(out, c.Variant+"/"+c.Than+" "+c.Metric+": "+c.Verdict)
	}
	return strings.Join(out, "\n")
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
		if c.Step == "oltp" && c.Metric == "tps@32" && c.Variant == "galera1" {
			galera1 = c
		}
	}
	if semi.Median != 101.2 || semi.Delta == nil || semi.Delta.WithinNoise || semi.Published == nil || !semi.Published.Inferred || semi.printed() != nil {
		t.Errorf("semi-sync commit (its published figure is inferred, never drawn): %+v", semi)
	}
	if galera1.Delta == nil || !galera1.Delta.WithinNoise || galera1.printed() == nil {
		t.Errorf("Galera one site against async, 32 clients: overlapping rounds are within noise: %+v", galera1)
	}
	want := `semisync/ avg_ms: reproduced
galera2/ avg_ms: reproduced
galera2/semisync avg_ms: reproduced
galera1/async avg_ms: not_checkable
galera1/async tps@32: inconclusive
galera2/semisync tps@32: not_checkable
semisync/async tps@32: not_checkable
galera2/galera1 tps@32: reproduced`
	if got := verdicts(checks); got != want {
		t.Errorf("verdicts:\n%s\nwant\n%s", got, want)
	}
	f := findingOf(s, "quick", 3, cells, checks, false)
	if !strings.HasPrefix(f, "Not established: 4 of the document's 5 claims checked hold; 1 inconclusive; 3 more not checkable here, each saying why.\n") ||
		!strings.Contains(f, "\n⊘ not checkable: avg_ms: Galera, one site 2.08× async (control) (1.79–2.38); claim from 5.00× to 20.0× (read from its words): \"The overhead of Galera replication is approximately 10x…\" — not checkable here: ") {
		t.Errorf("the finding does not open with the answer:\n%s", f)
	}
	golden.Check(t, "seed002-finding", []byte(f+"\n"))
	err = Verdict(&Result{Study: s, Checks: checks}, "RUN")
	var u *Unreproduced
	if !errors.As(err, &u) || !strings.Contains(err.Error(), "study seed002-wan: Not established: 4 of the document's 5 claims checked hold") {
		t.Errorf("verdict of a study with claims not reproduced: %v", err)
	}
}

// TestVerdicts: a check's verdict follows where the interval of its figure
// lies against the claim's bounds; every verdict can be reached.
func TestVerdicts(t *testing.T) {
	s, _ := Embedded("seed000-bufferpool")
	run := func(small, big [3]float64) Check {
		var samples []Sample
		for r := range 3 {
			samples = append(samples, Sample{Round: r + 1, Variant: "pool128m", Step: "oltp", Metric: "tps@64", Value: small[r]},
				Sample{Round: r + 1, Variant: "pool2g", Step: "oltp", Metric: "tps@64", Value: big[r]})
		}
		_, checks := Summarize(s, s.Scales.Quick, []string{"pool128m", "pool2g"}, samples)
		return checks[0]
	}
	for _, c := range []struct {
		small, big [3]float64
		want       string
	}{
		{[3]float64{100, 101, 99}, [3]float64{130, 131, 129}, Reproduced},
		{[3]float64{100, 101, 99}, [3]float64{95, 96, 94}, NotReproduced},
		{[3]float64{634, 535, 660}, [3]float64{672, 634, 711}, Inconclusive}, // +12 %, the rounds overlapping
		{[3]float64{100, 101, 99}, [3]float64{100, 101, 99}, NotReproduced},  // the same, tightly: no gain of 5 %
	} {
		if got := run(c.small, c.big); got.Verdict != c.want {
			t.Errorf("%v against %v: %s (ours %+v), want %s", c.big, c.small, got.Verdict, got.Ours, c.want)
		}
	}
	if Verdict(&Result{Study: s, Checks: []Check{run([3]float64{100, 101, 99}, [3]float64{130, 131, 129})}}, "RUN") != nil {
		t.Error("a study whose every claim reproduced is no error")
	}
}

// TestNoiseIsNeverReproduced: every ratio claim of every embedded study,
// fed the same noisy rounds for both variants, is inconclusive or not
// reproduced: no claim passes on noise. One whose bounds touch "no
// difference" (at least as fast, within 10 %) is inconclusive.
func TestNoiseIsNeverReproduced(t *testing.T) {
	noise := []float64{100, 112, 91}
	for _, name := range Names() {
		s, _ := Embedded(name)
		for _, e := range s.Expect {
			if e.Than == "" {
				continue
			}
			var samples []Sample
			for r, v := range noise {
				samples = append(samples, Sample{Round: r + 1, Variant: e.Variant, Step: e.Step, Metric: e.Metric, Value: v},
					Sample{Round: r + 1, Variant: e.Than, Step: e.Step, Metric: e.Metric, Value: v})
			}
			_, checks := Summarize(s, s.Scales.Quick, []string{e.Variant, e.Than}, samples)
			for _, c := range checks {
				if c.Variant != e.Variant || c.Than != e.Than || c.Metric != e.Metric {
					continue
				}
				excludes := (c.Min != nil && *c.Min >= 1) || (c.Max != nil && *c.Max <= 1)
				if excludes && c.Verdict == Reproduced {
					t.Errorf("%s: %s against %s on noise alone: reproduced (%+v)", name, c.Variant, c.Than, c.Ours)
				}
				if touches := (c.Min != nil && *c.Min > 0.85 && *c.Min <= 1) || (c.Max != nil && *c.Max >= 1 && *c.Max < 1.15); touches && c.Verdict != Inconclusive && c.Verdict != NotCheckable {
					t.Errorf("%s: %s against %s on noise alone: %s, want inconclusive (%+v)", name, c.Variant, c.Than, c.Verdict, c.Ours)
				}
			}
		}
	}
}

func TestHTML(t *testing.T) {
	s, _ := Embedded("seed002-wan")
	variants := []string{"async", "semisync", "galera1", "galera2"}
	res := &Result{Study: s, Scale: "quick", Protocol: s.Scales.Quick, Variants: variants, Rounds: 3, Samples: seed002Samples(),
		Labs: map[string]string{"async": "stasync"}}
	res.Cells, res.Checks = Summarize(s, s.Scales.Quick, variants, res.Samples)
	res.Checks[3].Measured = []string{"Galera, one site: the lab's hosts used 1.9 of the computer's 2 cores"}
	res.Finding = findingOf(s, "quick", 3, res.Cells, res.Checks, false)
	ctx := Context{Settings: []results.Difference{{Setting: "galera.wsrep_on", Values: map[string]string{"async": "OFF", "galera1": "ON"}}},
		Hosts:    []HostRow{{Variant: "galera2", Host: "db3", Machine: "d1 (1 CPU, 3.5G)", CPU: "0.80 mean, 0.99 p95", Disks: "db3-data0 (data): 500 IOPS cap"}},
		Computer: map[string]string{"cpus": "2", "memory": "24 GiB", "kernel": "6.18"},
		Histograms: []Histogram{{Step: "oltp", Threads: 32, Variants: map[string][]sysbench.Bucket{
			"async": {{Value: 1.2, Count: 10}, {Value: 2.5, Count: 5}}, "galera2": {{Value: 101, Count: 3}, {Value: 210, Count: 1}}}}}}
	b, err := HTML(&results.Run{ID: "20261123-000000-abcd"}, res, ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Not established: 4 of the document&#39;s 5 claims", "<svg", "published 108 ms", "logarithmic axis", "within noise", "✔", "⊘ not checkable", "not checkable here: the ratio is mostly the round trip", "? inconclusive",
		"“PXC 1-colo beat the control.", "&#39;Sysbench 32-client test&#39;, first observation", "measured: Galera, one site: the lab&#39;s hosts used 1.9",
		"<h2>Deviations from the document's protocol</h2>", "Deviations from the document (8, 0 recorded by the run)", "<b>innodb_support_xa</b>: the document off on the Galera nodes",
		"<td>galera.wsrep_on</td><td>OFF</td><td></td><td>ON</td>", "same versions", "innodb_flush_log_at_trx_commit: &#34;2&#34;", "<td>wan2-semisync</td>",
		"Hosts, as measured", "<td>Galera, two sites</td><td>db3</td><td>d1 (1 CPU, 3.5G)</td>", "all ran on one computer: 2 CPUs",
		"Latency distribution, step oltp with 32 clients", "<path", "async (control) (15 transactions)", "~1 RTT (100 ms) (inferred), not printed"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	// an inferred figure is never drawn as published
	if strings.Contains(string(b), "<title>published ~1 RTT") || strings.Contains(string(b), "published ~10 TPS") {
		t.Error("an inferred figure drawn as published")
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
	if len(checks) != 1 || checks[0].Verdict != NotReproduced || checks[0].Median < 1.0 || checks[0].Median > 1.02 || checks[0].Published != "2.0 s (NTFS 64K, 16 disks) against 2.5 s (NTFS 4K, 16 disks)" {
		t.Errorf("64K against 4K: %+v", checks)
	}
	f := findingOf(s, "quick", 3, cells, checks, false)
	for _, want := range []string{"Seconds of fio's file1g test", "XFS, 64K blocks 4.65 s", "published 2.0 s (NTFS 64K, 16 disks)",
		"Not reproduced: 0 of the document's 1 claims checked hold; 1 not reproduced.\n",
		"\n✘ not reproduced: seconds: XFS, 64K blocks 1.01× XFS, 4K blocks (0.974–1.05); claim at most 0.900×; published 2.0 s (NTFS 64K, 16 disks) against 2.5 s (NTFS 4K, 16 disks): \"The average time it took",
		"— what differs: NTFS clusters against XFS blocks", "Deviations from the document (5, 0 recorded by the run): file system (XFS on Linux)",
		"XFS, 4K blocks 4.60 s (range of 3 (a 75 % interval) 4.50–4.70)"} {
		if !strings.Contains(f, want) {
			t.Errorf("finding lacks %q:\n%s", want, f)
		}
	}
}

// TestInterruptedStudyCounts: a study stopped before some checks were
// measured counts them as not measured, never as not reproduced.
func TestInterruptedStudyCounts(t *testing.T) {
	s, _ := Embedded("seed000-bufferpool")
	_, checks := Summarize(s, s.Scales.Quick, []string{"pool128m", "pool2g"}, []Sample{{Round: 1, Variant: "pool128m", Step: "oltp", Metric: "tps@64", Value: 600}})
	if len(checks) != 1 || checks[0].Verdict != NotMeasured || checks[0].Outcome() != "not measured" {
		t.Fatalf("checks %+v", checks)
	}
	f := findingOf(s, "quick", 0, nil, checks, true)
	if !strings.HasPrefix(f, "Not established: 0 of the document's 1 claims checked hold; 1 not measured (interrupted: what was measured).") || strings.Contains(f, "not reproduced") ||
		!strings.Contains(f, "– not measured: buffer pool 2G oltp: \"The more memory that can be allocated to…\" — the study stopped before it was measured") {
		t.Errorf("finding of an interrupted study:\n%s", f)
	}
	// one round: no interval, so inconclusive whatever the figures
	_, checks = Summarize(s, s.Scales.Quick, []string{"pool128m", "pool2g"}, []Sample{{Round: 1, Variant: "pool128m", Step: "oltp", Metric: "tps@64", Value: 600},
		{Round: 1, Variant: "pool2g", Step: "oltp", Metric: "tps@64", Value: 900}})
	if checks[0].Verdict != Inconclusive || !strings.Contains(findingOf(s, "quick", 1, nil, checks, false), "one round gives no interval") {
		t.Errorf("one round: %+v", checks)
	}
}

func TestSlapFinding(t *testing.T) {
	s, err := Embedded("seed001-slap")
	if err != nil {
		t.Fatal(err)
	}
	var samples []Sample
	for r := 1; r <= 3; r++ {
		for _, c := range []int{1, 10} {
			f := float64(r) / 100
			samples = append(samples,
				Sample{Round: r, Variant: "osdisk", Step: "read", Metric: fmt.Sprintf("avg_s@%d", c), Value: 0.4*float64(c) + f},
				Sample{Round: r, Variant: "stripe4", Step: "read", Metric: fmt.Sprintf("avg_s@%d", c), Value: 0.2*float64(c) + f},
				Sample{Round: r, Variant: "osdisk", Step: "write", Metric: fmt.Sprintf("avg_s@%d", c), Value: 14 + f},
				Sample{Round: r, Variant: "stripe4", Step: "write", Metric: fmt.Sprintf("avg_s@%d", c), Value: 12 + f})
		}
	}
	cells, checks := Summarize(s, s.Scales.Quick, []string{"osdisk", "stripe4"}, samples)
	if len(checks) != 1 || checks[0].Verdict != Reproduced || checks[0].Median < 1.9 {
		t.Errorf("the stripe reads twice as fast: %+v", checks)
	}
	f := findingOf(s, "quick", 3, cells, checks, false)
	for _, want := range []string{"Seconds for 1 mariadb-slap client to run the query over the generated employees dataset: OS disk (ext4, host-cached) 0.420 s",
		"Seconds for 10 mariadb-slap clients to run its generated write load", "Reproduced: all 1 of the document's claims checked hold"} {
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
	for _, want := range []string{"<figcaption>Seconds for mariadb-slap&#39;s clients to run the query over the generated employees dataset</figcaption>", "<path", "a point: the median of the rounds"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(string(b), "<figcaption>Seconds for 10 mariadb-slap clients") {
		t.Error("a bar chart per client count beside the chart across them")
	}
}

// TestVariantsLeftOut (the review's M10): a check whose variant, or the
// one it is compared with, --variants left out is not run, says so, and
// does not count against the study's verdict.
func TestVariantsLeftOut(t *testing.T) {
	s, err := Embedded("seed000-durability")
	if err != nil {
		t.Fatal(err)
	}
	samples := []Sample{{Round: 1, Variant: "stock", Step: "oltp", Metric: "tps@64", Value: 600}}
	_, checks := Summarize(s, s.Scales.Quick, []string{"stock"}, samples)
	if len(checks) != 1 || checks[0].Verdict != NotRun || fmt.Sprint(checks[0].LeftOut) != "[tuned]" {
		t.Fatalf("checks: %+v", checks)
	}
	if a := Answer(checks); a != "No claim checked: --variants left out the variants of all 1" {
		t.Errorf("answer: %s", a)
	}
	if f := findingOf(s, "quick", 1, nil, checks, false); !strings.Contains(f, "not run: \"Apply optimizations for PXC configuration where appropriate…\" — --variants left out tuned") || strings.Contains(f, "a step failed") {
		t.Errorf("finding: %s", f)
	}
	if err := Verdict(&Result{Study: s, Checks: checks}, "r"); err != nil {
		t.Errorf("a check not run is no claim not reproduced: %v", err)
	}
}

// findingOf is the finding of a run of s with these figures (nothing
// recorded: the study file's deviations).
func findingOf(s *Study, scale string, rounds int, cells []Cell, checks []Check, interrupted bool) string {
	return Finding(&Result{Study: s, Scale: scale, Rounds: rounds, Cells: cells, Checks: checks, Interrupted: interrupted})
}
