package workload

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/sqlfake"
	"github.com/hadrill/hadrill/internal/workload/workloadtest"
)

// TestIdleWatch: a run is stalled only when servers answered and none of
// them worked for the limit; work anywhere, a server answering for the
// first time or one restarted (its counters back to small) resets the
// idle time; readings nobody answered decide nothing.
func TestIdleWatch(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	type reading struct {
		at      int
		r       map[string]uint64
		idle    int
		stalled bool
	}
	for _, c := range []struct {
		name     string
		readings []reading
	}{
		{"no work for the limit", []reading{{0, map[string]uint64{"db1": 5}, 0, false}, {200, map[string]uint64{"db1": 5}, 200, false}, {300, map[string]uint64{"db1": 5}, 300, true}}},
		{"work on one server of two", []reading{{0, map[string]uint64{"db1": 5, "db2": 7}, 0, false}, {200, map[string]uint64{"db1": 5, "db2": 8}, 0, false}, {450, map[string]uint64{"db1": 5, "db2": 8}, 250, false}, {500, map[string]uint64{"db1": 5, "db2": 8}, 300, true}}},
		{"a server restarted", []reading{{0, map[string]uint64{"db1": 5000}, 0, false}, {299, map[string]uint64{"db1": 12}, 0, false}, {400, map[string]uint64{"db1": 12}, 101, false}}},
		{"nobody answers", []reading{{0, map[string]uint64{}, 0, false}, {300, map[string]uint64{}, 300, false}, {900, nil, 900, false}}},
		{"answers after silence", []reading{{0, nil, 0, false}, {600, map[string]uint64{"db1": 1}, 0, false}, {899, map[string]uint64{"db1": 1}, 299, false}, {900, map[string]uint64{"db1": 1}, 300, true}}},
		{"one server stops answering", []reading{{0, map[string]uint64{"db1": 1, "db2": 2}, 0, false}, {300, map[string]uint64{"db1": 1}, 300, true}}},
	} {
		w := &idleWatch{limit: 300 * time.Second, last: map[string]uint64{}, since: t0}
		for i, r := range c.readings {
			idle, stalled := w.observe(at(r.at), r.r)
			if idle != time.Duration(r.idle)*time.Second || stalled != r.stalled {
				t.Errorf("%s, reading %d: idle %v stalled %v, want %ds %v", c.name, i, idle, stalled, r.idle, r.stalled)
			}
		}
	}
}

