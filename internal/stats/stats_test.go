package stats

import "testing"

func TestRules(t *testing.T) {
	for _, c := range []struct {
		n    int
		p    float64
		want int
	}{{4, 50, 2}, {5, 50, 3}, {100, 99, 99}, {100, 100, 100}, {1, 99, 1}, {10, 0, 1}, {3, 95, 3}, {1000, 99.9, 999}} {
		if got := Rank(c.n, c.p); got != c.want {
			t.Errorf("Rank(%d, %v) = %d, want %d", c.n, c.p, got, c.want)
		}
	}
	if Percentile([]int{}, 50) != 0 || Percentile([]float64{1, 2, 3, 4}, 50) != 2 || Percentile([]float64{1, 2, 3, 4}, 51) != 3 {
		t.Error("percentile")
	}
	if Median(nil) != 0 || Median([]float64{3, 1, 2}) != 2 || Median([]float64{4, 1, 3, 2}) != 2.5 {
		t.Error("median")
	}
	if MedianIndex(3) != 1 || MedianIndex(4) != 2 {
		t.Error("median index")
	}
}
