package stats

import (
	"fmt"
	"math"
	"slices"
	"sync"
)

// Spread is what repeated measurements of one figure say: their median,
// range, mean and standard deviation, and an interval of the median whose
// confidence is stated (Coverage), never assumed.
type Spread struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	Mean   float64 `json:"mean"`
	SD     float64 `json:"sd"` // sample standard deviation (0 with one value)
	// Lo and Hi are order statistics of the values: the narrowest pair
	// holding the median with at least 95 % confidence, or, with fewer
	// than 6 values, which cannot give 95 %, the whole range. Coverage is
	// their exact confidence (distribution-free: a median lies below each
	// value with probability ½): 0.5 for the range of 2 values, 0.75 for
	// 3, 0.875 for 4, 0.9375 for 5.
	Lo       float64 `json:"ci_lo"`
	Hi       float64 `json:"ci_hi"`
	Coverage float64 `json:"ci_coverage"`
}

// Confidence is the coverage an interval of the median is chosen for.
const Confidence = 0.95

// SpreadOf summarises values.
func SpreadOf(values []float64) Spread {
	if len(values) == 0 {
		return Spread{}
	}
	s := slices.Clone(values)
	slices.Sort(s)
	n := len(s)
	out := Spread{N: n, Median: Median(s), Min: s[0], Max: s[n-1], Mean: mean(s), SD: sd(s)}
	k, cov := medianRank(n)
	out.Lo, out.Hi, out.Coverage = s[k-1], s[n-k], cov
	return out
}

// medianRank is the largest k whose interval [x(k), x(n+1-k)] of n ordered
// values holds the median with at least Confidence, and that confidence:
// 1 - 2·P(Binomial(n, ½) ≤ k-1). With too few values for Confidence, k is
// 1 (the range) with what the range gives.
func medianRank(n int) (int, float64) {
	if n == 1 {
		return 1, 0
	}
	cov := func(k int) float64 { return 1 - 2*binomCDF(n, k-1) }
	k := 1
	for k+1 <= (n+1)/2 && cov(k+1) >= Confidence {
		k++
	}
	return k, cov(k)
}

// binomCDF is P(Binomial(n, ½) ≤ k).
func binomCDF(n, k int) float64 {
	p, term := 0.0, math.Pow(0.5, float64(n))
	for i := 0; i <= k; i++ {
		p += term
		term = term * float64(n-i) / float64(i+1)
	}
	return p
}

func mean(v []float64) float64 {
	var sum float64
	for _, x := range v {
		sum += x
	}
	return sum / float64(len(v))
}

func sd(v []float64) float64 {
	if len(v) < 2 {
		return 0
	}
	m, ss := mean(v), 0.0
	for _, x := range v {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(len(v)-1))
}

// IntervalLabel says what a spread's interval is: "95 % interval" when it
// reaches Confidence, else "range of 3 (a 75 % interval)"; "" for one
// value.
func (s Spread) IntervalLabel() string {
	switch {
	case s.N < 2:
		return ""
	case s.Coverage >= Confidence:
		return fmt.Sprintf("%.0f %% interval", math.Floor(100*s.Coverage))
	}
	return fmt.Sprintf("range of %d (a %s %% interval)", s.N, trim(100*s.Coverage))
}

func trim(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// Alpha is the false-positive rate of Differ: the share of comparisons of
// two set-ups that do not differ that it calls different (for round-to-round
// noise that is roughly normal; a noise test holds it).
const Alpha = 0.05

// Delta is a figure against a baseline's: the change of the medians in
// percent, and whether it is within noise, decided by Welch's t-test on
// the two sets of values at Alpha (P is its two-sided p-value).
type Delta struct {
	Percent     float64 `json:"percent"`
	WithinNoise bool    `json:"within_noise"`
	P           float64 `json:"p"`
	// Unknown: one side has a single measurement, so there is no spread to
	// tell noise by.
	Unknown bool `json:"noise_unknown,omitempty"`
	// ZeroBase: the baseline's median is 0 and the figure's is not, so
	// there is no percentage (Percent is 0).
	ZeroBase bool `json:"zero_base,omitempty"`
}

// Compare compares a spread with a baseline's (a zero baseline median
// gives no percentage).
func Compare(s, base Spread) Delta {
	d := Delta{Unknown: s.N < 2 || base.N < 2}
	if !d.Unknown {
		d.P = Welch(s, base)
		d.WithinNoise = d.P >= Alpha
	}
	if base.Median != 0 {
		d.Percent = 100 * (s.Median - base.Median) / math.Abs(base.Median)
	} else {
		d.ZeroBase = s.Median != 0
	}
	return d
}

// Welch is the two-sided p-value of Welch's t-test of two spreads' means
// (each of at least two values). Two sets without any spread are the same
// (1) or different (0).
func Welch(a, b Spread) float64 {
	va, vb := a.SD*a.SD/float64(a.N), b.SD*b.SD/float64(b.N)
	if va+vb == 0 {
		if a.Mean == b.Mean {
			return 1
		}
		return 0
	}
	t := (a.Mean - b.Mean) / math.Sqrt(va+vb)
	df := (va + vb) * (va + vb) / (va*va/float64(a.N-1) + vb*vb/float64(b.N-1))
	return incBeta(df/2, 0.5, df/(df+t*t))
}

// incBeta is the regularised incomplete beta function I_x(a, b), by its
// continued fraction (modified Lentz), using the symmetry
// I_x(a, b) = 1 - I_{1-x}(b, a) where the fraction converges slowly.
func incBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	case x > (a+1)/(a+b+2):
		return 1 - incBeta(b, a, 1-x)
	}
	lga, _ := math.Lgamma(a)
	lgb, _ := math.Lgamma(b)
	lgab, _ := math.Lgamma(a + b)
	front := math.Exp(lgab-lga-lgb+a*math.Log(x)+b*math.Log(1-x)) / a
	const tiny = 1e-300
	f, c, d := 1.0, 1.0, 0.0
	for i := 0; i <= 20000; i++ { // about √max(a, b) terms: a share of a million rounds needs some thousands
		m := float64(i / 2)
		var num float64
		switch {
		case i == 0:
			num = 1
		case i%2 == 0:
			num = m * (b - m) * x / ((a + 2*m - 1) * (a + 2*m))
		default:
			num = -(a + m) * (a + b + m) * x / ((a + 2*m) * (a + 2*m + 1))
		}
		d = 1 + num*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		d = 1 / d
		c = 1 + num/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		f *= c * d
		if math.Abs(1-c*d) < 1e-12 {
			break
		}
	}
	return front * (f - 1)
}

