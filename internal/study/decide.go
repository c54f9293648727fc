package study

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/stats"
)

// Design is a study's two-stage design (`study run --decide`): the scale's
// rounds are a pilot; each check's spread in the pilot sizes the rounds it
// needs to decide (stats.TwoStageRounds, at stats.Margin from its bound
// with stats.Power); the study runs the most any check needs, within the
// budget; every check is then judged by Stein's interval (its half-width
// from the pilot's spread), so the rounds added do not raise the chance
// of a false "reproduced" above stats.Alpha per bound.
type Design struct {
	Pilot  int     `json:"pilot"`  // rounds of the pilot (the scale's)
	Rounds int     `json:"rounds"` // rounds planned in all
	Margin float64 `json:"margin"` // stats.Margin
	Power  float64 `json:"power"`  // stats.Power
	// Budget is the time the rounds may take in all (0: none), and
	// Affordable the rounds it allows, from the pilot's round time.
	Budget     time.Duration `json:"budget_ns,omitempty"`
	Affordable int           `json:"affordable,omitempty"`
	RoundTime  time.Duration `json:"round_time_ns"` // a pilot round's (its median)
	Needs      []Need        `json:"needs"`         // one per check, the study's order
}

// Need is what one check's pilot says.
type Need struct {
	Claim string `json:"claim"`
	// Scale is what the design works on: the variant's figure (mean) or,
	// for a ratio, the log of each round's ratio of the two variants (the
	// rounds interleave them: a pair per round).
	Scale  string  `json:"scale"`
	SD     float64 `json:"sd"`     // the pilot's standard deviation on that scale
	Delta  float64 `json:"delta"`  // the margin from the bound, on that scale
	Rounds int     `json:"rounds"` // rounds in all it needs (0: the pilot cannot size it)
	Why    string  `json:"why,omitempty"`
}

// Scales of a Need.
const (
	OnMean     = "mean"
	OnLogRatio = "log ratio"
	// OnRate: a rate's events and hours (Garwood's interval over every
	// round; the rounds it needs are those whose hours, at the pilot's
	// rate, would take its interval clear of the bound).
	OnRate = "rate"
)

// perRound is a check's value in each round that measured it, on its
// scale, in round order: the variant's figure, or the log of its ratio to
// the other variant's in the same round.
func perRound(s *Study, e Expect, samples []Sample) (string, []float64) {
	if strings.HasPrefix(e.Metric, PerDollar+"@") { // derived from the prices
		samples = perDollar(s, samples)
	}
	at := func(variant string) map[int]float64 {
		m := map[int]float64{}
		for _, x := range samples {
			if x.Variant == variant && x.Step == e.Step && x.Metric == e.Metric {
				m[x.Round] = x.Value
			}
		}
		return m
	}
	a := at(e.Variant)
	rounds := make([]int, 0, len(a))
	for r := range a {
		rounds = append(rounds, r)
	}
	slices.Sort(rounds)
	var out []float64
	if e.Than == "" {
		for _, r := range rounds {
			out = append(out, a[r])
		}
		return OnMean, out
	}
	b := at(e.Than)
	for _, r := range rounds {
		if v, ok := b[r]; ok && a[r] > 0 && v > 0 {
			out = append(out, math.Log(a[r]/v))
		}
	}
	return OnLogRatio, out
}

// nearest is the claim's bound nearest to v (a claim with both bounds
// decides against the one it is closest to), on the check's scale.
func nearest(e Expect, scale string, v float64) (float64, bool) {
	var bounds []float64
	for _, b := range []*float64{e.Min, e.Max} {
		if b == nil {
			continue
		}
		if scale == OnLogRatio {
			if *b <= 0 {
				continue
			}
			bounds = append(bounds, math.Log(*b))
		} else {
			bounds = append(bounds, *b)
		}
	}
	if len(bounds) == 0 {
		return 0, false
	}
	return slices.MinFunc(bounds, func(x, y float64) int { return cmp.Compare(math.Abs(x-v), math.Abs(y-v)) }), true
}

