package facts

import "testing"

// The loop's work is fixed: its result never changes (a change to the
// loop would change what every recorded speed means), and it is measured.
func TestCoreSpeed(t *testing.T) {
	if got := fixedLoop(); got != loopResult {
		t.Errorf("the fixed loop's result is %#x, want %#x: its work changed", got, uint64(loopResult))
	}
	s := CoreSpeed()
	if !(s.CPUMs > 0) || s.WallMs < s.CPUMs*0.9 {
		t.Errorf("%+v: want a positive CPU time, the wall time at least about it", s)
	}
	t.Logf("%+v", s)
}
