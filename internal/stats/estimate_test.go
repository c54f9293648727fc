package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestTQuantile(t *testing.T) {
	for _, c := range []struct{ df, p, want float64 }{{1, 0.05, 6.314}, {2, 0.05, 2.920}, {4, 0.05, 2.132}, {9, 0.025, 2.262}, {1000, 0.05, 1.646}} {
		if got := tQuantile(c.df, c.p); math.Abs(got-c.want) > 0.002 {
			t.Errorf("t(%g, %g) = %.4f, want %.3f", c.df, c.p, got, c.want)
		}
	}
}

func ptr(v float64) *float64 { return &v }

func TestAgainst(t *testing.T) {
	e := Estimate{Value: 1.2, Lo: 1.1, Hi: 1.3, Known: true}
	for _, c := range []struct {
		lo, hi *float64
		want   string
	}{{ptr(1.05), nil, Inside}, {ptr(1.15), nil, Straddles}, {ptr(1.4), nil, Outside}, {nil, ptr(1.0), Outside}, {ptr(1), ptr(1.3), Inside}, {nil, ptr(1.25), Straddles}} {
		if got := e.Against(c.lo, c.hi); got != c.want {
			t.Errorf("[1.1, 1.3] against %v..%v: %s, want %s", c.lo, c.hi, got, c.want)
		}
	}
	if got := (Estimate{Value: 1, Lo: 1, Hi: 1}).Against(ptr(0.5), nil); got != NoiseUnknown {
		t.Errorf("one value: %s", got)
	}
}

// A claim of a difference (at least 5 % more) is never inside its bounds
// for two sets drawn from the same distribution more often than Alpha.
func TestRatioEstimateNoise(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	inside := 0
	const trials = 4000
	for range trials {
		var a, b []float64
		for range 3 {
			a = append(a, 100+10*r.NormFloat64())
			b = append(b, 100+10*r.NormFloat64())
		}
		if RatioEstimate(SpreadOf(a), SpreadOf(b)).Against(ptr(1.0), nil) == Inside {
			inside++
		}
	}
	if share := float64(inside) / trials; share > Alpha*1.3 {
		t.Errorf("noise judged 'at least as fast' in %.1f %% of trials, want at most %.0f %%", 100*share, 100*Alpha)
	}
}

func TestRatioEstimate(t *testing.T) {
	e := RatioEstimate(SpreadOf([]float64{200, 210, 190}), SpreadOf([]float64{100, 105, 95}))
	if math.Abs(e.Value-2) > 1e-9 || e.Lo >= 2 || e.Hi <= 2 || e.Lo < 1.5 || !e.Known {
		t.Errorf("ratio of 200±10 to 100±5: %+v", e)
	}
	m := MeanEstimate(SpreadOf([]float64{101, 100, 102}))
	if math.Abs(m.Value-101) > 1e-9 || math.Abs((m.Hi-m.Lo)/2-2.920/math.Sqrt(3)) > 0.01 {
		t.Errorf("mean of 100, 101, 102: %+v", m)
	}
}

// Fieller's interval holds the true ratio at its level even when the
// denominator is as noisy as the numerator, and a ratio of positive means
// told from 0 never gets a negative bound (the difference's interval over
// b's mean gave caching's storage IOs −0.34–1.13).
func TestRatioEstimateFieller(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const trials = 4000
	held, negative := 0, 0
	for range trials {
		var a, b []float64
		for range 3 {
			a = append(a, 30+12*r.NormFloat64())
			b = append(b, 20+8*r.NormFloat64())
		}
		e := RatioEstimate(SpreadOf(a), SpreadOf(b))
		if e.Unbounded || (e.Lo <= 1.5 && 1.5 <= e.Hi) {
			held++
		}
		if !e.Unbounded && e.Lo < 0 && MeanEstimate(SpreadOf(a)).Lo > 0 {
			negative++
		}
	}
	if share := float64(held) / trials; share < Level-0.02 {
		t.Errorf("the interval held the true ratio 1.5 in %.1f %% of trials, want about %.0f %%", 100*share, 100*Level)
	}
	if negative > 0 {
		t.Errorf("%d intervals of a ratio of positive means went below 0", negative)
	}
	// A denominator not told from 0: no bound can be judged.
	e := RatioEstimate(SpreadOf([]float64{10, 11, 12}), SpreadOf([]float64{-1, 1, 0.5}))
	if !e.Unbounded || e.Against(ptr(1.0), nil) != Straddles {
		t.Errorf("denominator 0.17 ± 1: %+v, %s", e, e.Against(ptr(1.0), nil))
	}
}