// tQuantile is Student's t with df degrees of freedom exceeded with
// probability p (one-sided, 0 < p < ½): found by bisection on the
// two-sided p-value I_{df/(df+t²)}(df/2, ½) = 2p.
func tQuantile(df, p float64) float64 {
	key := [2]float64{df, p}
	if q, ok := quantiles.Load(key); ok {
		return q.(float64)
	}
	q := tSearch(df, p)
	quantiles.Store(key, q)
	return q
}

// quantiles remembers tQuantile's answers (a bisection of 200 steps each).
var quantiles sync.Map

func tSearch(df, p float64) float64 {
	lo, hi := 0.0, 1e6
	for range 200 {
		mid := (lo + hi) / 2
		if incBeta(df/2, 0.5, df/(df+mid*mid)) > 2*p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// Estimate is a figure judged against a claim: its point (a mean, or a
// ratio of two means) and an interval of it at Level confidence. Known is
// false when a side has a single value: no spread, so no interval.
type Estimate struct {
	Value float64 `json:"value"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	Level float64 `json:"level"`
	Known bool    `json:"known"`
	// Unbounded: the interval has no finite end (a ratio whose
	// denominator's mean is not told from 0); Lo and Hi are the value.
	Unbounded bool `json:"unbounded,omitempty"`
}

// Level is the confidence of an Estimate's interval: 90 %, so each of a
// claim's bounds is tested one-sided at Alpha (two one-sided tests).
const Level = 1 - 2*Alpha

// MeanEstimate is a spread's mean with its t-interval at Level.
func MeanEstimate(s Spread) Estimate { return MeanEstimateAt(s, Alpha) }

// MeanEstimateAt is a spread's mean with its t-interval, each bound
// one-sided at alpha (Level 1 − 2·alpha).
func MeanEstimateAt(s Spread, alpha float64) Estimate {
	e := Estimate{Value: s.Mean, Lo: s.Mean, Hi: s.Mean, Level: 1 - 2*alpha, Known: s.N >= 2}
	if e.Known {
		h := tQuantile(float64(s.N-1), alpha) * s.SD / math.Sqrt(float64(s.N))
		e.Lo, e.Hi = s.Mean-h, s.Mean+h
	}
	return e
}

// RatioEstimate is a's mean over b's with Fieller's interval at Level
// (independent samples, each side its own variance, Welch's degrees of
// freedom at the ratio): every ρ for which ā − ρ·b̄ is not told from 0,
// (ā − ρb̄)² ≤ t²(va + ρ²vb). Unlike the difference's interval over b̄ it
// carries b's own noise, so it is not symmetric and a ratio of positive
// figures keeps a positive bound whenever both means are told from 0.
// When b̄ itself is not told from 0 (t²vb ≥ b̄²) the set is unbounded:
// Unbounded, and no bound can be judged.
func RatioEstimate(a, b Spread) Estimate {
	e := Estimate{Value: a.Mean / b.Mean, Level: Level, Known: a.N >= 2 && b.N >= 2}
	e.Lo, e.Hi = e.Value, e.Value
	if !e.Known {
		return e
	}
	va, vb := a.SD*a.SD/float64(a.N), b.SD*b.SD/float64(b.N)
	if va+vb == 0 {
		return e
	}
	r := e.Value
	df := (va + r*r*vb) * (va + r*r*vb) / (va*va/float64(a.N-1) + r*r*r*r*vb*vb/float64(b.N-1))
	t := tQuantile(df, Alpha)
	den := b.Mean*b.Mean - t*t*vb
	disc := a.Mean*a.Mean*vb + b.Mean*b.Mean*va - t*t*va*vb
	if den <= 0 || disc < 0 {
		e.Unbounded = true
		return e
	}
	h := t * math.Sqrt(disc)
	e.Lo, e.Hi = (a.Mean*b.Mean-h)/den, (a.Mean*b.Mean+h)/den
	return e
}

// Verdicts of an estimate against a claim's bounds.
const (
	Inside       = "inside"        // the whole interval within the bounds
	Outside      = "outside"       // the whole interval out of them
	Straddles    = "straddles"     // the interval crosses a bound: noise cannot tell
	NoiseUnknown = "noise_unknown" // one value a side: no interval
)

// Against places an estimate's interval against bounds (nil: unbounded).
func (e Estimate) Against(lo, hi *float64) string {
	if !e.Known {
		return NoiseUnknown
	}
	if e.Unbounded {
		return Straddles
	}
	in := func(v float64) bool { return (lo == nil || v >= *lo) && (hi == nil || v <= *hi) }
	switch {
	case in(e.Lo) && in(e.Hi):
		return Inside
	case (lo != nil && e.Hi < *lo) || (hi != nil && e.Lo > *hi):
		return Outside
	}
	return Straddles
}
