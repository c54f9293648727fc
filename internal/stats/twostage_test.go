package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestTwoStageRounds(t *testing.T) {
	for _, c := range []struct {
		n0          int
		s0, delta   float64
		want        int
		description string
	}{
		{3, 0, 1, 3, "no spread: the pilot decides"},
		{3, 1, 1, 16, "(2.920+1.061)² = 15.8"},
		{5, 1, 1, 10, "(2.132+0.941)² = 9.4"},
		{3, 2, 1, 64, "twice the spread, four times the rounds"},
		{1, 1, 1, 0, "one round cannot size"},
		{3, 1, 0, 0, "no margin"},
		{3, math.NaN(), 1, 0, "NaN spread"},
	} {
		if got := TwoStageRounds(c.n0, c.s0, c.delta, Alpha); got != c.want {
			t.Errorf("%s: TwoStageRounds(%d, %g, %g) = %d, want %d", c.description, c.n0, c.s0, c.delta, got, c.want)
		}
	}
}

// trial runs one two-look design on normal rounds of mean mu and
// standard deviation sd, a pilot of n0 and at most limit rounds, for the
// claim "at least bound": its verdict against the bound and the rounds
// it ran. The pilot decides alone at PilotAlpha; else the rounds it sizes
// are judged by Stein's interval at FinalAlpha.
func trial(r *rand.Rand, mu, sd, bound float64, n0, limit int) (string, int) {
	draw := func() float64 { return mu + sd*r.NormFloat64() }
	var v []float64
	for range n0 {
		v = append(v, draw())
	}
	lo := bound
	pilot := SpreadOf(v)
	if got := MeanEstimateAt(pilot, PilotAlpha).Against(&lo, nil); got != Straddles {
		return got, n0
	}
	n := min(max(TwoStageRounds(n0, pilot.SD, Margin*bound, FinalAlpha), n0), limit)
	for len(v) < n {
		v = append(v, draw())
	}
	return TwoStageEstimate(v, n0, pilot.SD, FinalAlpha).Against(&lo, nil), n
}

// The false "reproduced" rate of the two-look design, at the worst case
// (the true figure exactly on the bound), stays at Alpha whatever the
// spread and whether or not a budget cuts the rounds short; and a claim a
// margin beyond its bound decides with about Power.
func TestTwoStageErrorRate(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 43))
	const trials = 20000
	// 3 standard errors of a binomial share at Alpha over trials
	tolerance := 3 * math.Sqrt(Alpha*(1-Alpha)/trials)
	for _, c := range []struct {
		sd    float64
		n0    int
		limit int
	}{{2, 3, 1000}, {8, 3, 1000}, {8, 3, 12}, {20, 5, 1000}, {20, 5, 8}} {
		inside := 0
		for range trials {
			if got, _ := trial(r, 100, c.sd, 100, c.n0, c.limit); got == Inside {
				inside++
			}
		}
		share := float64(inside) / trials
		t.Logf("sd %g, pilot %d, at most %d rounds: %.2f %% judged reproduced on the bound", c.sd, c.n0, c.limit, 100*share)
		if share > Alpha+tolerance {
			t.Errorf("sd %g, pilot %d, at most %d rounds: a figure on its bound judged reproduced in %.2f %% of trials, want at most %.0f %%",
				c.sd, c.n0, c.limit, 100*share, 100*Alpha)
		}
	}
	for _, sd := range []float64{2, 8} {
		decided := 0
		for range trials / 4 {
			if got, _ := trial(r, 100*(1+Margin), sd, 100, 3, 1000); got == Inside {
				decided++
			}
		}
		share := float64(decided) / (trials / 4)
		t.Logf("sd %g: %.1f %% decided a margin beyond the bound", sd, 100*share)
		if share < Power-0.03 {
			t.Errorf("sd %g: a figure %.0f %% beyond its bound decided in %.1f %% of trials, want about %.0f %%", sd, 100*Margin, 100*share, 100*Power)
		}
	}
}

// What the two-stage design prevents: adding rounds one at a time and
// judging after each with the ordinary interval, stopping as soon as it
// decides, says "reproduced" for a figure on its bound far more often
// than Alpha. (This is why a study's rounds are not simply run until the
// verdict decides.)
func TestPeekingInflatesTheError(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 3))
	const trials = 4000
	inside := 0
	lo := 100.0
	for range trials {
		var v []float64
		for len(v) < 40 {
			v = append(v, 100+8*r.NormFloat64())
			if len(v) < 3 {
				continue
			}
			if got := MeanEstimate(SpreadOf(v)).Against(&lo, nil); got != Straddles {
				if got == Inside {
					inside++
				}
				break
			}
		}
	}
	share := float64(inside) / trials
	t.Logf("peeking: %.1f %% judged reproduced on the bound", 100*share)
	if share < 2*Alpha {
		t.Errorf("peeking after every round: %.1f %% false 'reproduced', expected well above %.0f %%", 100*share, 100*Alpha)
	}
}

func TestTwoStageEstimate(t *testing.T) {
	e := TwoStageEstimate([]float64{9, 10, 11, 10}, 3, 1, Alpha)
	h := 2.920 / 2
	if math.Abs(e.Value-10) > 1e-9 || math.Abs(e.Hi-e.Value-h) > 0.002 || !e.Known {
		t.Errorf("%+v, want 10 ± %.3f", e, h)
	}
	if e := TwoStageEstimate([]float64{9, 10}, 3, 1, Alpha); e.Known {
		t.Errorf("fewer values than the pilot: %+v", e)
	}
	if e := (Estimate{Value: 0, Lo: -1, Hi: 1}).Exp(); math.Abs(e.Value-1) > 1e-12 || math.Abs(e.Lo-1/math.E) > 1e-12 {
		t.Errorf("exp: %+v", e)
	}
}

// A pilot that already decides ends the design: a figure far beyond its
// bound (a share of 0.76 against at least 0.1, say) runs no more rounds,
// where sizing it at the margin would ask for thousands; and at the final
// look the half-width is FinalAlpha's, a little wider than Alpha's.
func TestTwoLooks(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for range 200 {
		got, n := trial(r, 100*1.5, 8, 100, 5, 100000)
		if got != Inside || n != 5 {
			t.Fatalf("50 %% beyond the bound with 8 %% noise: %s after %d rounds, want reproduced by the pilot's 5", got, n)
		}
	}
	if n := TwoStageRounds(20, 0.44, Margin*0.1, FinalAlpha); n < 10000 {
		t.Errorf("a share's pilot sized at the margin: %d rounds", n)
	}
	a, f := TwoStageEstimate([]float64{9, 10, 11, 10}, 3, 1, Alpha), TwoStageEstimate([]float64{9, 10, 11, 10}, 3, 1, FinalAlpha)
	if !(f.Hi > a.Hi) || math.Abs(f.Level-0.92) > 1e-12 {
		t.Errorf("final look %+v against one look %+v", f, a)
	}
	if p := MeanEstimateAt(SpreadOf([]float64{9, 10, 11}), PilotAlpha); math.Abs(p.Level-0.98) > 1e-12 || !(p.Hi-p.Value > 4.01 && p.Hi-p.Value < 4.03) {
		t.Errorf("the pilot's look: %+v, want 10 ± t(2, 1 %%)/√3 = 4.02", p)
	}
}
