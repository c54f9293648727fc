package study

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/stats"
)

// rounds draws n rounds of a ratio claim's two variants: the other's
// figure around 100, the variant's around ratio×100, each with the
// relative spread cv, numbered from first.
func rounds(r *rand.Rand, e Expect, first, n int, ratio, cv float64) []Sample {
	var out []Sample
	for i := range n {
		out = append(out, Sample{Round: first + i, Variant: e.Variant, Step: e.Step, Metric: e.Metric, Value: ratio * 100 * (1 + cv*r.NormFloat64())},
			Sample{Round: first + i, Variant: e.Than, Step: e.Step, Metric: e.Metric, Value: 100 * (1 + cv*r.NormFloat64())})
	}
	return out
}

// design runs one two-look study of a claim: a pilot of 3 rounds, the
// rounds it plans (at most limit), the checks judged by the design.
func design(r *rand.Rand, s *Study, e Expect, ratio, cv float64, limit int) (Design, Check) {
	variants := []string{e.Variant, e.Than}
	samples := rounds(r, e, 1, 3, ratio, cv)
	d := Plan(s, variants, samples, 3, time.Minute, time.Duration(limit)*time.Minute)
	samples = append(samples, rounds(r, e, 4, d.Rounds-3, ratio, cv)...)
	var checks []Check
	if len(s.Expect) == 1 { // the check as Summarize makes it, without its cells (quicker)
		checks = []Check{{Expect: e, Verdict: Inconclusive}}
	} else {
		_, checks = Summarize(s, s.Scales.Quick, variants, samples)
	}
	checks = d.Judge(s, checks, samples)
	for _, c := range checks {
		if c.Variant == e.Variant && c.Than == e.Than && c.Metric == e.Metric && c.Step == e.Step {
			return d, c
		}
	}
	panic("no check")
}

// The pilot sizes the rounds by the claim's spread, the budget caps them,
// and a claim the pilot could not decide decides after them.
func TestPlan(t *testing.T) {
	s, _ := Embedded("seed000-bufferpool")
	e := s.Expect[0] // pool2g at least 1.05× pool128m
	variants := []string{"pool128m", "pool2g"}
	var pilot []Sample
	for i, v := range [][2]float64{{634, 672}, {535, 634}, {660, 711}} { // +12 %, the rounds overlapping: inconclusive at 3
		pilot = append(pilot, Sample{Round: i + 1, Variant: "pool128m", Step: e.Step, Metric: e.Metric, Value: v[0]},
			Sample{Round: i + 1, Variant: "pool2g", Step: e.Step, Metric: e.Metric, Value: v[1]})
	}
	d := Plan(s, variants, pilot, 3, 2*time.Minute, 0)
	n := d.Needs[0]
	if n.Scale != OnLogRatio || n.Rounds <= 3 || d.Rounds != n.Rounds || math.Abs(n.Delta-math.Log(1.05)) > 1e-12 {
		t.Errorf("unbudgeted plan: %+v", d)
	}
	capped := Plan(s, variants, pilot, 3, 2*time.Minute, 10*time.Minute)
	if capped.Affordable != 5 || capped.Rounds != 5 || capped.Needs[0].Rounds != n.Rounds {
		t.Errorf("10 minutes at 2 minutes a round: %+v", capped)
	}
	if !strings.Contains(capped.Says(), "the budget of 10m0s allows 5") {
		t.Errorf("%s", capped.Says())
	}
	left := Plan(s, []string{"pool2g"}, pilot, 3, time.Minute, 0)
	if left.Needs[0].Rounds != 0 || left.Needs[0].Why == "" || left.Rounds != 3 {
		t.Errorf("a claim whose variant was left out: %+v", left)
	}
	one := Plan(s, variants, pilot[:2], 3, time.Minute, 0)
	if one.Needs[0].Rounds != 0 || !strings.Contains(one.Needs[0].Why, "1 round") {
		t.Errorf("a pilot with one round of the claim: %+v", one.Needs[0])
	}

	r := rand.New(rand.NewPCG(1, 44))
	d, c := design(r, s, e, 1.12, 0.08, 1000)
	if c.Verdict != Reproduced || c.Rounds != d.Rounds || d.Rounds <= 3 {
		t.Errorf("+12 %% with 8 %% noise: %s after %d rounds (%+v), want reproduced", c.Verdict, c.Rounds, c.Ours)
	}
	d, c = design(r, s, e, 0.9, 0.08, 1000)
	if c.Verdict != NotReproduced {
		t.Errorf("-10 %% with 8 %% noise: %s after %d rounds (%+v), want not reproduced", c.Verdict, d.Rounds, c.Ours)
	}
	_, c = design(r, s, e, 1.06, 0.15, 4)
	if c.Verdict == Inconclusive && (c.Needs <= c.Rounds || c.Rounds != 4) {
		t.Errorf("an undecided claim says the rounds it needs: %+v", c)
	}
}

