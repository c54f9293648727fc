package stats

import "math"

// RateEstimate is a rate of rare events, events in exposure (hours of a
// fault schedule, say), with Garwood's exact Poisson interval at Level:
// the rates under which as few (or as many) events would come at most
// Alpha of the time. Unlike a mean over rounds it is never a point when
// no event came: none in T hours still allows up to −ln(Alpha)/T (3.0/T
// at 95 %), so "none seen" is a bound, not a zero. Known needs exposure.
func RateEstimate(events int, exposure float64) Estimate {
	return RateEstimateAt(events, exposure, Alpha)
}

// RateEstimateAt is RateEstimate with each bound one-sided at alpha
// (Level 1 − 2·alpha).
func RateEstimateAt(events int, exposure, alpha float64) Estimate {
	e := Estimate{Level: 1 - 2*alpha, Known: exposure > 0 && events >= 0}
	if !e.Known {
		return e
	}
	k := float64(events)
	e.Value = k / exposure
	if events > 0 {
		e.Lo = gammaQuantile(k, alpha) / exposure
	}
	e.Hi = gammaQuantile(k+1, 1-alpha) / exposure
	return e
}

// gammaQuantile is the x at which the regularised lower incomplete gamma
// function P(a, x) reaches p (the p-quantile of a Gamma(a, 1)), by
// bisection: P is increasing in x.
func gammaQuantile(a, p float64) float64 {
	lo, hi := 0.0, a+1
	for gammaP(a, hi) < p {
		hi *= 2
	}
	for range 200 {
		mid := (lo + hi) / 2
		if gammaP(a, mid) < p {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo < 1e-12*math.Max(1, hi) {
			break
		}
	}
	return (lo + hi) / 2
}

// gammaP is the regularised lower incomplete gamma function P(a, x): by
// its series below a+1, else as 1 − Q by Q's continued fraction
// (modified Lentz).
func gammaP(a, x float64) float64 {
	if x <= 0 {
		return 0
	}
	lg, _ := math.Lgamma(a)
	front := math.Exp(-x + a*math.Log(x) - lg)
	if x < a+1 {
		sum, term := 1/a, 1/a
		for n := 1; n < 1000; n++ {
			term *= x / (a + float64(n))
			sum += term
			if math.Abs(term) < math.Abs(sum)*1e-15 {
				break
			}
		}
		return sum * front
	}
	const tiny = 1e-300
	b := x + 1 - a
	c, d := 1/tiny, 1/b
	h := d
	for i := 1; i < 1000; i++ {
		an := -float64(i) * (float64(i) - a)
		b += 2
		d = an*d + b
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = b + an/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-15 {
			break
		}
	}
	return 1 - front*h
}
