package study

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/hadrill/hadrill/internal/facts"
	"github.com/hadrill/hadrill/internal/stats"
)

var installedHere = facts.Installed{Server: "MariaDB 10.11.19", Galera: "26.4.23", Sysbench: "1.0.20", Fio: "3.33",
	OS: "Debian GNU/Linux 12 (bookworm)", Kernel: "6.18.44"}

func recordedOf(ds []Deviation) map[string]Deviation {
	out := map[string]Deviation{}
	for _, d := range ds {
		if !d.Recorded {
			panic("a recorded deviation not marked recorded: " + d.What)
		}
		out[d.What] = d
	}
	return out
}

// TestRecorded: a run lists every systemic difference between the
// document's set-up and its own, from the document block and what is
// installed, with no study file writing it by hand.
func TestRecorded(t *testing.T) {
	s, err := Embedded("seed000-binlog")
	if err != nil {
		t.Fatal(err)
	}
	got := recordedOf(Recorded(s, installedHere, s.Scales.Quick, 3, 1, false))
	want := map[string][2]string{
		"server":           {"Percona XtraDB Cluster 5.6", "MariaDB 10.11.19"},
		"galera":           {"3 (PXC 5.6 ships Galera 3) (inferred)", "Galera 4 (provider 26.4.23)"},
		"sysbench":         {"0.5 (its oltp.lua and --oltp-* options are sysbench 0.5's) (inferred)", "sysbench 1.0.20"},
		"operating system": {"CentOS 6.5", "Debian GNU/Linux 12 (bookworm), Linux 6.18.44"},
		"warm-up":          {"none stated", "5 s of the same load before every measured run, not recorded"},
		"rounds":           {"one run of each measurement (inferred)", "3 round(s) of every variant interleaved; a claim judged by the mean of its rounds with its interval, tables by the median"},
	}
	if len(got) != len(want) {
		t.Errorf("recorded %d deviations, want %d: %+v", len(got), len(want), got)
	}
	for what, w := range want {
		if d := got[what]; d.Document != w[0] || d.Here != w[1] {
			t.Errorf("%s: the document %q, here %q; want %q, %q", what, d.Document, d.Here, w[0], w[1])
		}
	}

	// a document that ran what runs here gives no deviation of it
	same := *s
	warm := 5
	same.Document = &Document{Server: "MariaDB 10.11", Galera: "Galera 4", Tools: map[string]string{"sysbench": "1.0.20"},
		OS: "Debian GNU/Linux 12 (bookworm)", WarmupS: &warm, Runs: 3, Summary: "mean"}
	if ds := Recorded(&same, installedHere, s.Scales.Quick, 3, 1, false); len(ds) != 0 {
		t.Errorf("the same set-up recorded %+v", ds)
	}
	// versions compare at a component's boundary
	same.Document.Tools = map[string]string{"sysbench": "1.0.2"}
	if d := recordedOf(Recorded(&same, installedHere, s.Scales.Quick, 3, 1, false)); d["sysbench"].Here != "sysbench 1.0.20" {
		t.Errorf("sysbench 1.0.2 against 1.0.20: %+v", d)
	}

	// no document block: each difference still listed, saying so
	none := *s
	none.Document = nil
	d := recordedOf(Recorded(&none, installedHere, s.Scales.Quick, 3, 1, false))
	for _, what := range []string{"server", "galera", "sysbench", "warm-up", "rounds"} {
		if !strings.Contains(d[what].Document, "no document: block") {
			t.Errorf("%s without a document block: %+v", what, d[what])
		}
	}
	// over SSH the versions are this computer's, and it says so
	if d := recordedOf(Recorded(s, installedHere, s.Scales.Quick, 3, 1, true)); !strings.Contains(d["server"].Here, "the inventory's hosts run their own") {
		t.Errorf("remote: %+v", d["server"])
	}

	// a disk-only study measures no server: no server or Galera deviation;
	// fio's is the tool's
	a, _ := Embedded("seed003-alloc")
	d = recordedOf(Recorded(a, installedHere, a.Scales.Quick, 5, 1, false))
	if _, ok := d["server"]; ok {
		t.Errorf("a disk study records the server: %+v", d)
	}
	if d["fio"].Here != "fio 3.33" || d["rounds"].Document != "300 runs, their mean" {
		t.Errorf("disk study: %+v", d)
	}
	// labs that took turns in groups: the rounds say so
	if d := recordedOf(Recorded(s, installedHere, s.Scales.Quick, 3, 2, false)); !strings.HasPrefix(d["rounds"].Here, "3 round(s) of every variant interleaved within each of 2 groups of labs run one after another;") {
		t.Errorf("rounds in groups: %q", d["rounds"].Here)
	}
}

