package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRateEstimate: Garwood's interval at known points — no event in an
// hour allows up to −ln(0.05) = 2.996 an hour; one event, 0.0513 to 4.744;
// ten, 5.426 to 16.96 (the χ² tables' values) — and none in 23 hours is
// still not told from 0.13 an hour.
func TestRateEstimate(t *testing.T) {
	for _, c := range []struct {
		k      int
		t      float64
		lo, hi float64
	}{
		{0, 1, 0, 2.9957}, {1, 1, 0.05129, 4.7439}, {10, 1, 5.4254, 16.962}, {0, 23, 0, 2.9957 / 23}, {4, 2, 1.3663 / 2, 9.1535 / 2},
	} {
		e := RateEstimate(c.k, c.t)
		if !e.Known || math.Abs(e.Lo-c.lo) > 1e-3*math.Max(1, c.lo) || math.Abs(e.Hi-c.hi) > 1e-3*math.Max(1, c.hi) || e.Value != float64(c.k)/c.t {
			t.Errorf("%d in %g h: %+v, want %g–%g", c.k, c.t, e, c.lo, c.hi)
		}
	}
	if e := RateEstimate(3, 0); e.Known {
		t.Errorf("no exposure: %+v", e)
	}
}

// TestRateCoverage: over Poisson draws at several true rates, the 90 %
// interval holds the rate at least 90 % of the time (Garwood's interval
// is conservative), and each bound is missed at most 5 % of the time.
func TestRateCoverage(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, rate := range []float64{0.2, 1, 3, 12} {
		const trials, hours = 4000, 1.5
		below, above := 0, 0
		for range trials {
			e := RateEstimate(poisson(r, rate*hours), hours)
			switch {
			case e.Hi < rate:
				below++
			case e.Lo > rate:
				above++
			}
		}
		if b, a := float64(below)/trials, float64(above)/trials; b > 0.06 || a > 0.06 {
			t.Errorf("rate %g: the interval below it %.3f, above it %.3f of the time (each at most 0.05)", rate, b, a)
		}
	}
}

func poisson(r *rand.Rand, mean float64) int {
	l, k, p := math.Exp(-mean), 0, 1.0
	for {
		p *= r.Float64()
		if p <= l {
			return k
		}
		k++
	}
}
