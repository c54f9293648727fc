// Package stats holds the one percentile and the one median rule every
// figure hadrill reports is computed with.
package stats

import (
	"cmp"
	"slices"
)

// Rank is the 1-based nearest rank of percentile p (0..100) among n
// ordered values: the smallest rank whose share of values is at least p
// (ceil(p/100 × n), at least 1). p50 of 4 values is the 2nd, p99 of 100
// values the 99th.
func Rank(n int, p float64) int {
	r := int(float64(n)*p/100 + 0.999999)
	return min(max(r, 1), n)
}

// Percentile is the nearest-rank percentile of sorted values (zero when
// there are none).
func Percentile[T cmp.Ordered](sorted []T, p float64) T {
	var zero T
	if len(sorted) == 0 {
		return zero
	}
	return sorted[Rank(len(sorted), p)-1]
}

// Median is the middle value, or the mean of the two middle values of an
// even count (zero when there are none).
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// MedianIndex is which of n ordered runs stands for them when a whole run
// must be kept (it cannot be averaged): the middle one, the upper middle
// of an even count.
func MedianIndex(n int) int { return n / 2 }
