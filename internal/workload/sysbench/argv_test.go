package sysbench

import (
	"slices"
	"strings"
	"testing"
)

// TestEventsArgv: a run ended by a count of transactions (sysbench 0.5's
// --max-requests) passes --events, its time still the cap; its warm-up is
// by time alone.
func TestEventsArgv(t *testing.T) {
	p := Params{Workload: "oltp_read_write", Tables: 1, TableSize: 10000, Threads: []int{64}, Time: 120, Runs: 1, RandType: "special", Interval: 1, Warmup: 5, Events: 1000}
	tg := Target{Host: "h", Config: "c", Port: 3306}
	argv := Argv(p, tg, 64, "run")
	if !slices.Contains(argv, "--events=1000") || !slices.Contains(argv, "--time=120") || !slices.Contains(argv, "--rand-type=special") {
		t.Errorf("argv: %v", argv)
	}
	if w := strings.Join(WarmupArgv(p, tg, 64), " "); strings.Contains(w, "--events") || !strings.Contains(w, "--time=5") {
		t.Errorf("warm-up: %s", w)
	}
	if slices.Contains(Argv(Params{Workload: "oltp_read_write", Time: 10, Interval: 1, RandType: "special"}, tg, 1, "run"), "--events=0") {
		t.Error("a timed run passes --events")
	}
	bad := Params{Workload: "oltp_read_write", Tables: 1, TableSize: 1, Time: 1, Interval: 1, Runs: 1, RandType: "special", Events: -1}
	if got := strings.Join(bad.Check(), "\n"); !strings.Contains(got, "--events: expected 0 (by time) to 1000000000 transactions, got -1") {
		t.Errorf("bad events: %s", got)
	}
}