// TestEveryStudyStatesItsDocument: every embedded study (and the services
// file) says what the document ran, and a run of each lists the server,
// its load tools and its rounds against it.
func TestEveryStudyStatesItsDocument(t *testing.T) {
	b, err := os.ReadFile("../../docs/studies/seed004-services.yaml")
	if err != nil {
		t.Fatal(err)
	}
	services, err := Load(b)
	if err != nil {
		t.Fatal(err)
	}
	all := []*Study{services}
	for _, name := range Names() {
		s, err := Embedded(name)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, s)
	}
	for _, s := range all {
		if s.Document == nil || s.Document.Server == "" {
			t.Errorf("%s: no document block", s.Name)
			continue
		}
		d := recordedOf(Recorded(s, installedHere, s.Scales.Quick, s.Scales.Quick.Runs, 1, false))
		if lab, _ := s.labs(); lab && d["server"].What == "" && !sameServer(s.Document.Server, installedHere.Server) {
			t.Errorf("%s: the server is not recorded", s.Name)
		}
		for _, tool := range s.tools() {
			if d[tool].What == "" && !sameVersion(s.Document.Tools[tool], toolVersion(installedHere, tool)) {
				t.Errorf("%s: %s is not recorded", s.Name, tool)
			}
		}
		if d["rounds"].What == "" {
			t.Errorf("%s: its rounds are not recorded", s.Name)
		}
		for _, dev := range s.Deviations {
			if _, ok := recordedWhat[strings.ToLower(dev.What)]; ok {
				t.Errorf("%s: deviation %q written by hand", s.Name, dev.What)
			}
		}
	}
}

func TestDocumentProblems(t *testing.T) {
	_, err := Load([]byte(`
name: bad-document
title: t
source: s
document: {tools: {fio: "3", sysbench: "0.5"}, summary: average, runs: -1, warmup_s: -5, inferred: [server, kernel]}
variants: [{name: a, preset: galera3}]
steps: [{name: oltp, kind: sysbench, workload: oltp_read_write}]
scales:
  quick: {runs: 2, threads: [1], time: 5, tables: 1, table_size: 100}
  full: {runs: 2, threads: [1], time: 5, tables: 1, table_size: 100}
deviations:
  - {what: Sysbench, document: "0.5", here: "1.0"}
  - {what: rounds, document: "1", here: "3"}
`))
	for _, want := range []string{
		`document.server: required`,
		`document.tools.fio: no step of the study runs it (its steps run: sysbench)`,
		`document.summary: expected single, mean, median, got "average"`,
		`document.runs: expected 0 (not stated) to 10000, got -1`,
		`document.warmup_s: expected 0 to 86400 seconds, got -5`,
		`document.inferred[1]: expected one of server, galera, os, warmup, runs or tools.NAME, got "kernel"`,
		`deviations[0].what: "Sysbench" is recorded by the run itself, against document.tools.sysbench`,
		`deviations[1].what: "rounds" is recorded by the run itself, against document.runs`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in: %v", want, err)
		}
	}
}

