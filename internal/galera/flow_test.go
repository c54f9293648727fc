package galera

import (
	"testing"
	"time"
)

// TestHold (the labs review's finding 2): a node that asks for flow
// control and does not drain (a full disk) holds the cluster back after
// HoldLimit; one whose queue drains (a busy node), or that stops asking,
// does not.
func TestHold(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 3, 52, 23, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	for _, c := range []struct {
		name  string
		seen  []Flow
		every float64
		holds bool
	}{
		{"stuck: asks, queue 29 throughout", []Flow{{true, true, 29}, {true, true, 29}, {true, true, 29}, {true, true, 29}}, 2, true},
		{"stuck but not for long", []Flow{{true, true, 29}, {true, true, 29}}, 2, false},
		{"busy: asks, drains, asks", []Flow{{true, true, 29}, {true, true, 20}, {true, true, 18}, {true, true, 17}}, 2, false},
		{"stops asking", []Flow{{true, true, 29}, {true, true, 29}, {false, false, 3}, {true, true, 20}}, 2, false},
		{"another node asks: this one does not hold it", []Flow{{false, true, 0}, {false, true, 0}, {false, true, 0}, {false, true, 0}}, 2, false},
	} {
		var h Hold
		var last Flow
		var now time.Time
		for i, f := range c.seen {
			now, last = at(float64(i)*c.every), f
			h.Observe(f, now)
		}
		if got := HoldsBack(last, h.For(now)) != ""; got != c.holds {
			t.Errorf("%s: holds back %v (for %v)", c.name, got, h.For(now))
		}
	}
	f := FlowOf(map[string]string{"wsrep_flow_control_requested": "true", "wsrep_flow_control_active": "true", "wsrep_local_recv_queue": "29"})
	if f != (Flow{true, true, 29}) {
		t.Errorf("FlowOf: %+v", f)
	}
	if got := HoldsBack(f, 12*time.Second); got != "it has kept the cluster's replication paused for 12s (flow control: 29 write sets wait to be applied here and do not drain): every member's commits wait for it" {
		t.Errorf("%q", got)
	}
}
