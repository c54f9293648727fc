package study

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/golden"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/stats"
)

func f(v float64) *float64 { return &v }

// campaignResults are three studies' runs: one with a claim of each
// verdict that counts and one that counts for nothing, one stopped before
// its end, one of figures only.
func campaignResults() []CampaignRun {
	two := []Variant{{Name: "a", Label: "variant A"}, {Name: "b", Label: "variant B", Baseline: true}}
	est := func(v, lo, hi float64) stats.Estimate {
		return stats.Estimate{Value: v, Lo: lo, Hi: hi, Level: 0.92, Known: true}
	}
	claim := func(verdict string, e stats.Estimate, min float64, needs int) Check {
		return Check{Expect: Expect{Step: "oltp", Variant: "a", Than: "b", Metric: "tps@64", Min: f(min), Claim: "A is faster than B by a margin."},
			Ours: e, Verdict: verdict, Rounds: 9, Needs: needs, Look: LookFinal}
	}
	return []CampaignRun{
		{ID: "20261202-010000-aaaa", Res: &Result{Study: &Study{Name: "zeta", Variants: two}, Scale: "quick", Rounds: 9, Checks: []Check{
			claim(Reproduced, est(1.3, 1.2, 1.4), 1.05, 0),
			claim(NotReproduced, est(1.0, 0.96, 1.04), 1.05, 0),
			claim(Inconclusive, est(1.06, 0.94, 1.19), 1.05, 112),
			func() Check {
				c := claim(NotCheckable, est(1.8, 1.5, 2.3), 1.05, 0)
				c.NotCheckable = "the nodes are CPU-bound here"
				return c
			}(),
		}}},
		{ID: "20261202-020000-bbbb", Res: &Result{Study: &Study{Name: "alpha", Variants: two}, Scale: "quick", Interrupted: true, Checks: []Check{
			{Expect: Expect{Step: "oltp", Variant: "a", Metric: "avg_ms", Max: f(130), Claim: "Commits take one round trip."}, Verdict: NotMeasured},
		}}},
		{ID: "20261202-030000-cccc", Res: &Result{Study: &Study{Name: "mid", Variants: two}, Scale: "quick", Rounds: 3}},
	}
}

// TestCampaign: the claims that count are counted by verdict, the share
// still inconclusive is of them, those that count for nothing and the
// studies of figures only or stopped are named; the text is the golden
// file's (studies in name order, one line a claim).
func TestCampaign(t *testing.T) {
	c := NewCampaign(campaignResults())
	if c.Studies != 3 || c.Claims != 4 || c.Verdicts[Reproduced] != 1 || c.Verdicts[NotReproduced] != 1 || c.Verdicts[Inconclusive] != 1 ||
		c.Verdicts[NotMeasured] != 1 || c.Verdicts[NotCheckable] != 1 || c.InconclusiveShare != 0.25 {
		t.Errorf("counts: %+v", c)
	}
	if len(c.Needs) != 1 || c.Needs[0] != 112 || c.Had[0] != 9 {
		t.Errorf("rounds the inconclusive claim would need: %v, had %v", c.Needs, c.Had)
	}
	if strings.Join(c.Stopped, ",") != "alpha" || strings.Join(c.Figures, ",") != "mid" || c.Runs[0].Study != "alpha" {
		t.Errorf("stopped %v, figures only %v, first %s", c.Stopped, c.Figures, c.Runs[0].Study)
	}
	for _, want := range []string{"3 studies at quick scale (1 stopped before their end: alpha)", "of their 4 claims that count, 1 reproduced, 1 not reproduced, 1 inconclusive, 1 not measured; 25 % still inconclusive", "1 more claim counts for nothing (1 not checkable here)", "1 study of figures only (no claim)"} {
		if !strings.Contains(c.Headline, want) {
			t.Errorf("headline lacks %q: %s", want, c.Headline)
		}
	}
	golden.Check(t, "campaign", []byte(c.Text()))
	b, err := json.Marshal(c)
	if err != nil || !strings.Contains(string(b), `"inconclusive_share":0.25`) {
		t.Errorf("json: %v %s", err, b)
	}
	if none := NewCampaign(nil); none.Claims != 0 || none.InconclusiveShare != 0 || !strings.Contains(none.Headline, "no claim that counts") {
		t.Errorf("no runs: %+v", none)
	}
}