// At the study's level too, a claim whose true figure is on its bound is
// judged reproduced at most Alpha of the time after the rounds the pilot
// added, with or without a budget.
func TestDesignErrorRate(t *testing.T) {
	s, _ := Embedded("seed000-bufferpool")
	e := s.Expect[0]
	r := rand.New(rand.NewPCG(3, 9))
	const trials = 3000
	for _, limit := range []int{1000, 8} {
		inside := 0
		for range trials {
			if _, c := design(r, s, e, *e.Min, 0.06, limit); c.Verdict == Reproduced {
				inside++
			}
		}
		share := float64(inside) / trials
		t.Logf("at most %d rounds: %.2f %% reproduced on the bound", limit, 100*share)
		if share > stats.Alpha+3*math.Sqrt(stats.Alpha*(1-stats.Alpha)/trials) {
			t.Errorf("at most %d rounds: a ratio on its bound reproduced in %.1f %% of trials, want at most %.0f %%", limit, 100*share, 100*stats.Alpha)
		}
	}
}

// No embedded claim that excludes "no difference" is reproduced by a
// design fed no difference (both variants the same noisy figure) or the
// opposite of its claim.
func TestDesignNoiseIsNeverReproduced(t *testing.T) {
	for _, name := range Names() {
		s, _ := Embedded(name)
		for _, e := range s.Expect {
			if e.Than == "" {
				continue
			}
			excludes := (e.Min != nil && *e.Min >= 1) || (e.Max != nil && *e.Max <= 1)
			if !excludes {
				continue
			}
			opposite := 0.8 // the claim says more: its variant 20 % lower
			if e.Max != nil && *e.Max <= 1 {
				opposite = 1.25
			}
			r := rand.New(rand.NewPCG(5, 6))
			for _, ratio := range []float64{1, opposite} {
				if _, c := design(r, s, e, ratio, 0.1, 30); c.Verdict == Reproduced {
					t.Errorf("%s: %s against %s at %.2f× (claim %s): reproduced (%+v)", name, e.Variant, e.Than, ratio, e.Bounds(), c.Ours)
				}
			}
		}
	}
}

func TestCheckDecide(t *testing.T) {
	for _, c := range []struct {
		o    Options
		sc   Scale
		want []string
	}{
		{Options{Decide: true, Budget: time.Hour, Scale: "quick"}, Scale{Runs: 3}, nil},
		{Options{Budget: time.Hour}, Scale{Runs: 3}, []string{"--budget: only with --decide"}},
		{Options{Decide: true, Budget: -time.Minute, Scale: "full"}, Scale{Runs: 1}, []string{"--budget: -1m0s: want a positive duration", "--decide: the full scale runs 1 round"}},
	} {
		err := checkDecide(c.sc, c.o)
		if (err == nil) != (len(c.want) == 0) {
			t.Errorf("%+v: %v", c.o, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: %v, want %q", c.o, err, w)
			}
		}
		if err != nil && !hderr.IsUser(err) {
			t.Errorf("%+v: %v is not a user error (exit 2)", c.o, err)
		}
	}
}