// TestWatchStopsIdleRun: a run whose servers do nothing is stopped and
// its error says why; one whose servers work, one nobody can read and one
// the user interrupts are never taken for stalled.
func TestWatchStopsIdleRun(t *testing.T) {
	const every, limit = 5 * time.Millisecond, 40 * time.Millisecond
	run := func(ctx context.Context, read workReader, wait time.Duration) (ended bool, err error) {
		wctx, stop := watchWith(ctx, "mariadb-slap", read, every, limit)
		select {
		case <-wctx.Done():
			ended = true
		case <-time.After(wait):
		}
		return ended, stop()
	}
	still := func(context.Context) map[string]uint64 { return map[string]uint64{"db1": 42} }
	ended, err := run(context.Background(), still, 10*time.Second)
	if !ended || err == nil || !strings.Contains(err.Error(), "mariadb-slap ran") || !strings.Contains(err.Error(), "no server of the lab did any work") {
		t.Errorf("idle servers: ended %v, %v", ended, err)
	}
	var n atomic.Uint64
	working := func(context.Context) map[string]uint64 { return map[string]uint64{"db1": n.Add(1)} }
	if ended, err := run(context.Background(), working, 300*time.Millisecond); ended || err != nil {
		t.Errorf("working servers: ended %v, %v", ended, err)
	}
	silent := func(context.Context) map[string]uint64 { return nil }
	if ended, err := run(context.Background(), silent, 300*time.Millisecond); ended || err != nil {
		t.Errorf("servers nobody can read: ended %v, %v", ended, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := run(ctx, still, 300*time.Millisecond); err != nil {
		t.Errorf("a run the user interrupted: %v", err)
	}
}

// idleLab's servers answer every reading of their work with the same
// figures (servers that wait for ever), and its host's commands never end
// by themselves.
type idleLab struct {
	silentLab
	sql *sqlfake.Servers
}

func (l idleLab) Admin(n *plan.Node) *sql.DB { return l.sql.DB(n.Name) }

// TestEventBoundedRunsStopWhenIdle: sysbench prepare, mariadb-slap and
// go-tpc's prepare, run against servers that do no work, are stopped once
// the limit passes, with the error naming the tool; each server's work
// was read (two nodes).
func TestEventBoundedRunsStopWhenIdle(t *testing.T) {
	defer func(e, l time.Duration) { idleEvery, idleLimit = e, l }(idleEvery, idleLimit)
	idleEvery, idleLimit = 5*time.Millisecond, 50*time.Millisecond
	fake := &sqlfake.Servers{Answer: func(server, q string) *sqlfake.Result {
		if strings.Contains(q, "GLOBAL_STATUS") {
			return &sqlfake.Result{Columns: []string{"work"}, Rows: [][]string{{"123456"}}}
		}
		return nil
	}}
	l := idleLab{silentLab{workloadtest.Lab{P: &plan.Plan{Lab: "t", Client: plan.Client{Host: "client"}, Nodes: []plan.Node{{Name: "db1"}, {Name: "db2"}}}}}, fake}
	t0 := time.Now()
	err := onClient(context.Background(), l, []string{"sysbench", "prepare"})
	if err == nil || !strings.Contains(err.Error(), "sysbench ran") || !strings.Contains(err.Error(), "no server of the lab did any work") || time.Since(t0) > 10*time.Second {
		t.Errorf("sysbench prepare against idle servers: %v after %v", err, time.Since(t0))
	}
	if len(fake.Sent("db1")) == 0 || len(fake.Sent("db2")) == 0 {
		t.Errorf("each server's work read: db1 %v, db2 %v", fake.Sent("db1"), fake.Sent("db2"))
	}
	out, _, stall := runLimited(context.Background(), l, "mariadb-slap", []string{"mariadb-slap"}, 0)
	if stall == nil || !strings.HasPrefix(stall.Error(), "mariadb-slap ran") || len(out) == 0 {
		t.Errorf("mariadb-slap against idle servers: %v (printed %q)", stall, out)
	}
}

// sayingLab records what the watch says in the command's log.
type sayingLab struct {
	idleLab
	said *[]string
}

func (l sayingLab) Logf(format string, a ...any) {
	*l.said = append(*l.said, fmt.Sprintf(format, a...))
}

// TestIdleWatchSaysRefusedReading: a server that answers the reading with
// an error (a query it refuses) is named once in the command's log, and
// the run is not stopped on its account.
func TestIdleWatchSaysRefusedReading(t *testing.T) {
	defer func(e, l time.Duration) { idleEvery, idleLimit = e, l }(idleEvery, idleLimit)
	idleEvery, idleLimit = 5*time.Millisecond, 30*time.Millisecond
	refuse := &sqlfake.Servers{QueryFail: func(string, string) error { return &mysql.MySQLError{Number: 1064, Message: "syntax"} }}
	var said []string
	l := sayingLab{idleLab{silentLab{workloadtest.Lab{P: &plan.Plan{Lab: "t", Client: plan.Client{Host: "client"}, Nodes: []plan.Node{{Name: "db1"}}}}}, refuse}, &said}
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	_, _, stall := runLimited(ctx, l, "mariadb-slap", []string{"mariadb-slap"}, 0)
	if stall != nil || len(said) != 1 || !strings.Contains(said[0], "db1's work cannot be read") {
		t.Errorf("a refused reading: stall %v, said %q", stall, said)
	}
}
