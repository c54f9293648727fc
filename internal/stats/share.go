package stats

// ShareEstimate is a share of trials, k of n (drills that lost
// acknowledged work, say), with the Clopper–Pearson exact interval at
// Level: the shares under which as few (or as many) of the n would go
// that way at most Alpha of the time. Unlike a t-interval over the trials'
// 0s and 1s it never shrinks to a point when every trial went one way:
// none of 3 still allows a share up to 0.63, none of 10 up to 0.26; and it
// stays within 0 to 1. Known needs a trial.
func ShareEstimate(k, n int) Estimate { return ShareEstimateAt(k, n, Alpha) }

// ShareEstimateAt is ShareEstimate with each bound one-sided at alpha
// (Level 1 − 2·alpha).
func ShareEstimateAt(k, n int, alpha float64) Estimate {
	e := Estimate{Level: 1 - 2*alpha, Known: n > 0 && k >= 0 && k <= n}
	if !e.Known {
		return e
	}
	kf, nf := float64(k), float64(n)
	e.Value, e.Lo, e.Hi = kf/nf, 0, 1
	// P(X ≥ k | p) = I_p(k, n−k+1) and P(X ≤ k | p) = 1 − I_p(k+1, n−k)
	if k > 0 {
		e.Lo = betaQuantile(kf, nf-kf+1, alpha)
	}
	if k < n {
		e.Hi = betaQuantile(kf+1, nf-kf, 1-alpha)
	}
	return e
}

// betaQuantile is the x at which the regularised incomplete beta
// function I_x(a, b) reaches p, by bisection: I is increasing in x.
func betaQuantile(a, b, p float64) float64 {
	lo, hi := 0.0, 1.0
	for range 200 {
		mid := (lo + hi) / 2
		if incBeta(a, b, mid) < p {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo < 1e-13 {
			break
		}
	}
	return (lo + hi) / 2
}