// TestOppositeIsNeverReproduced (a verdict must be able to say no): every
// check of every embedded study, fed an outcome against its claim — the
// other side of a ratio's 1, or a figure beyond its bound on the far side
// — is never reproduced; fed no effect (a ratio of 1), a claim of a
// difference is never reproduced either.
func TestOppositeIsNeverReproduced(t *testing.T) {
	for _, name := range Names() {
		s, _ := Embedded(name)
		for i, e := range s.Expect {
			var outcomes []float64 // the variant's figure, the other's being 100
			switch {
			case e.Than != "" && e.Min != nil && *e.Min >= 1:
				outcomes = []float64{100, 100 / *e.Min * 0.8}
			case e.Than != "" && e.Max != nil && *e.Max <= 1:
				outcomes = []float64{100, 100 / *e.Max * 1.25}
			case e.Than != "" && e.Min != nil && e.Max != nil: // a ratio in a band
				outcomes = []float64{100 * *e.Min * 0.5, 100 * *e.Max * 2}
			case e.Than != "" && e.Min != nil: // "no worse than": well below
				outcomes = []float64{100 * *e.Min * 0.7}
			case e.Than != "" && e.Max != nil: // "no more than": well above
				outcomes = []float64{100 * *e.Max * 1.4}
			case e.Than == "" && e.Min != nil:
				outcomes = []float64{*e.Min * 0.5}
			case e.Than == "" && e.Max != nil:
				outcomes = []float64{*e.Max*2 + 1}
			}
			if len(outcomes) == 0 {
				t.Errorf("%s expect[%d]: no opposite outcome to try (%+v)", name, i, e)
			}
			for _, v := range outcomes {
				var samples []Sample
				for r, f := range []float64{0.98, 1, 1.02} {
					samples = append(samples, Sample{Round: r + 1, Variant: e.Variant, Step: e.Step, Metric: e.Metric, Value: v * f})
					if IsRate(e.Metric) { // an hour of exposure a round
						samples = append(samples, Sample{Round: r + 1, Variant: e.Variant, Step: e.Step, Metric: Exposure, Value: 1})
					}
					if e.Than != "" {
						samples = append(samples, Sample{Round: r + 1, Variant: e.Than, Step: e.Step, Metric: e.Metric, Value: 100 * f})
					}
				}
				variants := []string{e.Variant}
				if e.Than != "" {
					variants = append(variants, e.Than)
				}
				sc := s.Scales.Quick
				if e.Scale == "full" {
					sc = s.Scales.Full
				}
				_, checks := Summarize(s, sc, variants, samples)
				for _, c := range checks {
					if c.Expect == e && c.Verdict == OtherScale {
						t.Errorf("%s expect[%d]: judged at the other scale", name, i)
					}
					if c.Expect.Claim == e.Claim && c.Metric == e.Metric && c.Variant == e.Variant && c.Than == e.Than && c.Verdict == Reproduced {
						t.Errorf("%s expect[%d] (%s %s against %s): %g gives reproduced (%+v)", name, i, e.Variant, e.Metric, e.Than, v, c.Ours)
					}
				}
			}
		}
	}
}

// TestNotMeasuredWithoutAFailure (the review's §8.1): a claim the run
// yielded no figure for, with no step failing, makes study run exit 1 as
// the README says of not_measured, not 4, and its line says why.
func TestNotMeasuredWithoutAFailure(t *testing.T) {
	s, _ := Embedded("seed000-bufferpool")
	_, checks := Summarize(s, s.Scales.Quick, []string{"pool128m", "pool2g"}, []Sample{{Round: 1, Variant: "pool128m", Step: "oltp", Metric: "tps@64", Value: 600}})
	res := &Result{Study: s, Scale: "quick", Rounds: 3, Checks: checks}
	err := Verdict(res, "RUN")
	var u *Unreproduced
	if err == nil || errors.As(err, &u) || !strings.Contains(err.Error(), "1 claim(s) not measured: the run yielded no figure for them though no step failed") {
		t.Errorf("verdict: %v", err)
	}
	if f := Finding(res); !strings.Contains(f, "— the run yielded no figure for it") {
		t.Errorf("finding: %s", f)
	}
}