// A run that followed a design says so in its finding and its report,
// and an undecided claim the rounds it would need.
func TestDesignSaid(t *testing.T) {
	s, _ := Embedded("seed000-bufferpool")
	e := s.Expect[0]
	variants := []string{e.Than, e.Variant}
	samples := rounds(rand.New(rand.NewPCG(2, 2)), e, 1, 4, 1.06, 0.15)
	d := Plan(s, variants, samples[:6], 3, time.Minute, 4*time.Minute)
	res := &Result{Study: s, Scale: "quick", Protocol: s.Scales.Quick, Variants: variants, Rounds: 4, Samples: samples, Design: &d}
	res.Cells, res.Checks = Summarize(s, s.Scales.Quick, variants, samples)
	res.Checks = d.Judge(s, res.Checks, samples)
	if c := res.Checks[0]; c.Verdict != Inconclusive || c.Rounds != 4 || c.Needs <= 4 {
		t.Fatalf("+6 %% with 15 %% noise over 4 rounds: %+v", c)
	}
	res.Finding = Finding(res)
	if want := fmt.Sprintf("about %d rounds would decide it (it had 4)", res.Checks[0].Needs); !strings.Contains(res.Finding, want) || !strings.Contains(res.Finding, "Rounds: InnoDB buffer pool, the default 128M against 2G, under a Galera cluster on cloud disks, quick scale, 4 round(s) of every variant interleaved; they followed a two-look design: the pilot's 3 rounds, judged alone at 1 % a bound, decide 0 of 1 checks") {
		t.Errorf("finding lacks %q:\n%s", want, res.Finding)
	}
	b, err := HTML(&results.Run{ID: "20261127-000000-abcd"}, res, Context{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "The rounds followed a two-look design: the pilot&#39;s 3 rounds, judged alone at 1 % a bound") || !strings.Contains(string(b), "by Stein&#39;s interval (its width from the pilot&#39;s spread) at 4 % a bound") {
		t.Errorf("the report does not say the design")
	}
}

// TestRateClaims: a claim on a rate (losses an hour of faults) is judged
// on the rounds' events and hours together with Garwood's interval: no
// loss in three minutes is inconclusive (the rate may still be 0.1 an
// hour), none in 40 hours is not reproduced, ten in ten hours reproduced;
// a two-look design sizes the rounds whose hours would decide it.
func TestRateClaims(t *testing.T) {
	s, _ := Embedded("jepsen-galera-chaos")
	rounds := func(n int, hours float64, lossy int) []Sample {
		var out []Sample
		for r := 1; r <= n; r++ {
			lost := 0.0
			if r <= lossy {
				lost = 1 / hours
			}
			out = append(out, Sample{Round: r, Variant: "durable", Step: "chaos", Metric: "losses_per_h", Value: lost},
				Sample{Round: r, Variant: "durable", Step: "chaos", Metric: Exposure, Value: hours})
		}
		return out
	}
	for _, c := range []struct {
		name    string
		samples []Sample
		want    string
	}{
		{"none in 3 minutes", rounds(3, 1.0/60, 0), Inconclusive},
		{"none in 40 hours", rounds(4, 10, 0), NotReproduced},
		{"ten in ten hours", rounds(10, 1, 10), Reproduced},
	} {
		_, checks := Summarize(s, s.Scales.Quick, []string{"durable", "relaxed"}, c.samples)
		if len(checks) != 1 || checks[0].Verdict != c.want || !checks[0].Ours.Known {
			t.Errorf("%s: %+v, want %s", c.name, checks, c.want)
		}
		if c.want == Inconclusive && !strings.Contains(reasonOf(checks[0]), "0 in 0.05 hours: the rate may be anywhere from 0.000 to 59.9 an hour") {
			t.Errorf("%s: the reason %q", c.name, reasonOf(checks[0]))
		}
	}
	d := Plan(s, []string{"durable", "relaxed"}, rounds(3, 1.0/60, 0), 3, time.Minute, 0)
	// none seen: the hours that bound the rate under 0.1 at the last
	// look (−ln 0.04 / 0.1 = 32.2 hours) in rounds of a minute
	if n := d.Needs[0]; n.Scale != OnRate || n.Rounds < 1931 || n.Rounds > 2130 {
		t.Errorf("rounds needed with no loss in the pilot: %+v", n)
	}
}

// A pilot that decides ends the design: jepsen-galera-crash's pilot of 20
// crashes, 16 of them losing acknowledged work, clears "at least 1 in 10"
// at the pilot's 1 %, so no round is added (sized at the margin, 5 % of
// 0.1, it would ask for tens of thousands); the check keeps the pilot's
// verdict and its 98 % interval. A pilot that does not decide is sized and
// judged at the last look's 4 %.
func TestPilotDecides(t *testing.T) {
	s, _ := Embedded("jepsen-galera-crash")
	e := s.Expect[0]
	var pilot []Sample
	for r := 1; r <= 20; r++ {
		lost := 0.0
		if r%5 != 0 {
			lost = 1
		}
		pilot = append(pilot, Sample{Round: r, Variant: e.Variant, Step: e.Step, Metric: e.Metric, Value: lost},
			Sample{Round: r, Variant: "durable", Step: e.Step, Metric: e.Metric, Value: 0})
	}
	variants := []string{"durable", "relaxed"}
	d := Plan(s, variants, pilot, 20, 2*time.Minute, 2*time.Hour)
	if n := d.Needs[0]; n.Decided != Reproduced || n.Rounds != 20 || d.Rounds != 20 {
		t.Fatalf("16 of 20 against at least 0.1: %+v, %d rounds", n, d.Rounds)
	}
	if !strings.Contains(d.Says(), "decide 1 of 1 checks") || !strings.Contains(d.Says(), "checks; 20 rounds in all") {
		t.Errorf("%s", d.Says())
	}
	_, checks := Summarize(s, s.Scales.Full, variants, pilot)
	c := d.Judge(s, checks, pilot)[0]
	if c.Verdict != Reproduced || c.Look != LookPilot || c.Rounds != 20 || math.Abs(c.Ours.Level-0.98) > 1e-9 || !(c.Ours.Lo > 0.1 && c.Ours.Lo < checks[0].Ours.Lo) {
		t.Errorf("judged: %+v (the ordinary 90 %% interval %+v)", c, checks[0].Ours)
	}
	if line := claimLine(c, map[string]string{"relaxed": "relaxed"}, false, false); !strings.Contains(line, "98 % interval); claim at least 0.100 (decided by the pilot's 20 rounds)") {
		t.Errorf("%s", line)
	}

	// 3 of 20: the pilot's 98 % interval crosses 0.1; the rest is sized
	few := slices.Clone(pilot)
	for i := range few {
		if few[i].Variant == "relaxed" {
			few[i].Value = map[bool]float64{true: 1, false: 0}[few[i].Round <= 3]
		}
	}
	d = Plan(s, variants, few, 20, 2*time.Minute, 0)
	if n := d.Needs[0]; n.Decided != "" || n.Rounds <= 20 {
		t.Errorf("3 of 20: %+v", n)
	}
	_, checks = Summarize(s, s.Scales.Full, variants, few)
	if c := d.Judge(s, checks, few)[0]; c.Look != LookFinal || math.Abs(c.Ours.Level-0.92) > 1e-9 {
		t.Errorf("3 of 20, judged: %+v", c)
	}
}

// A design stored before there were two looks (no alphas) is judged as it
// was planned: once, at the end, at Alpha.
func TestOneLookDesignStored(t *testing.T) {
	s, _ := Embedded("seed000-bufferpool")
	e := s.Expect[0]
	variants := []string{e.Than, e.Variant}
	samples := rounds(rand.New(rand.NewPCG(8, 8)), e, 1, 6, 1.3, 0.05)
	d := Plan(s, variants, samples[:6], 3, time.Minute, 0)
	d.PilotAlpha, d.FinalAlpha = 0, 0
	for i := range d.Needs {
		d.Needs[i].Decided, d.Needs[i].Rounds = "", 6
	}
	_, checks := Summarize(s, s.Scales.Quick, variants, samples)
	c := d.Judge(s, checks, samples)[0]
	if c.Look != LookFinal || c.Rounds != 6 || math.Abs(c.Ours.Level-stats.Level) > 1e-9 {
		t.Errorf("%+v", c)
	}
	if !strings.HasPrefix(d.Says(), "two-stage design: the pilot's 3 rounds size the checks at 6 rounds") || !strings.Contains(d.Judged(), "at 5 % per bound") {
		t.Errorf("%s; %s", d.Says(), d.Judged())
	}
}

// drills draws n rounds of a share claim's drills, each going that
// way (1) with chance p, numbered from first.
func drills(r *rand.Rand, e Expect, first, n int, p float64) []Sample {
	var out []Sample
	for i := range n {
		v := 0.0
		if r.Float64() < p {
			v = 1
		}
		out = append(out, Sample{Round: first + i, Variant: e.Variant, Step: e.Step, Metric: e.Metric, Value: v})
	}
	return out
}

// A claim on a share of drills is judged by the exact binomial interval:
// none of three kills losing anything does not show that at most half of
// kills lose something (the share may be up to 0.63), none of ten does;
// none of six crashes during partitions does not show that fewer than one
// in ten lose (up to 0.39), and says so.
func TestShareClaims(t *testing.T) {
	failover, _ := Embedded("seed000-failover")
	var kill Expect
	for _, e := range failover.Expect {
		if e.Step == "kill" && e.Metric == "lost_any" {
			kill = e
		}
	}
	faults, _ := Embedded("jepsen-galera-faults")
	crashpart := faults.Expect[0]
	zeros := func(e Expect, n int) []Sample { return drills(rand.New(rand.NewPCG(1, 1)), e, 1, n, 0) }
	for _, c := range []struct {
		s       *Study
		e       Expect
		samples []Sample
		want    string
		reason  string
	}{
		{failover, kill, zeros(kill, 3), Inconclusive, "0 of 3: the share may be anywhere from 0.000 to 0.632 (an exact binomial interval)"},
		{failover, kill, zeros(kill, 10), Reproduced, ""},
		{faults, crashpart, zeros(crashpart, 6), Inconclusive, "0 of 6: the share may be anywhere from 0.000 to 0.393"},
		{faults, crashpart, zeros(crashpart, 40), NotReproduced, ""},
	} {
		_, checks := Summarize(c.s, c.s.Scales.Quick, variantNames(c.s), c.samples)
		var got *Check
		for i := range checks {
			if checks[i].Expect == c.e {
				got = &checks[i]
			}
		}
		if got == nil || got.Verdict != c.want || got.Trials != len(c.samples) || !strings.Contains(reasonOf(*got), c.reason) {
			t.Errorf("%s %s, none of %d: %+v, want %s (%q)", c.s.Name, c.e.Step, len(c.samples), got, c.want, c.reason)
		}
	}
	// the design: none of 6 asks for the rounds whose interval would bound
	// the share under 0.1 at the last look (1 − 0.04^(1/n) < 0.1: 31)
	d := Plan(faults, variantNames(faults), zeros(crashpart, 6), 6, time.Minute, 0)
	if n := d.Needs[0]; n.Scale != OnShare || n.Decided != "" || n.Rounds != 31 {
		t.Errorf("none of 6: %+v", n)
	}
}

// A design on a share claim whose true share is on its bound says
// "reproduced" at most Alpha of the time: the pilot's look, the rounds
// its share asks for, the exact interval at the last look.
func TestShareDesignErrorRate(t *testing.T) {
	s, _ := Embedded("jepsen-galera-crash")
	e := s.Expect[0] // relaxed lost_any at least 0.1
	r := rand.New(rand.NewPCG(6, 7))
	const trials = 1000
	for _, limit := range []int{1000, 40} {
		inside := 0
		for range trials {
			pilot := drills(r, e, 1, 20, *e.Min)
			d := Plan(s, []string{"durable", "relaxed"}, pilot, 20, time.Minute, time.Duration(limit)*time.Minute)
			all := append(pilot, drills(r, e, 21, d.Rounds-20, *e.Min)...)
			checks := []Check{{Expect: e, Verdict: Inconclusive}} // as Summarize makes it, without its cells (quicker)
			if d.Judge(s, checks, all)[0].Verdict == Reproduced {
				inside++
			}
		}
		share := float64(inside) / trials
		t.Logf("at most %d rounds: %.2f %% reproduced on the bound", limit, 100*share)
		if share > stats.Alpha+3*math.Sqrt(stats.Alpha*(1-stats.Alpha)/trials) {
			t.Errorf("at most %d rounds: a share on its bound reproduced in %.1f %% of designs, want at most %.0f %%", limit, 100*share, 100*stats.Alpha)
		}
	}
}

func variantNames(s *Study) []string {
	var out []string
	for _, v := range s.Variants {
		out = append(out, v.Name)
	}
	return out
}

// Every claim on a share of drills can go either way at its full scale:
// every round one way reproduces it, every round the other way does not
// (a share of "at least one in ten" needs 29 rounds without a loss to be
// told below 0.1 at all; 20 cannot say no).
func TestShareClaimsCanDecide(t *testing.T) {
	for _, name := range Names() {
		s, _ := Embedded(name)
		for _, e := range s.Expect {
			if !IsShare(e) || e.NotCheckable != "" {
				continue
			}
			n := s.Scales.Full.Runs
			got := map[int]string{}
			for _, k := range []int{0, n} {
				got[k] = judge(stats.ShareEstimate(k, n), e)
			}
			none, all := NotReproduced, Reproduced // "at least": every round that way holds it
			if e.Max != nil {
				none, all = Reproduced, NotReproduced
			}
			if got[0] != none || got[n] != all {
				t.Errorf("%s %s %s (%s) over the full scale's %d rounds: none %s, all %s; want %s and %s", name, e.Variant, e.Metric, e.Bounds(), n, got[0], got[n], none, all)
			}
		}
	}
}

// A claim that something never happens (seed003-p2p: every acknowledged
// write on both primaries, no row diverged; seed000-probe: no new
// connection on a donor) is refuted by one round that counts one, at any
// look and whatever the others counted: one lost write among three rounds
// is not an interval reaching 0 (inconclusive), it is the counterexample.
// Rounds without one reproduce it and say how few they were; the design's
// pilot decides it, and a later round that counts one still refutes it.
func TestNeverClaims(t *testing.T) {
	r := claimOn(t, "seed003-p2p", "lost_writes")
	if !IsNever(r.e) || IsShare(r.e) {
		t.Fatalf("%+v is not a never-claim", r.e)
	}
	for _, c := range []struct {
		values []float64
		want   string
		reason string
	}{
		{[]float64{0, 0, 0}, Reproduced, "none in 3 rounds (one would refute it); so few cannot exclude one in up to 0.632 of rounds"},
		{[]float64{0, 2, 0}, NotReproduced, "1 of 3 rounds counted one: one refutes a claim that it never happens"},
		{[]float64{1, 1, 1, 1}, NotReproduced, "4 of 4 rounds"},
	} {
		if got := r.check(r.rounds(c.values...)); got.Verdict != c.want || !strings.Contains(reasonOf(got), c.reason) {
			t.Errorf("%v: %s (%s), want %s (%s)", c.values, got.Verdict, reasonOf(got), c.want, c.reason)
		}
	}
	// the design: the pilot decides it; a round after it that counts one
	// refutes it all the same
	d, n := r.plan(r.rounds(0, 0, 0))
	if n.Scale != OnNever || n.Decided != Reproduced || n.Rounds != 3 {
		t.Errorf("pilot without a loss: %+v", n)
	}
	if c := r.judged(d, r.rounds(0, 0, 0, 0, 3)); c.Verdict != NotReproduced || c.Rounds != 5 {
		t.Errorf("a loss after the pilot: %s over %d rounds, want not reproduced over 5", c.Verdict, c.Rounds)
	}
	// a share claim with a bound of 0 is one too: none of 3 drills losing
	// anything no longer has to bound a share under 0 (it never could)
	drill := Expect{Step: "kill", Variant: "v", Metric: "lost_any", Max: new(0.0)}
	if !IsNever(drill) || IsShare(drill) {
		t.Errorf("lost_any at most 0 is not a never-claim")
	}
}

// A claim that something happens at all (jepsen-galera: Galera "allows
// P4", happens: true) is reproduced by one round that counts one, at any
// look: each lost update the checker counts is a history that shows it.
// Rounds of 1, 3 and 4 lost updates have a mean whose interval reaches
// below 1 (inconclusive as a mean), yet every one of them witnessed the
// claim. Rounds without one do not reproduce it, and say how many they
// were; the pilot decides it, and a later round that counts one still
// reproduces it. happens: true anywhere else is refused.
func TestEverClaims(t *testing.T) {
	r := claimOn(t, "jepsen-galera", "lost_updates")
	if !IsEver(r.e) || IsNever(r.e) || IsShare(r.e) {
		t.Fatalf("%+v is not an ever-claim", r.e)
	}
	for _, c := range []struct {
		values []float64
		want   string
		reason string
	}{
		{[]float64{1, 3, 4}, Reproduced, "3 of 3 rounds counted one: one witnessed reproduces a claim that it happens"},
		{[]float64{0, 2, 0}, Reproduced, "1 of 3 rounds"},
		{[]float64{0, 0, 0}, NotReproduced, "none in 3 rounds (one would reproduce it): it was not seen here"},
		{[]float64{0.5, 0.5, 0.5}, NotReproduced, "none in 3 rounds"}, // a count below the bound is none
	} {
		if got := r.check(r.rounds(c.values...)); got.Verdict != c.want || !strings.Contains(reasonOf(got), c.reason) {
			t.Errorf("%v: %s (%s), want %s (%s)", c.values, got.Verdict, reasonOf(got), c.want, c.reason)
		}
	}
	// as a mean, 1, 3 and 4 could not decide it: the reason for the form
	mean := r.e
	mean.Happens = false
	if IsEver(mean) {
		t.Fatal("without happens: true a claim is a mean's")
	}
	d, n := r.plan(r.rounds(0, 0, 0))
	if n.Scale != OnEver || n.Decided != NotReproduced || n.Rounds != 3 {
		t.Errorf("pilot without a lost update: %+v", n)
	}
	if c := r.judged(d, r.rounds(0, 0, 0, 0, 2)); c.Verdict != Reproduced || c.Rounds != 5 {
		t.Errorf("a lost update after the pilot: %s over %d rounds, want reproduced over 5", c.Verdict, c.Rounds)
	}
	_, err := loadOneClaim("metric: avg_ms, min: 1, happens: true, claim: c, source: s")
	if err == nil || !strings.Contains(err.Error(), "expect[0].happens: expected only with min: 1 and no max or than, on a count of anomalies") || !strings.Contains(err.Error(), "got metric avg_ms, min 1") {
		t.Errorf("happens on a latency: %v", err)
	}
}

// claimRounds is an embedded study's claim on a metric, fed rounds of
// its figure alone.
type claimRounds struct {
	t *testing.T
	s *Study
	e Expect
}

func claimOn(t *testing.T, study, metric string) claimRounds {
	t.Helper()
	s, _ := Embedded(study)
	for _, e := range s.Expect {
		if e.Metric == metric {
			return claimRounds{t, s, e}
		}
	}
	t.Fatalf("%s has no claim on %s", study, metric)
	return claimRounds{}
}

// rounds are the claim's figure in rounds 1, 2, …
func (r claimRounds) rounds(values ...float64) []Sample {
	var out []Sample
	for i, v := range values {
		out = append(out, Sample{Round: i + 1, Variant: r.e.Variant, Step: r.e.Step, Metric: r.e.Metric, Value: v})
	}
	return out
}

// check is the claim's check over samples (Summarize).
func (r claimRounds) check(samples []Sample) Check {
	r.t.Helper()
	_, checks := Summarize(r.s, r.s.Scales.Quick, variantNames(r.s), samples)
	return r.of(checks)
}

// plan is a two-look design over a pilot of 3 rounds, and the claim's need.
func (r claimRounds) plan(pilot []Sample) (Design, Need) {
	d := Plan(r.s, variantNames(r.s), pilot, 3, time.Minute, 0)
	for i, e := range r.s.Expect {
		if e == r.e {
			return d, d.Needs[i]
		}
	}
	return d, Need{}
}

// judged is the claim's check over samples under design d.
func (r claimRounds) judged(d Design, samples []Sample) Check {
	r.t.Helper()
	_, checks := Summarize(r.s, r.s.Scales.Quick, variantNames(r.s), samples)
	return r.of(d.Judge(r.s, checks, samples))
}

func (r claimRounds) of(checks []Check) Check {
	r.t.Helper()
	for _, c := range checks {
		if c.Expect == r.e {
			return c
		}
	}
	r.t.Fatal("no check")
	return Check{}
}
