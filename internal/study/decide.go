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

// Design is a study's two-look design (`study run --decide`): the scale's
// rounds are a pilot, and its look judges each check on them alone at
// stats.PilotAlpha; a check the pilot decides needs no more rounds. The
// spread of each other check in the pilot sizes the rounds it needs
// (stats.TwoStageRounds, at stats.Margin from its bound with stats.Power);
// the study runs the most any check needs, within the budget; those checks
// are then judged by Stein's interval (its half-width from the pilot's
// spread) at stats.FinalAlpha. Stopping early and adding rounds so keep
// the chance of a false "reproduced" at stats.Alpha per bound in all.
type Design struct {
	Pilot  int     `json:"pilot"`  // rounds of the pilot (the scale's)
	Rounds int     `json:"rounds"` // rounds planned in all
	Margin float64 `json:"margin"` // stats.Margin
	Power  float64 `json:"power"`  // stats.Power
	// PilotAlpha and FinalAlpha are the error each look spends (a design
	// stored before there were two looks has neither: it judged once, at
	// stats.Alpha, after every round).
	PilotAlpha float64 `json:"pilot_alpha,omitempty"`
	FinalAlpha float64 `json:"final_alpha,omitempty"`
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
	// Decided is the pilot's verdict when its look decided the check
	// (reproduced or not reproduced; Rounds is then the pilot's).
	Decided string `json:"decided,omitempty"`
	Why     string `json:"why,omitempty"`
}

// Looks of a check judged by a design: which one decided it.
const (
	LookPilot = "pilot"
	LookFinal = "final"
)

// final is the error the design's last look spends.
func (d Design) final() float64 {
	if d.FinalAlpha > 0 {
		return d.FinalAlpha
	}
	return stats.Alpha
}

