package drill

import (
	"strings"
	"testing"
	"time"
)

// TestCarried (the labs review's finding 6): writes that fail, pile up or
// wait long before the fault refuse the drill; a lab that keeps up, or too
// few writes to judge, does not.
func TestCarried(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	ops := func(n int, lat time.Duration, failEvery int, pendingFrom int) []Op {
		var out []Op
		for i := 0; i < n; i++ {
			sent := t0.Add(time.Duration(i) * 10 * time.Millisecond)
			o := Op{Write: true, ID: int64(i), Sent: sent, Done: sent.Add(lat)}
			if failEvery > 0 && i%failEvery == 0 {
				o.Code = "1040"
			}
			if pendingFrom > 0 && i >= pendingFrom {
				o.Done = time.Time{}
			}
			out = append(out, o)
		}
		return out
	}
	from, to, now := t0, t0.Add(2*time.Second), t0.Add(2500*time.Millisecond)
	for _, c := range []struct {
		name    string
		ops     []Op
		carried bool
		why     string
	}{
		{"keeps up", ops(200, 5*time.Millisecond, 0, 0), true, ""},
		{"connections refused", ops(200, 5*time.Millisecond, 20, 0), false, "10 of its 200 writes failed or were not back within a second"},
		{"a backlog", ops(200, 5*time.Millisecond, 0, 100), false, "not back within a second"},
		{"slow", ops(200, 700*time.Millisecond, 0, 0), false, "99th percentile of latency was 700 ms"},
		{"too few to judge", ops(10, 700*time.Millisecond, 2, 0), true, ""},
	} {
		got := Carried(c.ops, from, to, now)
		if got.Carried != c.carried || !strings.Contains(got.Why, c.why) {
			t.Errorf("%s: %+v", c.name, got)
		}
	}
	c := Carried(ops(200, 700*time.Millisecond, 0, 0), from, to, now)
	if r := c.Refusal(100, 3*time.Second, "Nothing was broken"); !strings.Contains(r, "--rate: the lab cannot carry 100 writes/s before any fault: in the 3s before it") || !strings.Contains(r, "--rate 65") {
		t.Errorf("%s", r)
	}
}
