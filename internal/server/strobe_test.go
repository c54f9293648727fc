package server

import (
	"testing"
	"time"
)

// TestStrobe: the file round-trips; the clock is at the offset in the
// first period and every other one, at the real time in between; a file
// that is not a strobe's (or a period under a second) is refused.
func TestStrobe(t *testing.T) {
	start := time.Unix(1764282000, 250e6)
	s := Strobe{Spec: "-12", Period: 2 * time.Second, Start: start}
	back, ok := ParseStrobe(s.Text())
	if !ok || back.Spec != "-12" || back.Period != 2*time.Second || !back.Start.Equal(start) {
		t.Fatalf("round trip of %q: %+v %v", s.Text(), back, ok)
	}
	for _, c := range []struct {
		after time.Duration
		want  string
	}{{0, "-12"}, {1999 * time.Millisecond, "-12"}, {2 * time.Second, "+0"}, {3 * time.Second, "+0"}, {4 * time.Second, "-12"}, {-time.Second, "-12"}} {
		if got := s.At(start.Add(c.after)); got != c.want {
			t.Errorf("at %v: %q, want %q", c.after, got, c.want)
		}
	}
	for _, bad := range []string{"", "+5 2", "+5 1 1764282000", "+5 x 1", "+5 2 y"} {
		if _, ok := ParseStrobe(bad); ok {
			t.Errorf("%q read as a strobe", bad)
		}
	}
}