// Plan sizes a two-stage design from the pilot's samples: each check's
// need, and the rounds in all (the most any check needs, at most
// affordable; 0: no budget).
func Plan(s *Study, variants []string, pilot []Sample, n0 int, roundTime time.Duration, budget time.Duration) Design {
	d := Design{Pilot: n0, Rounds: n0, Margin: stats.Margin, Power: stats.Power, Budget: budget, RoundTime: roundTime}
	if budget > 0 && roundTime > 0 {
		d.Affordable = max(n0, int(budget/roundTime))
	}
	for _, e := range s.Expect {
		n := Need{Claim: e.Claim}
		if (e.Variant != "" && !slices.Contains(variants, e.Variant)) || (e.Than != "" && !slices.Contains(variants, e.Than)) {
			n.Why = "not run (--variants)"
			d.Needs = append(d.Needs, n)
			continue
		}
		if e.NotCheckable != "" {
			n.Why = "not checkable here"
			d.Needs = append(d.Needs, n)
			continue
		}
		if IsRate(e.Metric) && e.Than == "" {
			n.Scale = OnRate
			n.Rounds, n.Why = rateRounds(e, pilot, n0)
			d.Rounds = max(d.Rounds, n.Rounds)
			d.Needs = append(d.Needs, n)
			continue
		}
		var v []float64
		n.Scale, v = perRound(s, e, pilot)
		sp := stats.SpreadOf(v)
		n.SD = sp.SD
		b, ok := nearest(e, n.Scale, sp.Mean)
		switch {
		case len(v) < 2:
			n.Why = fmt.Sprintf("the pilot measured it in %d round(s): no spread to size it by", len(v))
		case !ok:
			n.Why = "no bound to decide against"
		case n.Scale == OnLogRatio:
			n.Delta = math.Log1p(stats.Margin)
		case b != 0:
			n.Delta = stats.Margin * math.Abs(b)
		default: // a bound of 0: the margin is of the figure itself
			n.Delta = stats.Margin * math.Abs(sp.Mean)
		}
		if n.Why == "" {
			n.Rounds = stats.TwoStageRounds(len(v), n.SD, n.Delta)
			if n.Rounds == 0 {
				n.Why = "the figure and its bound are both 0"
			}
		}
		if n.Rounds > d.Rounds {
			d.Rounds = n.Rounds
		}
		d.Needs = append(d.Needs, n)
	}
	if d.Affordable > 0 && d.Rounds > d.Affordable {
		d.Rounds = d.Affordable
	}
	return d
}

// rateRounds is the rounds a rate's claim needs: the least number whose
// hours (at the pilot's hours a round), with events coming at the pilot's
// rate, give an interval clear of the claim's bounds; none seen in the
// pilot is taken as that: the hours that bound the rate below the claim.
func rateRounds(e Expect, pilot []Sample, n0 int) (int, string) {
	events, hours := exposed(pilot, e.Variant, e.Step, e.Metric)
	if hours <= 0 || n0 < 1 {
		return 0, "the pilot measured no hours of exposure"
	}
	perRound, rate := hours/float64(n0), float64(events)/hours
	for n := n0; n <= 1_000_000; n = max(n+1, n*11/10) {
		t := perRound * float64(n)
		if stats.RateEstimate(int(math.Round(rate*t)), t).Against(e.Min, e.Max) != stats.Straddles {
			return n, ""
		}
	}
	return 0, "more than a million rounds"
}

// Judge replaces each check's estimate by Stein's interval over every
// round it was measured in (the pilot's spread and size fix its
// half-width) and judges it again; a check that stays inconclusive says
// how many rounds it would need.
func (d Design) Judge(s *Study, checks []Check, samples []Sample) []Check {
	out := slices.Clone(checks)
	for i := range out {
		c := &out[i]
		if i >= len(d.Needs) || d.Needs[i].Rounds == 0 || c.Verdict == NotRun || c.Verdict == NotMeasured {
			continue
		}
		n := d.Needs[i]
		if n.Scale == OnRate { // Garwood's interval over every round is Summarize's
			c.Rounds = n.Rounds
			if c.Verdict == Inconclusive {
				c.Needs = n.Rounds
			}
			continue
		}
		scale, v := perRound(s, c.Expect, samples)
		if scale != n.Scale || len(v) < d.Pilot {
			continue
		}
		e := stats.TwoStageEstimate(v, d.Pilot, n.SD)
		if scale == OnLogRatio {
			e = e.Exp()
		}
		c.Ours, c.Verdict = e, judge(e, c.Expect)
		c.Rounds = len(v)
		if c.Verdict == Inconclusive {
			c.Needs = n.Rounds
		}
	}
	return out
}

// Says is the design in a sentence, for the log and the finding.
func (d Design) Says() string {
	var need []string
	for _, n := range d.Needs {
		w := "–" // the pilot could not size it
		if n.Rounds > 0 {
			w = strconv.Itoa(n.Rounds)
		}
		need = append(need, w)
	}
	if len(need) == 0 {
		return fmt.Sprintf("two-stage design: no claim to size, the pilot's %d rounds are all", d.Pilot)
	}
	s := fmt.Sprintf("two-stage design: the pilot's %d rounds size the checks at %s rounds (%.0f %% from a bound, power %.0f %%); %d rounds in all",
		d.Pilot, strings.Join(need, ", "), 100*d.Margin, 100*d.Power, d.Rounds)
	if d.Budget > 0 {
		s += fmt.Sprintf(" (the budget of %v allows %d at %v a round)", d.Budget, d.Affordable, d.RoundTime.Round(time.Second))
	}
	return s
}
