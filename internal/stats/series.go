package stats

import (
	"fmt"
	"math"
	"slices"
)

// A per-second series (a benchmark's TPS second by second) is not a sample
// of independent values: one busy second is followed by another. Its
// mean's interval must account for that, and its first seconds (a cold
// buffer pool, connections opening) are not the steady state the run is
// meant to measure. These two functions are the one definition hadrill
// uses for both.

// MinBatches is the fewest batches a series' interval is computed from;
// MaxBatches the most (fewer, longer batches are less correlated).
const (
	MinBatches = 4
	MaxBatches = 20
	// MinBatch is the shortest batch, in samples: seconds next to each
	// other in a benchmark are correlated over a few seconds.
	MinBatch = 4
)

// BatchMeans is a series' mean with an interval at level that accounts for
// the correlation of neighbouring samples: the series is cut into k
// batches of equal length (as many as MaxBatches, each at least MinBatch
// long), their means are nearly independent, and Student's t over the k
// batch means gives the interval. Samples left over at the end are left
// out. A series too short for MinBatches batches gives an Estimate that is
// not Known (its mean only).
func BatchMeans(series []float64, level float64) Estimate {
	n := len(series)
	if n == 0 {
		return Estimate{}
	}
	k := min(MaxBatches, n/MinBatch)
	if k < MinBatches {
		return Estimate{Value: mean(series), Lo: mean(series), Hi: mean(series), Level: level}
	}
	b := n / k
	means := make([]float64, k)
	for i := range means {
		means[i] = mean(series[i*b : (i+1)*b])
	}
	m := mean(means)
	half := tQuantile(float64(k-1), (1-level)/2) * sd(means) / math.Sqrt(float64(k))
	return Estimate{Value: m, Lo: m - half, Hi: m + half, Level: level, Known: true}
}

// SteadyState is where a series' warm-up ends: the number of leading
// samples to cut. The series is taken in batches of 5 samples; its second
// half is the reference (the steady level: the batch means' mean and
// spread there), and the cut falls after the last batch of the first half
// more than 4 spreads away from that level. settled is false when the
// second half still moves: its batch means' least-squares slope is more
// than 4 standard errors from flat (a series climbing to its end has no
// steady state to report). Measured on autocorrelated series of 60 s
// (unit test): a 10 s ramp is cut at 10.7 s on average; a steady series
// is called unsettled about 4 % of the time.
func SteadyState(series []float64) (cut int, settled bool) {
	const m = 5
	k := len(series) / m
	if k < 4 {
		return 0, true
	}
	bm := make([]float64, k)
	for i := range bm {
		bm[i] = mean(series[i*m : (i+1)*m])
	}
	ref := bm[k/2:]
	mu, spread := mean(ref), sd(ref)
	n := float64(len(ref))
	var sxy, sxx float64
	for i, v := range ref {
		x := float64(i) - (n-1)/2
		sxy += x * (v - mu)
		sxx += x * x
	}
	slope := sxy / sxx
	var rss float64
	for i, v := range ref {
		r := v - mu - slope*(float64(i)-(n-1)/2)
		rss += r * r
	}
	settled = true
	if n >= 3 { // a slope needs 3 points to have an error
		significant := math.Abs(slope) > 4*math.Sqrt(rss/(n-2))/math.Sqrt(sxx)
		settled = !significant || math.Abs(slope)*n <= 0.05*math.Abs(mu) // a drift under 5 % over the half is steady enough
	}
	last := 0
	for j := 0; j < k/2; j++ {
		if math.Abs(bm[j]-mu) > 4*spread {
			last = j + 1
		}
	}
	return last * m, settled
}

// Figure is one figure of a benchmark point (a thread count's TPS)
// measured as one or more runs of per-second samples: each run's warm-up
// cut at its measured steady state, then the mean with an interval at
// Level: over the runs' means (Student's t) with several runs, by batch
// means over the one run's seconds otherwise. Median is the median of the
// runs' steady means, or of the one run's steady seconds.
type Figure struct {
	Median float64 `json:"median"`
	Mean   float64 `json:"mean"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
	Level  float64 `json:"level"`
	Known  bool    `json:"known"` // false: too little to give an interval
	// Method says how the interval was found ("batch means over 57 s",
	// "t over 3 runs").
	Method string `json:"method"`
	// WarmupCut is the seconds cut at the start of each run; Settled is
	// false when some run never reached a steady state (the figure is then
	// the run's whole mean, and says so).
	WarmupCut []int `json:"warmup_cut_s"`
	Settled   bool  `json:"settled"`
}

// FigureOf summarises runs of per-second samples (each run's seconds in
// order) at level.
func FigureOf(runs [][]float64, level float64) Figure {
	f := Figure{Level: level, Settled: true}
	var means, steady []float64 // steady: the last run's seconds after its cut
	for _, s := range runs {
		if len(s) == 0 {
			continue
		}
		cut, ok := SteadyState(s)
		if !ok {
			cut, f.Settled = 0, false
		}
		f.WarmupCut = append(f.WarmupCut, cut)
		means = append(means, mean(s[cut:]))
		steady = s[cut:]
	}
	switch {
	case len(means) == 0:
		return f
	case len(means) >= 2:
		m := mean(means)
		half := tQuantile(float64(len(means)-1), (1-level)/2) * sd(means) / math.Sqrt(float64(len(means)))
		f.Mean, f.Lo, f.Hi, f.Known = m, m-half, m+half, true
		f.Median, f.Method = Median(sorted(means)), fmt.Sprintf("t over %d runs", len(means))
	default: // one run with seconds
		e := BatchMeans(steady, level)
		f.Mean, f.Lo, f.Hi, f.Known = e.Value, e.Lo, e.Hi, e.Known
		f.Median, f.Method = Median(sorted(steady)), fmt.Sprintf("batch means over %d s", len(steady))
		if !e.Known {
			f.Method = fmt.Sprintf("%d s: too few for an interval", len(steady))
		}
	}
	return f
}

// Versus is f's change against a baseline's, in percent of the
// baseline's mean, and whether their intervals overlap (the change is
// then within noise). known is false when either has no interval: the
// noise is unknown, and the change is neither within it nor out of it.
func (f Figure) Versus(base Figure) (pct float64, withinNoise, known bool) {
	if base.Mean != 0 {
		pct = 100 * (f.Mean - base.Mean) / base.Mean
	}
	if !f.Known || !base.Known {
		return pct, false, false
	}
	return pct, f.Lo <= base.Hi && base.Lo <= f.Hi, true
}

func sorted(v []float64) []float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s
}

// ChangeText is a change against a baseline as a table cell: "-" without
// one, "+4.2 %" beyond noise, "+1.0 % (within noise)", "+3.0 % (noise
// unknown)" when either side has no interval (withinNoise nil).
func ChangeText(pct *float64, withinNoise *bool) string {
	switch {
	case pct == nil:
		return "-"
	case withinNoise == nil:
		return fmt.Sprintf("%+.1f %% (noise unknown)", *pct)
	case *withinNoise:
		return fmt.Sprintf("%+.1f %% (within noise)", *pct)
	}
	return fmt.Sprintf("%+.1f %%", *pct)
}
