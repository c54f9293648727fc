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
		{"stuck: asks, queue 29 throughout", []Flow{{true, true, 29, 0}, {true, true, 29, 0}, {true, true, 29, 0}, {true, true, 29, 0}}, 2, true},
		{"stuck, committing nothing", []Flow{{true, true, 29, 900}, {true, true, 31, 900}, {true, true, 35, 900}, {true, true, 40, 900}}, 2, true},
		{"stuck but not for long", []Flow{{true, true, 29, 0}, {true, true, 29, 0}}, 2, false},
		{"busy: asks, drains, asks", []Flow{{true, true, 29, 0}, {true, true, 20, 0}, {true, true, 18, 0}, {true, true, 17, 0}}, 2, false},
		// a saturated node (256 threads on 1-CPU, 500-IOPS nodes): its queue
		// hovers above where it started, yet it commits between the pauses
		{"saturated: asks throughout, its queue never below 40, committing", []Flow{{true, true, 40, 1000}, {true, true, 60, 1012}, {true, true, 48, 1030}, {true, true, 55, 1041}}, 2, false},
		{"stops asking", []Flow{{true, true, 29, 0}, {true, true, 29, 0}, {false, false, 3, 0}, {true, true, 20, 0}}, 2, false},
		{"another node asks: this one does not hold it", []Flow{{false, true, 0, 0}, {false, true, 0, 0}, {false, true, 0, 0}, {false, true, 0, 0}}, 2, false},
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
	f := FlowOf(map[string]string{"wsrep_flow_control_requested": "true", "wsrep_flow_control_active": "true", "wsrep_local_recv_queue": "29", "wsrep_last_committed": "1234"})
	if f != (Flow{true, true, 29, 1234}) {
		t.Errorf("FlowOf: %+v", f)
	}
	if got := HoldsBack(f, 12*time.Second); got != "it has kept the cluster's replication paused for 12s, committing nothing (flow control: 29 write sets wait to be applied here and do not drain): every member's commits wait for it" {
		t.Errorf("%q", got)
	}
}
