package stats

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Spread is what repeated measurements of one figure say: their median,
// range and a bootstrap confidence interval of the median.
type Spread struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	Lo     float64 `json:"ci_lo"` // 95 % bootstrap interval of the median
	Hi     float64 `json:"ci_hi"`
}

// bootstrapResamples is how many resamples an interval is drawn from.
const bootstrapResamples = 2000

// SpreadOf summarises values. The interval is the 2.5th to 97.5th
// percentile of the medians of resamples (with replacement) of the values,
// drawn from a fixed seed so a summary is reproducible; with one value it
// is that value, and with few it is wide, as it should be.
func SpreadOf(values []float64) Spread {
	if len(values) == 0 {
		return Spread{}
	}
	s := slices.Clone(values)
	slices.Sort(s)
	out := Spread{N: len(s), Median: Median(s), Min: s[0], Max: s[len(s)-1]}
	r := rand.New(rand.NewPCG(1, uint64(len(s))))
	medians := make([]float64, bootstrapResamples)
	sample := make([]float64, len(s))
	for i := range medians {
		for j := range sample {
			sample[j] = s[r.IntN(len(s))]
		}
		medians[i] = Median(sample)
	}
	slices.Sort(medians)
	out.Lo, out.Hi = Percentile(medians, 2.5), Percentile(medians, 97.5)
	return out
}

// Delta is a figure against a baseline's: the change of the medians in
// percent, and whether it is within noise (the two intervals overlap).
type Delta struct {
	Percent     float64 `json:"percent"`
	WithinNoise bool    `json:"within_noise"`
	// Unknown: one side has a single measurement, so there is no interval
	// to tell noise by.
	Unknown bool `json:"noise_unknown,omitempty"`
}

// Compare compares a spread with a baseline's (a zero baseline median
// gives no percentage).
func Compare(s, base Spread) Delta {
	d := Delta{WithinNoise: s.Lo <= base.Hi && base.Lo <= s.Hi, Unknown: s.N < 2 || base.N < 2}
	if d.Unknown {
		d.WithinNoise = false
	}
	if base.Median != 0 {
		d.Percent = 100 * (s.Median - base.Median) / math.Abs(base.Median)
	}
	return d
}
