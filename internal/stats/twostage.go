package stats

import "math"

// A study's claim is judged by an interval; with a few rounds the interval
// is often wider than the claim's distance from its bound, and the verdict
// cannot decide. Running rounds until it decides and then judging with the
// ordinary interval would bias it (every look is one more chance to cross a
// bound by noise). Stein's two-stage procedure does not: a pilot of n0
// rounds estimates the spread s0; the number of rounds N is computed from
// s0 alone; the interval of the mean of all N rounds is
//
//	mean ± t(n0-1, α) · s0 / √N
//
// and (mean - μ)·√N/s0 is Student's t with n0-1 degrees of freedom whatever
// N was: for normal rounds the mean is independent of the spread, so
// choosing N from the spread does not move the mean.
//
// Two looks. A pilot whose interval already clears the bound need not be
// followed by more rounds; but stopping when the pilot decides and going on
// when it does not is a look too. So a design spends its error in two
// parts: the pilot alone is judged at PilotAlpha (its ordinary t-interval),
// and, when it does not decide, every round at the end with Stein's
// interval at FinalAlpha. A false verdict needs one of the two looks to be
// false: at most PilotAlpha + FinalAlpha = Alpha per bound (Bonferroni,
// whatever the looks' correlation).

// Power is the chance a two-stage design is sized for: a claim whose true
// figure lies Margin beyond its bound decides with at least this chance.
const Power = 0.8

// Margin is the distance from a bound (relative: 5 % of the bound, or of
// a ratio's log) below which a claim is allowed to stay undecided: noise
// that small is not what a published claim is about.
const Margin = 0.05

// PilotAlpha is the error a two-look design spends on its pilot's look,
// FinalAlpha what is left for its last look.
const (
	PilotAlpha = 0.01
	FinalAlpha = Alpha - PilotAlpha
)

// TwoStageRounds is how many rounds in all a figure needs, after a pilot
// of n0 rounds with standard deviation s0, for a one-sided test at alpha
// to find a true difference of delta from the bound with chance Power:
// N = ⌈((t(n0-1, alpha) + t(n0-1, 1-Power)) · s0 / delta)²⌉, at least n0.
// 0 when the pilot cannot size it (fewer than 2 rounds, or delta ≤ 0).
func TwoStageRounds(n0 int, s0, delta, alpha float64) int {
	if n0 < 2 || !(delta > 0) || math.IsNaN(s0) || math.IsInf(s0, 0) {
		return 0
	}
	df := float64(n0 - 1)
	k := (tQuantile(df, alpha) + tQuantile(df, 1-Power)) * s0 / delta
	n := int(math.Ceil(k * k))
	return max(n, n0)
}

// TwoStageEstimate is the mean of every round's value (the pilot's
// included) with Stein's interval, each bound one-sided at alpha (Level
// 1 − 2·alpha): the half-width uses the pilot's n0 and s0, not the values'
// own spread.
func TwoStageEstimate(values []float64, n0 int, s0, alpha float64) Estimate {
	m := mean(values)
	e := Estimate{Value: m, Lo: m, Hi: m, Level: 1 - 2*alpha, Known: n0 >= 2 && len(values) >= n0}
	if e.Known {
		h := tQuantile(float64(n0-1), alpha) * s0 / math.Sqrt(float64(len(values)))
		e.Lo, e.Hi = m-h, m+h
	}
	return e
}

// Exp maps an estimate made on logarithms (a ratio's, from paired rounds)
// back: its value and bounds exponentiated.
func (e Estimate) Exp() Estimate {
	e.Value, e.Lo, e.Hi = math.Exp(e.Value), math.Exp(e.Lo), math.Exp(e.Hi)
	return e
}