// TestNotCheckable: a claim this computer cannot decide is measured and
// shown with its reason, counts for nothing in the verdict, and a
// two-look design sizes no rounds for it.
func TestNotCheckable(t *testing.T) {
	s, _ := Embedded("seed000-premium")
	var samples []Sample
	for r := 1; r <= 3; r++ {
		samples = append(samples,
			Sample{Round: r, Variant: "standard", Step: "iops", Metric: "iops", Value: 1600 + float64(r)},
			Sample{Round: r, Variant: "premium", Step: "iops", Metric: "iops", Value: 5000 + float64(r)},
			Sample{Round: r, Variant: "standard", Step: "oltp", Metric: "tps@16", Value: 100 + float64(r)},
			Sample{Round: r, Variant: "premium", Step: "oltp", Metric: "tps@16", Value: 150 + float64(r)})
	}
	variants := []string{"standard", "premium"}
	_, checks := Summarize(s, s.Scales.Quick, variants, samples)
	if checks[0].Verdict != NotCheckable || checks[0].Median < 3 || checks[1].Verdict != Reproduced {
		t.Fatalf("checks: %+v", checks)
	}
	if err := Verdict(&Result{Study: s, Checks: checks}, "r"); err != nil {
		t.Errorf("a claim not checkable counts for nothing: %v", err)
	}
	if a := Answer(checks); a != "Reproduced: all 1 of the document's claims checked hold; 1 more not checkable here, each saying why" {
		t.Errorf("answer: %s", a)
	}
	d := Plan(s, variants, samples, 3, 0, 0)
	if d.Needs[0].Rounds != 0 || d.Needs[0].Why != "not checkable here" {
		t.Errorf("design: %+v", d.Needs[0])
	}
	judged := d.Judge(s, checks, samples)
	if judged[0].Verdict != NotCheckable {
		t.Errorf("judged: %+v", judged[0])
	}
	_ = stats.Level
}

// TestOtherScale (a claim only full scale measures: document 003's 10,000
// rows): quick scale reports it measured at the other scale only, and it
// counts for nothing; full scale judges it; a check at a figure its named
// scale does not measure is refused.
func TestOtherScale(t *testing.T) {
	s, _ := Embedded("seed003-bulk")
	var samples []Sample
	for r := 1; r <= 3; r++ {
		for _, n := range []int{100, 1000, 10000} {
			v := float64(n) / 1000
			samples = append(samples, Sample{Round: r, Variant: "async", Step: "bulk", Metric: fmt.Sprintf("visible_s@%d", n), Value: v + float64(r)/100})
		}
	}
	variants := []string{"async", "galera"}
	_, quick := Summarize(s, s.Scales.Quick, variants, samples)
	var q, f Check
	for _, c := range quick {
		if c.Metric == "visible_s@10000" {
			q = c
		}
	}
	if q.Verdict != OtherScale {
		t.Fatalf("quick: %+v", q)
	}
	if err := Verdict(&Result{Study: s, Checks: []Check{q}}, "r"); err != nil {
		t.Errorf("a claim of the other scale counts for nothing: %v", err)
	}
	if line := claimLine(q, map[string]string{}, false, false); !strings.Contains(line, "measured at full scale only (visible_s@10000)") {
		t.Errorf("line: %s", line)
	}
	_, full := Summarize(s, s.Scales.Full, variants, samples)
	for _, c := range full {
		if c.Metric == "visible_s@10000" {
			f = c
		}
	}
	if f.Verdict != Reproduced {
		t.Errorf("full: %+v", f)
	}
	_, err := Load([]byte(`
name: bad-scale
title: t
source: s
document: {server: x}
variants: [{name: a, preset: galera3}]
steps: [{name: oltp, kind: sysbench, workload: oltp_read_write}]
scales:
  quick: {runs: 2, threads: [1], time: 5, tables: 1, table_size: 100}
  full: {runs: 2, threads: [2], time: 5, tables: 1, table_size: 100}
expect:
  - {step: oltp, variant: a, metric: tps@1, min: 1, scale: full, claim: c, source: s}
  - {step: oltp, variant: a, metric: tps@2, min: 1, scale: both, claim: c, source: s}
`))
	for _, want := range []string{`expect[0].metric: tps@1 is not measured at full scale, the one the check names`, `expect[1].scale: expected quick, full or nothing (both), got "both"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in %v", want, err)
		}
	}
}
