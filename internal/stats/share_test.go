package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// binomTail is P(X ≥ k) for X binomial(n, p), summed term by term: a
// second way to the same figures, for the test.
func binomTail(k, n int, p float64) float64 {
	sum := 0.0
	for i := k; i <= n; i++ {
		lc, _ := math.Lgamma(float64(n + 1))
		li, _ := math.Lgamma(float64(i + 1))
		lr, _ := math.Lgamma(float64(n - i + 1))
		sum += math.Exp(lc - li - lr + float64(i)*math.Log(p) + float64(n-i)*math.Log1p(-p))
	}
	return sum
}

func TestShareEstimate(t *testing.T) {
	for _, c := range []struct {
		k, n   int
		lo, hi float64
		what   string
	}{
		{0, 3, 0, 1 - math.Pow(0.05, 1.0/3), "none of 3: up to 1 − 0.05^(1/3)"},
		{3, 3, math.Pow(0.05, 1.0/3), 1, "all of 3"},
		{0, 10, 0, 1 - math.Pow(0.05, 0.1), "none of 10"},
		{1, 1, 0.05, 1, "one of one"},
	} {
		e := ShareEstimate(c.k, c.n)
		if !e.Known || math.Abs(e.Lo-c.lo) > 1e-9 || math.Abs(e.Hi-c.hi) > 1e-9 || e.Level != Level {
			t.Errorf("%s: %+v, want %.6f–%.6f", c.what, e, c.lo, c.hi)
		}
	}
	// every bound is where the binomial tail is Alpha, summed term by term
	for _, c := range [][2]int{{16, 21}, {1, 20}, {7, 9}, {50, 200}, {199, 200}} {
		k, n := c[0], c[1]
		e := ShareEstimate(k, n)
		if got := binomTail(k, n, e.Lo); math.Abs(got-Alpha) > 1e-9 {
			t.Errorf("%d of %d: P(X ≥ %d | %.6f) = %.9f, want %g", k, n, k, e.Lo, got, Alpha)
		}
		if got := 1 - binomTail(k+1, n, e.Hi); math.Abs(got-Alpha) > 1e-9 {
			t.Errorf("%d of %d: P(X ≤ %d | %.6f) = %.9f, want %g", k, n, k, e.Hi, got, Alpha)
		}
	}
	if e := ShareEstimate(0, 0); e.Known {
		t.Errorf("no trial: %+v", e)
	}
	if e := ShareEstimateAt(16, 20, PilotAlpha); math.Abs(e.Level-0.98) > 1e-12 || !(e.Lo < ShareEstimate(16, 20).Lo) {
		t.Errorf("at the pilot's alpha: %+v", e)
	}
}

// A share on its bound is judged inside it at most Alpha of the time,
// whatever the number of trials (the interval is exact, so conservative).
func TestShareErrorRate(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 5))
	const trials = 20000
	for _, c := range []struct {
		p float64
		n int
	}{{0.1, 3}, {0.1, 20}, {0.5, 10}, {0.5, 3}, {0.1, 100}} {
		lo := c.p
		verdict := make([]string, c.n+1) // each count's, worked out once
		for k := range verdict {
			verdict[k] = ShareEstimate(k, c.n).Against(&lo, nil)
		}
		inside := 0
		for range trials {
			k := 0
			for range c.n {
				if r.Float64() < c.p {
					k++
				}
			}
			if verdict[k] == Inside {
				inside++
			}
		}
		if share := float64(inside) / trials; share > Alpha+3*math.Sqrt(Alpha*(1-Alpha)/trials) {
			t.Errorf("p %.1f, %d trials: judged above its bound in %.2f %% of runs, want at most %.0f %%", c.p, c.n, 100*share, 100*Alpha)
		}
	}
}
