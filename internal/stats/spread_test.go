package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestSpreadOf(t *testing.T) {
	s := SpreadOf([]float64{10, 12, 11, 50, 9})
	if s.N != 5 || s.Median != 11 || s.Min != 9 || s.Max != 50 || s.Mean != 18.4 {
		t.Errorf("spread %+v", s)
	}
	// five values cannot give 95 %: the range, and what it gives
	if s.Lo != 9 || s.Hi != 50 || s.Coverage != 0.9375 || s.IntervalLabel() != "range of 5 (a 93.8 % interval)" {
		t.Errorf("interval of 5: %+v %q", s, s.IntervalLabel())
	}
	for _, c := range []struct {
		n     int
		cov   float64
		label string
	}{{2, 0.5, "range of 2 (a 50 % interval)"}, {3, 0.75, "range of 3 (a 75 % interval)"}, {4, 0.875, "range of 4 (a 87.5 % interval)"}} {
		v := make([]float64, c.n)
		for i := range v {
			v[i] = float64(i)
		}
		if sp := SpreadOf(v); sp.Coverage != c.cov || sp.Lo != 0 || sp.Hi != float64(c.n-1) || sp.IntervalLabel() != c.label {
			t.Errorf("%d values: %+v %q", c.n, sp, sp.IntervalLabel())
		}
	}
	// ten values: x(2)..x(9), 97.9 %
	ten := SpreadOf([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	if ten.Lo != 2 || ten.Hi != 9 || math.Abs(ten.Coverage-(1-2*11.0/1024)) > 1e-12 || ten.IntervalLabel() != "97 % interval" {
		t.Errorf("ten values: %+v %q", ten, ten.IntervalLabel())
	}
	if one := SpreadOf([]float64{3}); one.Lo != 3 || one.Hi != 3 || one.Median != 3 || one.IntervalLabel() != "" {
		t.Errorf("one value: %+v", one)
	}
	if none := SpreadOf(nil); none.N != 0 {
		t.Errorf("no value: %+v", none)
	}
}

// TestIntervalCoverage: the stated coverage is what the interval gives
// over many draws (any distribution: a skewed one here).
func TestIntervalCoverage(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	median := math.Ln2 // of an exponential with rate 1
	for _, n := range []int{3, 5, 10} {
		hits, trials := 0, 20000
		var cov float64
		for range trials {
			v := make([]float64, n)
			for i := range v {
				v[i] = r.ExpFloat64()
			}
			s := SpreadOf(v)
			cov = s.Coverage
			if s.Lo <= median && median <= s.Hi {
				hits++
			}
		}
		if got := float64(hits) / float64(trials); math.Abs(got-cov) > 0.015 {
			t.Errorf("%d values: the interval held the median %.3f of the time, it says %.3f", n, got, cov)
		}
	}
}

func TestWelch(t *testing.T) {
	// p-values checked by integrating Student's t density numerically:
	// t = -1.2247 on 4 df, p = 0.2879; t = -2.8947 on 5.52 df, p = 0.03029
	if p := Welch(SpreadOf([]float64{10, 11, 12}), SpreadOf([]float64{11, 12, 13})); math.Abs(p-0.2879) > 5e-4 {
		t.Errorf("p %.4f, want 0.2879", p)
	}
	if p := Welch(SpreadOf([]float64{1, 2, 3, 4}), SpreadOf([]float64{3, 5, 7, 9, 11})); math.Abs(p-0.03029) > 5e-4 {
		t.Errorf("p %.5f, want 0.03029", p)
	}
	if p := Welch(SpreadOf([]float64{5, 5}), SpreadOf([]float64{5, 5})); p != 1 {
		t.Errorf("no spread, same: %v", p)
	}
	if p := Welch(SpreadOf([]float64{5, 5}), SpreadOf([]float64{6, 6})); p != 0 {
		t.Errorf("no spread, different: %v", p)
	}
}

// TestCompareNoise: two set-ups that do not differ are called different
// at most at the stated rate (Alpha), at the round counts studies use
// (Welch's test is conservative with few rounds: about 2 % at 2, 3 % at
// 3); a real difference is found.
func TestCompareNoise(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	draw := func(n int, mu float64) Spread {
		v := make([]float64, n)
		for i := range v {
			v[i] = mu + 10*r.NormFloat64()
		}
		return SpreadOf(v)
	}
	for _, n := range []int{2, 3, 5, 10} {
		called, trials := 0, 20000
		for range trials {
			if d := Compare(draw(n, 1000), draw(n, 1000)); !d.WithinNoise {
				called++
			}
		}
		rate := float64(called) / float64(trials)
		if rate > Alpha+0.01 || (n >= 5 && rate < Alpha-0.015) {
			t.Errorf("%d rounds: identical set-ups called different %.3f of the time, want at most %.2f", n, rate, Alpha)
		}
		t.Logf("%d rounds: identical set-ups called different %.3f of the time", n, rate)
	}
	found := 0
	for range 1000 {
		if d := Compare(draw(3, 1100), draw(3, 1000)); !d.WithinNoise {
			found++
		}
	}
	if found < 950 {
		t.Errorf("a 10 %% difference at 3 rounds with 1 %% noise found %d of 1000 times", found)
	}
}

func TestCompare(t *testing.T) {
	base := SpreadOf([]float64{100, 102, 98, 101, 99})
	same := SpreadOf([]float64{101, 99, 103, 100, 98})
	far := SpreadOf([]float64{150, 152, 149, 151, 148})
	if d := Compare(same, base); !d.WithinNoise || d.Percent < -2 || d.Percent > 2 {
		t.Errorf("same: %+v", d)
	}
	if d := Compare(far, base); d.WithinNoise || d.Percent < 49 || d.Percent > 51 || d.P > 1e-6 {
		t.Errorf("far: %+v", d)
	}
	if d := Compare(SpreadOf([]float64{100}), SpreadOf([]float64{100.5})); !d.Unknown || d.WithinNoise {
		t.Errorf("single runs: noise cannot be told: %+v", d)
	}
	if d := Compare(far, Spread{}); d.Percent != 0 {
		t.Errorf("zero baseline: %+v", d)
	}
}
