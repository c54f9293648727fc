package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStudy: a short study of two variants from a file runs end to end
// (both labs up, rounds interleaved, a summary with spreads, deltas and the
// reference beside them, a report), leaves no lab behind, and bad input is
// refused before anything is made.
func TestStudy(t *testing.T) {
	t.Parallel() // no timing bound a test beside it could break
	e := newEnv(t)
	file := e.writeSpec("short.yaml", `name: short
title: Galera against async, briefly
source: a test
variants:
  - {name: async, preset: async, baseline: true}
  - {name: galera, preset: galera3}
steps:
  - {name: commit, kind: commit-latency}
  - {name: oltp, kind: sysbench, workload: oltp_write_only}
scales:
  quick: {runs: 2, count: 20, threads: [2], time: 3, warmup: 1, tables: 1, table_size: 1000}
  full: {runs: 3, count: 100, threads: [8], time: 30, warmup: 5, tables: 4, table_size: 10000}
reference:
  - {step: commit, variant: galera, metric: avg_ms, value: 2, text: "2 ms", source: "a table"}
expect:
  - {step: commit, variant: galera, metric: avg_ms, max: 1000, why: "a local commit (the bound wide: two rounds on a busy computer give a wide interval)", claim: "a commit takes less than a second", source: "a section"}
`)
	bad := e.run("study", "run", "--file", file, "--scale", "huge", "--variants", "nope")
	if bad.code != 2 || !strings.Contains(bad.stderr, `--scale: expected quick or full, got "huge"`) || !strings.Contains(bad.stderr, `--variants: unknown variant "nope"`) {
		t.Errorf("bad study input: exit %d\n%s", bad.code, bad.stderr)
	}
	if r := e.run("study", "run", "--file", file, "--variants", ""); r.code != 2 || !strings.Contains(r.stderr, "--variants: empty") {
		t.Errorf("--variants naming none: exit %d\n%s", r.code, r.stderr)
	}
	// the labs review's finding 5: a full scale that cannot fit this
	// computer is refused with its estimate before any lab is made
	// computer is refused with its estimate before any lab is made (here
	// with --max-memory below its biggest lab; labs that fit one group at
	// a time take turns, below)
	if r := e.run("study", "run", "seed002-wan", "--scale", "full", "--max-memory", "1G"); r.code != 2 || !strings.Contains(r.stderr, "would need about") ||
		!strings.Contains(r.stderr, "20 tables of 1,000,000 rows") || !strings.Contains(r.stderr, "the lab of galera2 alone would need about 7.5G of memory") {
		t.Errorf("seed002-wan at full scale: exit %d\n%s", r.code, r.stderr)
	}
	// --dry-run: the same refusal, or what the labs would need and the
	// least time, with nothing made
	if r := e.run("study", "run", "seed002-wan", "--scale", "full", "--max-memory", "1G", "--dry-run"); r.code != 2 || !strings.Contains(r.stderr, "would need about") {
		t.Errorf("seed002-wan at full scale, dry run: exit %d\n%s", r.code, r.stderr)
	}
	if r := e.run("study", "run", "seed002-wan", "--scale", "full", "--max-memory", "9G", "--dry-run"); r.code != 0 || !strings.Contains(r.stdout, "does not fit this computer at once") ||
		!strings.Contains(r.stdout, "groups, one after another") {
		t.Errorf("seed002-wan at full scale in groups, dry run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := e.run("study", "run", "seed000-binlog", "--scale", "full", "--dry-run"); r.code != 0 ||
		!strings.Contains(r.stdout, "study seed000-binlog at full scale fits this computer: 2 labs at once, 6 nodes") || !strings.Contains(r.stdout, "at least 1h10m0s") {
		t.Errorf("seed000-binlog at full scale, dry run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if labs, _ := filepath.Glob(filepath.Join(e.home, "labs", "*")); len(labs) > 0 {
		t.Errorf("refused input left labs: %v", labs)
	}

	// a running study holds its labs: another command does not change or
	// remove them under it (exit 3, naming the study)
	c := e.cmd("study", "run", "--file", file, "-o", "json")
	stdout, buf := &syncBuffer{}, &syncBuffer{}
	c.Stdout, c.Stderr = stdout, buf
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL); _ = c.Wait() })
	lab := study0Lab(t, e) // -o json: no progress to wait for
	for _, cmd := range [][]string{{"restart", "db1"}, {"down"}} {
		if r := e.run(append(cmd, "--name", lab)...); r.code != 3 || !strings.Contains(r.stderr, "hadrill study run") {
			t.Errorf("%v of a running study's lab %s: exit %d\n%s", cmd, lab, r.code, r.stderr)
		}
	}
	if code := exitOf(c); code != 0 {
		t.Fatalf("study: exit %d\n%s", code, buf.String())
	}
	r := result{stdout: stdout.String()}
	var out struct {
		RunID  string `json:"run_id"`
		Result struct {
			Rounds  int      `json:"rounds"`
			Samples []sample `json:"samples"`
			Cells   []struct {
				Step, Metric, Variant string
				N                     int       `json:"n"`
				Median                float64   `json:"median"`
				Delta                 *struct{} `json:"delta"`
				Published             *struct{} `json:"published"`
			} `json:"cells"`
			Checks []struct {
				Claim   string `json:"claim"`
				Source  string `json:"source"`
				Verdict string `json:"verdict"`
				Ours    struct {
					Value, Lo, Hi float64
				} `json:"ours"`
			} `json:"checks"`
			Finding    string `json:"finding"`
			Deviations []struct {
				What, Document, Here string
				Recorded             bool
			} `json:"deviations"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	res := out.Result
	// the run records what it ran against the document's (this file states none)
	recorded := map[string]string{}
	for _, d := range res.Deviations {
		if d.Recorded && strings.Contains(d.Document, "no document: block") {
			recorded[d.What] = d.Here
		}
	}
	if !strings.HasPrefix(recorded["server"], "MariaDB 10.11.") || !strings.HasPrefix(recorded["galera"], "Galera 4 (provider 26.4.") ||
		!strings.HasPrefix(recorded["rounds"], "2 round(s)") {
		t.Errorf("recorded deviations: %+v", res.Deviations)
	}
	if res.Rounds != 2 || len(res.Cells) != 14 || len(res.Checks) != 1 || res.Checks[0].Verdict != "reproduced" || res.Checks[0].Claim != "a commit takes less than a second" ||
		res.Checks[0].Ours.Value <= 0 { // its interval within the claim's bound: the verdict says it (two rounds beside other tests are wide)
		t.Errorf("study result: %d rounds, %d cells, checks %+v\n%s", res.Rounds, len(res.Cells), res.Checks, r.stdout)
	}
	// interleaved: round 1 starts with async, round 2 with galera
	if firsts := roundFirsts(res.Samples); firsts != "async,galera" {
		t.Errorf("rounds started with %v, want async then galera", firsts)
	}
	for _, c := range res.Cells {
		if c.N != 2 || c.Median <= 0 || (c.Variant == "galera") != (c.Delta != nil) {
			t.Errorf("cell %+v", c)
		}
	}
	if !strings.Contains(res.Finding, "Mean time of an autocommit INSERT") || !strings.Contains(res.Finding, "published 2 ms") ||
		!strings.HasPrefix(res.Finding, "Reproduced: all 1 of the document's claims checked hold.") {
		t.Errorf("finding: %s", res.Finding)
	}
	html := filepath.Join(e.home, "study.html")
	e.ok("study", "report", out.RunID, "-o", html)
	if b, err := os.ReadFile(html); err != nil || !strings.Contains(string(b), res.Finding[:30]) || !strings.Contains(string(b), "<svg") {
		t.Errorf("study report: %v", err)
	}
	// as a browser shows it: headless Chromium's DOM holds the finding, the
	// spread and the reference figure, and a screenshot is made
	browser := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-breakpad", "--no-first-run", "--user-data-dir=" + filepath.Join(e.home, "chromium")}
	chromium := func(args ...string) *exec.Cmd {
		c := exec.Command("chromium", append(browser, args...)...)
		c.Env = append(os.Environ(), "HOME="+e.home) // its crash reports stay in the test's home
		return c
	}
	dom, err := chromium("--dump-dom", "file://"+html).Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	for _, want := range []string{"Mean time of an autocommit INSERT: async", "range of 2 (a 50 % interval)", "published 2 ms", "✔ reproduced", "“a commit takes less than a second”", "<svg"} {
		if !strings.Contains(string(dom), want) {
			t.Errorf("the report in Chromium lacks %q", want)
		}
	}
	// one report design with the run report: the charts drawn by the same
	// engine, nothing wider than a 1280 px window
	if dom, sideways := e.inBrowser(html); sideways || !strings.Contains(dom, "<figcaption>Mean time of an autocommit INSERT") {
		t.Errorf("the study report at 1280 px: scrolls sideways %v, figure captioned %v", sideways, strings.Contains(dom, "<figcaption>Mean time"))
	}
	png := filepath.Join(e.home, "study.png")
	if out, err := chromium("--screenshot="+png, "--window-size=1100,1400", "file://"+html).CombinedOutput(); err != nil {
		t.Errorf("chromium screenshot: %v\n%s", err, out)
	} else if st, err := os.Stat(png); err != nil || st.Size() < 20000 {
		t.Errorf("the screenshot is missing or blank: %v", err)
	}
	if labs, _ := filepath.Glob(filepath.Join(e.home, "labs", "*")); len(labs) > 0 {
		t.Errorf("the study left labs: %v", labs)
	}
	studyInGroups(t, e)
	studyResumed(t, e)
	e.assertNoLeftovers()
}

// studyResumed: a study interrupted (SIGINT) in its second round keeps
// its first; --resume goes on from it in labs made anew, keeps that round
// (its figures' runs the same), runs the rest in the same interleaved
// order, and records the resumption as a deviation; a run that ran to its
// end, or of another study, is refused.
func studyResumed(t *testing.T, e *env) {
	file := commitStudy(e, "resume", "Galera against async, stopped and resumed", 3)
	c, buf := e.start("study", "run", "--file", file)
	waitPrinted(t, buf, "round 2/3", 3*time.Minute)
	_ = c.Process.Signal(syscall.SIGINT)
	if code := exitOf(c); code != 130 || !strings.Contains(buf.String(), "interrupted: the partial results are kept in run ") {
		t.Fatalf("a study interrupted: exit %d\n%s", code, buf.String())
	}
	said := regexp.MustCompile(`kept in run ([0-9a-z-]+); go on from them with .hadrill study run --resume`).FindStringSubmatch(buf.String())
	if said == nil {
		t.Fatalf("the interrupted study does not say how to go on:\n%s", buf.String())
	}
	first := said[1]
	var stopped struct {
		Result struct {
			Samples []struct {
				sample
				RunID string `json:"run_id"`
			} `json:"samples"`
		} `json:"results"`
	}
	if b, err := os.ReadFile(filepath.Join(e.home, "runs", first, "run.json")); err != nil || json.Unmarshal(b, &stopped) != nil || len(stopped.Result.Samples) == 0 {
		t.Errorf("the stopped run %s: %v, %d samples", first, err, len(stopped.Result.Samples))
	}
	r := e.run("study", "run", "--file", file, "--resume", first, "-o", "json")
	if r.code != 0 && r.code != 4 {
		t.Fatalf("study --resume %s: exit %d\n%s", first, r.code, r.stderr)
	}
	var out struct {
		RunID  string `json:"run_id"`
		Result struct {
			Rounds  int `json:"rounds"`
			Samples []struct {
				sample
				RunID string `json:"run_id"`
			} `json:"samples"`
			Resumed *struct {
				From   string         `json:"from"`
				Rounds map[string]int `json:"rounds"`
				Why    string         `json:"why"`
			} `json:"resumed"`
			Deviations []struct{ What, Here string } `json:"deviations"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	res := out.Result
	var rounds []string // each round's variants, in the order measured (a step gives several figures)
	for _, x := range res.Samples {
		if r := fmt.Sprintf("%d %s", x.Round, x.Variant); len(rounds) == 0 || rounds[len(rounds)-1] != r {
			rounds = append(rounds, r)
		}
	}
	if res.Rounds != 3 || res.Resumed == nil || res.Resumed.From != first || res.Resumed.Rounds["async"] != 1 || res.Resumed.Rounds["galera"] != 1 ||
		res.Resumed.Why != "interrupted" || strings.Join(rounds, ",") != "1 async,1 galera,2 galera,2 async,3 async,3 galera" {
		t.Errorf("resumed: %d rounds, resumed %+v, samples %v", res.Rounds, res.Resumed, rounds)
	}
	if !slices.ContainsFunc(res.Deviations, func(d struct{ What, Here string }) bool {
		return d.What == "resumed" && strings.Contains(d.Here, "rounds kept from run "+first+" (interrupted; rounds kept: async 1, galera 1)")
	}) {
		t.Errorf("no deviation for the resumption: %+v", res.Deviations)
	}
	if len(stopped.Result.Samples) > 0 && len(res.Samples) > 0 && res.Samples[0].RunID != stopped.Result.Samples[0].RunID {
		t.Errorf("round 1's first figure: run %s, in the stopped run %s", res.Samples[0].RunID, stopped.Result.Samples[0].RunID)
	}
	if r := e.run("study", "run", "--file", file, "--resume", out.RunID); r.code != 2 || !strings.Contains(r.stderr, "--resume: run "+out.RunID+" ran to its end") {
		t.Errorf("--resume of a run that ran to its end: exit %d\n%s", r.code, r.stderr)
	}
	if r := e.run("study", "run", "seed002-receipt", "--resume", first); r.code != 2 || !strings.Contains(r.stderr, "is study resume's, not seed002-receipt's") {
		t.Errorf("--resume of another study's run: exit %d\n%s", r.code, r.stderr)
	}
	if labs, _ := filepath.Glob(filepath.Join(e.home, "labs", "*")); len(labs) > 0 {
		t.Errorf("the resumed study left labs: %v", labs)
	}
}

// studyInGroups: labs that do not fit at once (here: --max-memory below
// both labs, above each) take turns, one group after another, each group's
// rounds run while its labs are up; the finding names the groups.
func studyInGroups(t *testing.T, e *env) {
	file := commitStudy(e, "groups", "Galera against async, one lab at a time", 2)
	if r := e.run("study", "run", "--file", file, "--max-memory", "800M", "--keep"); r.code != 2 || !strings.Contains(r.stderr, "--keep: at quick scale study groups's labs take turns in 2 groups") {
		t.Errorf("--keep with groups: exit %d\n%s", r.code, r.stderr)
	}
	r := e.run("study", "run", "--file", file, "--max-memory", "800M", "-o", "json")
	if r.code != 0 && r.code != 4 {
		t.Fatalf("study in groups: exit %d\n%s", r.code, r.stderr)
	}
	var out struct {
		Result struct {
			Rounds  int        `json:"rounds"`
			Groups  [][]string `json:"groups"`
			Samples []sample   `json:"samples"`
			Finding string     `json:"finding"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	res := out.Result
	var order []string // the variant of each sample, in the order measured
	for _, s := range res.Samples {
		if len(order) == 0 || order[len(order)-1] != s.Variant {
			order = append(order, s.Variant)
		}
	}
	if res.Rounds != 2 || len(res.Groups) != 2 || strings.Join(order, ",") != "async,galera" ||
		!strings.Contains(res.Finding, "the labs in 2 groups, one after another") || !strings.Contains(res.Finding, "compares rounds run apart") {
		t.Errorf("in groups: %d rounds, groups %v, measured %v\n%s", res.Rounds, res.Groups, order, res.Finding)
	}
	if labs, _ := filepath.Glob(filepath.Join(e.home, "labs", "*")); len(labs) > 0 {
		t.Errorf("the study in groups left labs: %v", labs)
	}
}

// study0Lab is the one lab of the env's home that is up (a study's).
func study0Lab(t *testing.T, e *env) string {
	t.Helper()
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		dirs, _ := os.ReadDir(filepath.Join(e.home, "labs"))
		for _, d := range dirs {
			if d.IsDir() {
				return d.Name()
			}
		}
	}
	t.Fatal("no lab of the study")
	return ""
}

// sample is one measurement of a study's run: its round and variant.
type sample struct {
	Round   int    `json:"round"`
	Variant string `json:"variant"`
}

// roundFirsts names the variant each round started with, in order.
func roundFirsts(samples []sample) string {
	var firsts []string
	for _, s := range samples {
		if len(firsts) < s.Round {
			firsts = append(firsts, s.Variant)
		}
	}
	return strings.Join(firsts, ",")
}

// commitStudy writes a study file comparing Galera's commit latency with
// async's over runs rounds (the claim: Galera's takes longer).
func commitStudy(e *env, name, title string, runs int) string {
	return e.writeSpec(name+".yaml", fmt.Sprintf(`name: %s
title: %s
source: a test
variants:
  - {name: async, preset: async, baseline: true}
  - {name: galera, preset: galera3}
steps:
  - {name: commit, kind: commit-latency}
scales:
  quick: {runs: %d, count: 10}
  full: {runs: %d, count: 10}
expect:
  - {step: commit, variant: galera, than: async, metric: avg_ms, min: 1.0001, max: 1000, why: "a certification round", claim: "Galera's commit takes longer", source: "a section"}
`, name, title, runs, runs))
}
