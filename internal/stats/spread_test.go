package stats

import "testing"

func TestSpreadOf(t *testing.T) {
	s := SpreadOf([]float64{10, 12, 11, 50, 9})
	if s.N != 5 || s.Median != 11 || s.Min != 9 || s.Max != 50 {
		t.Errorf("spread %+v", s)
	}
	if s.Lo > s.Median || s.Hi < s.Median || s.Lo < 9 || s.Hi > 50 {
		t.Errorf("interval %.1f–%.1f does not hold the median %.1f within the values", s.Lo, s.Hi, s.Median)
	}
	if again := SpreadOf([]float64{10, 12, 11, 50, 9}); again != s {
		t.Errorf("not reproducible: %+v then %+v", s, again)
	}
	if one := SpreadOf([]float64{3}); one.Lo != 3 || one.Hi != 3 || one.Median != 3 {
		t.Errorf("one value: %+v", one)
	}
	if none := SpreadOf(nil); none.N != 0 {
		t.Errorf("no value: %+v", none)
	}
}

func TestCompare(t *testing.T) {
	base := SpreadOf([]float64{100, 102, 98, 101, 99})
	same := SpreadOf([]float64{101, 99, 103, 100, 98})
	far := SpreadOf([]float64{150, 152, 149, 151, 148})
	if d := Compare(same, base); !d.WithinNoise || d.Percent < -2 || d.Percent > 2 {
		t.Errorf("same: %+v", d)
	}
	if d := Compare(far, base); d.WithinNoise || d.Percent < 49 || d.Percent > 51 {
		t.Errorf("far: %+v", d)
	}
	if d := Compare(SpreadOf([]float64{100}), SpreadOf([]float64{100.5})); !d.Unknown || d.WithinNoise {
		t.Errorf("single runs: noise cannot be told: %+v", d)
	}
	if d := Compare(far, Spread{}); d.Percent != 0 {
		t.Errorf("zero baseline: %+v", d)
	}
}
