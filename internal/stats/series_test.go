package stats

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// ar1 is an autocorrelated series around mu: each sample phi of the last
// one's deviation plus fresh noise (a benchmark's seconds behave so).
func ar1(r *rand.Rand, n int, mu, phi, sigma float64) []float64 {
	out := make([]float64, n)
	x := 0.0
	for i := range out {
		x = phi*x + r.NormFloat64()*sigma
		out[i] = mu + x
	}
	return out
}

// TestBatchMeansCoverage: over autocorrelated series the batch-means
// interval holds the true mean about as often as its level says, where
// the naive interval (samples taken as independent) falls far short.
func TestBatchMeansCoverage(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const trials, n, mu = 2000, 600, 1000.0
	batch, naive := 0, 0
	for i := 0; i < trials; i++ {
		s := ar1(r, n, mu, 0.8, 20)
		if e := BatchMeans(s, 0.95); e.Known && e.Lo <= mu && mu <= e.Hi {
			batch++
		}
		half := tQuantile(float64(n-1), 0.025) * sd(s) / math.Sqrt(n)
		if m := mean(s); m-half <= mu && mu <= m+half {
			naive++
		}
	}
	bc, nc := float64(batch)/trials, float64(naive)/trials
	if bc < 0.90 || bc > 0.99 {
		t.Errorf("batch means: %.3f of intervals hold the mean, want about 0.95", bc)
	}
	if nc > 0.75 {
		t.Errorf("the naive interval holds the mean %.3f of the time; the test's series are not autocorrelated enough", nc)
	}
	t.Logf("coverage at 95 %%: batch means %.3f, naive %.3f", bc, nc)
}

func TestBatchMeansKnownSeries(t *testing.T) {
	// 20 batches of 5: the batch means are 1 … 20; their mean 10.5, sd 5.916
	var s []float64
	for b := 1; b <= 20; b++ {
		for j := 0; j < 5; j++ {
			s = append(s, float64(b))
		}
	}
	e := BatchMeans(s, 0.95)
	half := 2.093 * 5.916 / math.Sqrt(20) // t(0.975, 19)
	if !e.Known || math.Abs(e.Value-10.5) > 1e-9 || math.Abs(e.Hi-e.Value-half) > 0.01 {
		t.Errorf("got %+v, want 10.5 ± %.3f", e, half)
	}
	if e := BatchMeans([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.95); e.Known || e.Value != 5.5 {
		t.Errorf("a 10-second series cannot give 4 batches of 4: %+v", e)
	}
	if e := BatchMeans(make([]float64, 100), 0.95); !e.Known || e.Lo != 0 || e.Hi != 0 {
		t.Errorf("a constant series: %+v", e)
	}
}

// TestSteadyState: a ramp of 15 s before a steady level is cut at about
// 15 s; a steady series is not cut; a series still climbing at its end
// never settled.
func TestSteadyState(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var warm []float64
	for i := 0; i < 15; i++ {
		warm = append(warm, 200+float64(i)*50+r.NormFloat64()*10)
	}
	warm = append(warm, ar1(r, 105, 1000, 0.5, 10)...)
	if cut, ok := SteadyState(warm); !ok || cut < 10 || cut > 20 {
		t.Errorf("a 15 s ramp: cut %d (settled %v), want about 15", cut, ok)
	}
	if cut, ok := SteadyState(ar1(r, 120, 1000, 0.5, 10)); !ok || cut > 10 {
		t.Errorf("a steady series: cut %d (settled %v), want about 0", cut, ok)
	}
	var climbing []float64
	for i := 0; i < 120; i++ {
		climbing = append(climbing, float64(i)*10+r.NormFloat64())
	}
	if _, ok := SteadyState(climbing); ok {
		t.Error("a series climbing to its end is called settled")
	}
	if cut, ok := SteadyState([]float64{1, 2, 3}); cut != 0 || !ok {
		t.Errorf("too short to judge: cut %d, settled %v", cut, ok)
	}
}

func TestFigureOf(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	ramp := func(level float64) []float64 {
		var s []float64
		for i := 0; i < 15; i++ {
			s = append(s, level*0.2+float64(i)*level*0.05)
		}
		return append(s, ar1(r, 105, level, 0.5, level/100)...)
	}
	one := FigureOf([][]float64{ramp(1000)}, 0.95)
	if !one.Known || !one.Settled || one.WarmupCut[0] < 10 || one.Lo > 1000 || one.Hi < 1000 || !strings.HasPrefix(one.Method, "batch means over") {
		t.Errorf("one run: %+v", one)
	}
	three := FigureOf([][]float64{ramp(1000), ramp(1010), ramp(990)}, 0.95)
	if !three.Known || three.Method != "t over 3 runs" || three.Lo > 1000 || three.Hi < 1000 {
		t.Errorf("three runs: %+v", three)
	}
	faster := FigureOf([][]float64{ramp(1300)}, 0.95)
	if pct, noise, known := faster.Versus(one); pct < 25 || pct > 35 || noise || !known {
		t.Errorf("30 %% faster: %+.1f %%, within noise %v", pct, noise)
	}
	same := FigureOf([][]float64{ramp(1000)}, 0.95)
	if _, noise, _ := same.Versus(one); !noise {
		t.Errorf("the same load judged a difference: %+v against %+v", same, one)
	}
	if f := FigureOf([][]float64{{1, 2, 3}}, 0.95); f.Known {
		t.Errorf("3 s give no interval: %+v", f)
	}
	if _, _, known := faster.Versus(FigureOf([][]float64{{1, 2, 3}}, 0.95)); known {
		t.Error("a change against a figure without an interval is judged")
	}
}

// TestSteadyStateRates: over 500 autocorrelated 60 s series, a steady one
// is called unsettled rarely, and a 10 s ramp is cut between 5 and 20 s
// almost always.
func TestSteadyStateRates(t *testing.T) {
	unsettled, misjudged, cuts := 0, 0, 0
	for seed := uint64(0); seed < 500; seed++ {
		r := rand.New(rand.NewPCG(seed, 9))
		if _, ok := SteadyState(ar1(r, 60, 1000, 0.6, 30)); !ok {
			unsettled++
		}
		var s []float64
		for i := 0; i < 10; i++ {
			s = append(s, 300+float64(i)*70)
		}
		c, ok := SteadyState(append(s, ar1(r, 50, 1000, 0.6, 30)...))
		if !ok || c < 5 || c > 20 {
			misjudged++
		}
		cuts += c
	}
	if unsettled > 40 || misjudged > 60 {
		t.Errorf("steady series called unsettled %d of 500 times (want ≤ 40); 10 s ramps misjudged %d of 500 (want ≤ 60)", unsettled, misjudged)
	}
	t.Logf("steady called unsettled %d/500; ramp misjudged %d/500; mean cut %.1f s", unsettled, misjudged, float64(cuts)/500)
	for n := 20; n <= 29; n++ { // 4 or 5 batches: no slope to judge
		if _, ok := SteadyState(make([]float64, n)); !ok {
			t.Errorf("%d constant samples called unsettled", n)
		}
	}
}

func TestChangeText(t *testing.T) {
	pct, yes, no := 4.25, true, false
	for _, c := range []struct {
		pct   *float64
		noise *bool
		want  string
	}{{nil, nil, "-"}, {&pct, nil, "+4.2 % (noise unknown)"}, {&pct, &yes, "+4.2 % (within noise)"}, {&pct, &no, "+4.2 %"}} {
		if got := ChangeText(c.pct, c.noise); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
}
