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

// TestNoAutoIncArgv: client-generated ids are asked of every step, the
// dataset's preparation included (the tables are made without
// AUTO_INCREMENT), and never by default.
func TestNoAutoIncArgv(t *testing.T) {
	tg := Target{Host: "h", Config: "c", Port: 3306}
	p := Params{Workload: "oltp_read_write", Tables: 1, TableSize: 10, Time: 10, Interval: 1, RandType: "special", NoAutoInc: true}
	for _, step := range []string{"prepare", "run"} {
		if !slices.Contains(Argv(p, tg, 1, step), "--auto_inc=off") {
			t.Errorf("%s: no --auto_inc=off in %v", step, Argv(p, tg, 1, step))
		}
	}
	p.NoAutoInc = false
	if slices.ContainsFunc(Argv(p, tg, 1, "prepare"), func(a string) bool { return strings.HasPrefix(a, "--auto_inc") }) {
		t.Error("--auto_inc given by default")
	}
}