// Scales of a Need.
const (
	OnMean     = "mean"
	OnLogRatio = "log ratio"
	// OnRate: a rate's events and hours (Garwood's interval over every
	// round; the rounds it needs are those whose hours, at the pilot's
	// rate, would take its interval clear of the bound).
	OnRate = "rate"
	// OnShare: a share of drills (Clopper–Pearson's interval over every
	// round; the rounds it needs are those that, at the pilot's share,
	// would take its interval clear of the bound).
	OnShare = "share"
	// OnNever: a claim that something never happens (IsNever): the pilot
	// decides it, and a later round that counts one refutes it still.
	OnNever = "never"
	// OnEver: a claim that something happens (IsEver): the pilot decides
	// it, and a later round that counts one reproduces it still.
	OnEver = "ever"
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

// Plan sizes a two-look design from the pilot's samples: each check's
// need, and the rounds in all (the most any check needs, at most
// affordable; 0: no budget).
func Plan(s *Study, variants []string, pilot []Sample, n0 int, roundTime time.Duration, budget time.Duration) Design {
	d := Design{Pilot: n0, Rounds: n0, Margin: stats.Margin, Power: stats.Power, PilotAlpha: stats.PilotAlpha, FinalAlpha: stats.FinalAlpha,
		Budget: budget, RoundTime: roundTime}
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
		if IsNever(e) || IsEver(e) { // one round that counts one refutes it (or witnesses it), at any look: nothing to size
			k, _ := roundsWith(pilot, e)
			n.Scale, n.Decided, n.Rounds = OnNever, witnessed(k, e), n0
			if IsEver(e) {
				n.Scale = OnEver
			}
			d.Needs = append(d.Needs, n)
			continue
		}
		if share := IsShare(e); share || IsRate(e.Metric) && e.Than == "" {
			n.Scale, n.Decided = OnRate, pilotLook(s, e, pilot)
			if share {
				n.Scale = OnShare
			}
			switch {
			case n.Decided != "":
				n.Rounds = n0
			case share:
				n.Rounds, n.Why = shareRounds(e, pilot, n0)
			default:
				n.Rounds, n.Why = rateRounds(e, pilot, n0)
			}
			d.Rounds = max(d.Rounds, n.Rounds)
			d.Needs = append(d.Needs, n)
			continue
		}
		var v []float64
		n.Scale, v = perRound(s, e, pilot)
		sp := stats.SpreadOf(v)
		n.SD = sp.SD
		b, ok := nearest(e, n.Scale, sp.Mean)
		if n.Decided = pilotLook(s, e, pilot); n.Decided != "" {
			n.Rounds = n0
			d.Needs = append(d.Needs, n)
			continue
		}
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
			n.Rounds = stats.TwoStageRounds(len(v), n.SD, n.Delta, stats.FinalAlpha)
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

// pilotLook is a claim's verdict on the pilot's rounds alone at
// stats.PilotAlpha when that decides it (reproduced or not reproduced),
// else "".
func pilotLook(s *Study, e Expect, pilot []Sample) string {
	est, ok := pilotEstimate(s, e, pilot, stats.PilotAlpha)
	if !ok {
		return ""
	}
	if v := judge(est, e); v == Reproduced || v == NotReproduced {
		return v
	}
	return ""
}

// pilotEstimate is a claim's estimate on the pilot's rounds at alpha: a
// rate's Garwood interval, a figure's t-interval, a ratio's over the log
// of each round's ratio. false when the pilot gives no interval.
func pilotEstimate(s *Study, e Expect, pilot []Sample, alpha float64) (stats.Estimate, bool) {
	if IsRate(e.Metric) && e.Than == "" {
		events, hours := exposed(pilot, e.Variant, e.Step, e.Metric)
		est := stats.RateEstimateAt(events, hours, alpha)
		return est, est.Known
	}
	if IsShare(e) {
		k, n := shareOf(pilot, e.Variant, e.Step, e.Metric)
		est := stats.ShareEstimateAt(k, n, alpha)
		return est, est.Known
	}
	scale, v := perRound(s, e, pilot)
	if len(v) < 2 {
		return stats.Estimate{}, false
	}
	est := stats.MeanEstimateAt(stats.SpreadOf(v), alpha)
	if scale == OnLogRatio {
		est = est.Exp()
	}
	return est, true
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
	return leastRounds(n0, func(n int) bool {
		t := perRound * float64(n)
		return stats.RateEstimateAt(int(math.Round(rate*t)), t, stats.FinalAlpha).Against(e.Min, e.Max) != stats.Straddles
	})
}

// shareRounds is the rounds a share's claim needs: the least number
// whose exact interval, the pilot's share of them going that way, clears
// the claim's bounds (none in the pilot is taken as none: the rounds that
// bound the share below the claim).
func shareRounds(e Expect, pilot []Sample, n0 int) (int, string) {
	k, n := shareOf(pilot, e.Variant, e.Step, e.Metric)
	if n == 0 {
		return 0, "the pilot measured it in no round"
	}
	p := float64(k) / float64(n)
	return leastRounds(max(n0, n), func(r int) bool {
		return stats.ShareEstimateAt(int(math.Round(p*float64(r))), r, stats.FinalAlpha).Against(e.Min, e.Max) != stats.Straddles
	})
}

// leastRounds is the least number of rounds, from, whose interval clears
// the claim's bounds (clears): doubling to the first that does, then
// halving the gap down to the least (an interval narrows as the rounds
// grow); 0 and why when even a million do not.
func leastRounds(from int, clears func(int) bool) (int, string) {
	lo, hi := from-1, from
	for !clears(hi) {
		if hi > 1_000_000 {
			return 0, "more than a million rounds"
		}
		lo, hi = hi, 2*hi
	}
	for hi-lo > 1 {
		if mid := (lo + hi) / 2; clears(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, ""
}

// Judge replaces each check's estimate by the look that decides it: the
// pilot's at PilotAlpha for a check the pilot decided (its rounds alone),
// else Stein's interval over every round it was measured in (the pilot's
// spread and size fix its half-width; a rate's Garwood interval over every
// round's hours) at the last look's alpha. A check that stays inconclusive
// says how many rounds it would need.
func (d Design) Judge(s *Study, checks []Check, samples []Sample) []Check {
	out := slices.Clone(checks)
	var pilot []Sample
	for _, x := range samples {
		if x.Round <= d.Pilot {
			pilot = append(pilot, x)
		}
	}
	for i := range out {
		c := &out[i]
		if i >= len(d.Needs) || c.Verdict == NotRun || c.Verdict == NotMeasured || c.Verdict == NotCheckable {
			continue
		}
		n := d.Needs[i]
		if IsNever(c.Expect) || IsEver(c.Expect) { // Summarize's verdict over every round: one that counts one refutes (or witnesses) it at any look
			c.Rounds = c.Trials
			continue
		}
		if n.Rounds == 0 && n.Scale != OnShare && n.Scale != OnRate { // the pilot could not size it: Summarize's verdict
			continue
		}
		if n.Decided != "" {
			if e, ok := pilotEstimate(s, c.Expect, pilot, d.PilotAlpha); ok {
				c.Ours, c.Verdict, c.Rounds, c.Look = e, judge(e, c.Expect), d.Pilot, LookPilot
				switch {
				case n.Scale == OnRate:
					c.Events, c.Hours = exposed(pilot, c.Variant, c.Step, c.Metric)
				case IsShare(c.Expect):
					c.Events, c.Trials = shareOf(pilot, c.Variant, c.Step, c.Metric)
				}
			}
			continue
		}
		if IsShare(c.Expect) { // the exact interval over every round, at the last look's alpha (a design stored before shares had their own scale too)
			c.Events, c.Trials = shareOf(samples, c.Variant, c.Step, c.Metric)
			c.Ours = stats.ShareEstimateAt(c.Events, c.Trials, d.final())
			c.Verdict, c.Rounds, c.Look = judge(c.Ours, c.Expect), c.Trials, LookFinal
			if c.Verdict == Inconclusive {
				c.Needs = n.Rounds
			}
			continue
		}
		if n.Scale == OnRate { // Garwood's interval over every round, at the last look's alpha
			c.Ours = stats.RateEstimateAt(c.Events, c.Hours, d.final())
			c.Verdict, c.Rounds, c.Look = judge(c.Ours, c.Expect), n.Rounds, LookFinal
			if c.Verdict == Inconclusive {
				c.Needs = n.Rounds
			}
			continue
		}
		scale, v := perRound(s, c.Expect, samples)
		if scale != n.Scale || len(v) < d.Pilot {
			continue
		}
		e := stats.TwoStageEstimate(v, d.Pilot, n.SD, d.final())
		if scale == OnLogRatio {
			e = e.Exp()
		}
		c.Ours, c.Verdict = e, judge(e, c.Expect)
		c.Rounds, c.Look = len(v), LookFinal
		if c.Verdict == Inconclusive {
			c.Needs = n.Rounds
		}
	}
	return out
}

// Says is the design in a sentence, for the log and the finding.
func (d Design) Says() string {
	var need []string
	decided := 0
	for _, n := range d.Needs {
		w := "–" // the pilot could not size it
		switch {
		case n.Decided != "":
			w, decided = "decided", decided+1
		case n.Rounds > 0:
			w = strconv.Itoa(n.Rounds)
		}
		need = append(need, w)
	}
	if len(need) == 0 {
		return fmt.Sprintf("two-look design: no claim to size, the pilot's %d rounds are all", d.Pilot)
	}
	if d.PilotAlpha == 0 { // stored before there were two looks
		s := fmt.Sprintf("two-stage design: the pilot's %d rounds size the checks at %s rounds (%.0f %% from a bound, power %.0f %%); %d rounds in all",
			d.Pilot, strings.Join(need, ", "), 100*d.Margin, 100*d.Power, d.Rounds)
		return s + d.budgetSaid()
	}
	s := fmt.Sprintf("two-look design: the pilot's %d rounds, judged alone at %s %% a bound, decide %d of %d checks", d.Pilot, trimPercent(d.PilotAlpha), decided, len(d.Needs))
	if decided < len(d.Needs) {
		s += fmt.Sprintf("; its spread sizes the others at %.0f %% from a bound, power %.0f %% (rounds each check needs: %s)", 100*d.Margin, 100*d.Power, strings.Join(need, ", "))
	}
	return s + fmt.Sprintf("; %d rounds in all", d.Rounds) + d.budgetSaid()
}

func (d Design) budgetSaid() string {
	if d.Budget <= 0 {
		return ""
	}
	return fmt.Sprintf(" (the budget of %v allows %d at %v a round)", d.Budget, d.Affordable, d.RoundTime.Round(time.Second))
}

// Judged says how the design's checks are judged, for the finding and
// the report.
func (d Design) Judged() string {
	if d.PilotAlpha == 0 {
		return "each claim is judged by Stein's interval (its width from the pilot's spread), so the rounds added keep a false \"reproduced\" at 5 % per bound"
	}
	return fmt.Sprintf("a claim the pilot decided keeps the pilot's verdict and %s %% interval; each other is judged over every round by Stein's interval (its width from the pilot's spread) at %s %% a bound, so the two looks together keep a false \"reproduced\" at %s %% per bound",
		trimPercent(1-2*d.PilotAlpha), trimPercent(d.final()), trimPercent(d.PilotAlpha+d.final()))
}

// trimPercent is a share in percent, without a needless decimal.
func trimPercent(v float64) string {
	p := 100 * v
	if math.Abs(p-math.Round(p)) < 1e-9 {
		return strconv.Itoa(int(math.Round(p)))
	}
	return strconv.FormatFloat(p, 'f', 1, 64)
}