// TestCampaignRuns: named runs are loaded, every problem with them said
// at once (bad input); with none named, each study's newest run at the
// scale that ran to its end is taken, else its newest.
func TestCampaignRuns(t *testing.T) {
	home := t.TempDir()
	save := func(id, name, scale string, interrupted bool) {
		t.Helper()
		res := Result{Study: &Study{Name: name}, Scale: scale, Interrupted: interrupted}
		b, _ := json.Marshal(res)
		started, _ := time.Parse("20060102-150405", id[:15])
		if err := results.Save(home, &results.Run{ID: id, Kind: Kind, Lab: name, Started: started, Results: b, Interrupted: interrupted}); err != nil {
			t.Fatal(err)
		}
	}
	save("20261202-010000-aaaa", "one", "quick", false)
	save("20261202-020000-bbbb", "one", "quick", true) // later, stopped: the complete one is taken
	save("20261202-030000-cccc", "two", "quick", false)
	save("20261202-040000-dddd", "two", "quick", false)  // later, complete: taken
	save("20261202-050000-eeee", "three", "quick", true) // only stopped: taken
	save("20261202-060000-ffff", "one", "full", false)   // another scale
	if err := results.Save(home, &results.Run{ID: "20261202-070000-9999", Kind: "sysbench", Lab: "x", Started: time.Now()}); err != nil {
		t.Fatal(err)
	}
	runs, err := CampaignRuns(home, nil, "quick")
	got := map[string]string{}
	for _, r := range runs {
		got[r.Res.Study.Name] = r.ID
	}
	if err != nil || len(got) != 3 || got["one"] != "20261202-010000-aaaa" || got["two"] != "20261202-040000-dddd" || got["three"] != "20261202-050000-eeee" {
		t.Errorf("newest runs: %v %v", got, err)
	}
	if runs, err := CampaignRuns(home, nil, "full"); err != nil || len(runs) != 1 || runs[0].ID != "20261202-060000-ffff" {
		t.Errorf("full scale: %v %v", runs, err)
	}
	if _, err := CampaignRuns(t.TempDir(), nil, "quick"); !hderr.IsUser(err) || !strings.Contains(err.Error(), "no study run at quick scale") {
		t.Errorf("an empty store: %v", err)
	}
	_, err = CampaignRuns(home, []string{"20261202-010000-aaaa", "20261202-030000-cccc", "20261202-030000-cccc", "20261202-020000-bbbb", "20261202-070000-9999", "20261202-990000-0000", "nonsense"}, "")
	if !hderr.IsUser(err) {
		t.Fatalf("bad runs: %v", err)
	}
	for _, want := range []string{"20261202-030000-cccc: named twice", "20261202-020000-bbbb: a second run of study one (20261202-010000-aaaa is one)", "20261202-070000-9999 is a sysbench run", `no run "20261202-990000-0000"`, `no run "nonsense"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("bad runs: %q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "RUN: RUN:") {
		t.Errorf("a problem named twice: %q", err)
	}
	if runs, err := CampaignRuns(home, []string{"20261202-020000-bbbb", "20261202-030000-cccc"}, ""); err != nil || len(runs) != 2 {
		t.Errorf("named runs: %v %v", runs, err)
	}
}

// TestRejudge: a run whose claim changed form since (jepsen-galera's lost
// updates, a mean then, a claim that they happen now) is judged by today's
// claim over its rounds; one whose study's steps or claims' figures
// changed, or that has no embedded study, keeps its own verdicts and says
// why.
func TestRejudge(t *testing.T) {
	now, err := Embedded("jepsen-galera")
	if err != nil {
		t.Fatal(err)
	}
	old := func(change func(*Study)) *Study {
		var s Study
		b, _ := json.Marshal(now)
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		change(&s)
		return &s
	}
	asMean := func(s *Study) {
		for i := range s.Expect {
			if s.Expect[i].Metric == "lost_updates" {
				s.Expect[i].Happens = false
			}
		}
	}
	r := claimOn(t, "jepsen-galera", "lost_updates")
	samples := r.rounds(1, 3, 4)
	run := func(s *Study) CampaignRun {
		_, checks := Summarize(s, s.Scales.Quick, variantNames(s), samples)
		return CampaignRun{ID: "20261202-010000-aaaa", Res: &Result{Study: s, Scale: "quick", Protocol: s.Scales.Quick, Variants: variantNames(s), Rounds: 3, Samples: samples, Checks: checks}}
	}
	lost := func(c CampaignRun) string {
		for _, ch := range c.Res.Checks {
			if ch.Metric == "lost_updates" {
				return ch.Verdict
			}
		}
		return "none"
	}
	before := run(old(asMean))
	if lost(before) != Inconclusive {
		t.Fatalf("as a mean, 1, 3 and 4 lost updates: %s, want inconclusive", lost(before))
	}
	home := t.TempDir()
	got := Rejudge(home, []CampaignRun{before})[0]
	if lost(got) != Reproduced || got.Judged != "judged by today's claims" || got.Res.Study == before.Res.Study || lost(before) != Inconclusive {
		t.Errorf("rejudged: %s (%s), the run's own left %s", lost(got), got.Judged, lost(before))
	}
	for _, c := range []struct {
		name   string
		change func(*Study)
		why    string
	}{
		{"steps changed", func(s *Study) { asMean(s); s.Steps = s.Steps[:len(s.Steps)-1] }, "its own verdicts: the study's steps changed since the run"},
		{"a claim of another figure", func(s *Study) { asMean(s); s.Expect[0].Metric = "something_else" }, "its own verdicts: the figures its claims are of changed"},
		{"no embedded study", func(s *Study) { asMean(s); s.Name = "my-own-study" }, "its own verdicts: no embedded study of its name"},
	} {
		got := Rejudge(home, []CampaignRun{run(old(c.change))})[0]
		if !strings.HasPrefix(got.Judged, c.why) || lost(got) == Reproduced {
			t.Errorf("%s: %q, lost updates %s", c.name, got.Judged, lost(got))
		}
	}
}

// TestTwinClaimsNameTheirSteps: two claims of one figure in different
// steps (seed000-failover's share of kills and of cut-offs that lost a
// write) are told apart by their steps; a claim alone of its figure is
// not given one.
func TestTwinClaimsNameTheirSteps(t *testing.T) {
	v := []Variant{{Name: "cloud3", Label: "cloud3"}}
	share := func(step string) Check {
		return Check{Expect: Expect{Step: step, Variant: "cloud3", Metric: "lost_any", Max: f(0.5), Claim: "You can lose any node."},
			Ours: stats.Estimate{Value: 0, Lo: 0, Hi: 0.475, Level: 0.92, Known: true}, Verdict: Reproduced}
	}
	gap := Check{Expect: Expect{Step: "kill", Variant: "cloud3", Metric: "gap_s", Max: f(10), Claim: "Fast failover."},
		Ours: stats.Estimate{Value: 6.46, Lo: 6.13, Hi: 6.79, Level: 0.98, Known: true}, Verdict: Reproduced}
	text := NewCampaign([]CampaignRun{{ID: "r", Res: &Result{Study: &Study{Name: "s", Variants: v}, Scale: "quick", Checks: []Check{gap, share("kill"), share("cutoff")}}}}).Text()
	if !strings.Contains(text, "reproduced: kill, lost_any: cloud3") || !strings.Contains(text, "reproduced: cutoff, lost_any: cloud3") || strings.Contains(text, "kill, gap_s") {
		t.Errorf("twin claims:\n%s", text)
	}
}
