package drill

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

var t0 = time.Unix(1000, 0)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// writes builds acknowledged writes returning at the given ms offsets.
func writes(ms ...int) []Op {
	var out []Op
	for i, m := range ms {
		out = append(out, Op{Write: true, ID: int64(i + 1), Sent: at(m - 2), Done: at(m)})
	}
	return out
}

func TestClientGap(t *testing.T) {
	ops := append(writes(0, 10, 20, 30, 700, 710), Op{Write: true, ID: 99, Sent: at(40), Done: at(3040), Code: "timeout"})
	g := ClientGap(ops, at(35))
	if g.From != at(30) || g.To != at(700) || g.Seconds != 0.67 {
		t.Fatalf("gap %+v", g)
	}
	// a gap before the fault is not the fault's
	if g := ClientGap(writes(0, 900, 910, 920), at(905)); g.Duration != 10*time.Millisecond {
		t.Fatalf("gap before the fault counted: %+v", g)
	}
	if g := ClientGap(nil, at(0)); g.Duration != 0 || g.Open {
		t.Fatalf("no writes: %+v", g)
	}
	// writes that never resume: the gap is open from the last
	// acknowledgement to the end of the traffic, never 0
	failing := func(from, to int) []Op {
		var out []Op
		for m := from; m <= to; m += 10 {
			out = append(out, Op{Write: true, ID: int64(1000 + m), Sent: at(m), Done: at(m + 5), Code: "1047"})
		}
		return out
	}
	g = ClientGap(append(writes(0, 10, 20, 30), failing(40, 5000)...), at(35))
	if !g.Open || g.From != at(30) || g.To != at(5005) {
		t.Fatalf("writes that never resumed: %+v", g)
	}
	// in-flight writes acknowledged just after the fault do not close it
	inflight := []Op{{Write: true, ID: 50, Sent: at(33), Done: at(40)}, {Write: true, ID: 51, Sent: at(34), Done: at(41)}}
	g = ClientGap(append(append(writes(0, 10, 20, 30), inflight...), failing(45, 5000)...), at(35))
	if !g.Open || g.From != at(41) || g.To != at(5000) {
		t.Fatalf("in-flight acknowledgements closed the gap: %+v", g)
	}
	// nothing ever acknowledged: open from the fault
	if g := ClientGap(failing(0, 100), at(50)); !g.Open || g.From != at(50) || g.To != at(105) {
		t.Fatalf("nothing acknowledged: %+v", g)
	}
	// a closed gap longer than a trailing failure stays the gap
	g = ClientGap(append(writes(0, 10, 800, 810), Op{Write: true, ID: 77, Sent: at(815), Done: at(820), Code: "lost"}), at(5))
	if g.Open || g.From != at(10) || g.To != at(800) {
		t.Fatalf("closed gap: %+v", g)
	}
}

func TestTimelineAndCodes(t *testing.T) {
	ops := []Op{
		{Write: true, ID: 1, Sent: at(0), Done: at(100)},
		{Write: true, ID: 2, Sent: at(200), Done: at(300), Code: "1047"},
		{Sent: at(200), Done: at(310), Code: "1047"},
		{Sent: at(260), Done: at(1100), Code: "timeout"},
		{Sent: at(300), Done: at(350)},
		{Write: true, ID: 3, Sent: at(400)}, // never returned
	}
	tl := Timeline(ops, t0, 250*time.Millisecond, at(1200))
	if len(tl) != 5 || tl[0].WritesOK != 1 || tl[1].WritesErr != 1 || tl[1].ReadsErr != 1 || tl[1].ReadsOK != 1 || tl[4].ReadsErr != 1 {
		t.Fatalf("timeline %+v", tl)
	}
	if tl[1].Codes["1047"] != 2 || tl[4].Codes["timeout"] != 1 {
		t.Fatalf("codes per bucket %+v", tl)
	}
	want := []CodeSpan{{Code: "1047", Writes: 1, Reads: 1, First: 0.3, Last: 0.31}, {Code: "timeout", Reads: 1, First: 1.1, Last: 1.1}}
	if got := Codes(ops, t0); !reflect.DeepEqual(got, want) {
		t.Fatalf("codes %+v, want %+v", got, want)
	}
}

func TestCode(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{nil, ""},
		{&mysql.MySQLError{Number: 1047, Message: "WSREP has not yet prepared node for application use"}, "1047"},
		{fmt.Errorf("exec: %w", &mysql.MySQLError{Number: 1213}), "1213"},
		{context.DeadlineExceeded, "timeout"},
		{fmt.Errorf("exec: %w", context.Canceled), "cancelled"},
		{errors.New("dial tcp 198.18.0.101:3306: connect: connection refused"), "refused"},
		{mysql.ErrInvalidConn, "lost"},
		{errors.New("unexpected EOF"), "lost"},
		{errors.New("something else"), "other"},
	}
	for _, c := range cases {
		if got := Code(c.err); got != c.want {
			t.Errorf("Code(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}

// TestGone: only the server's own answer that the table or its schema does
// not exist means the data is gone; a connection that failed, timed out or
// met a node not ready says nothing of the data.
func TestGone(t *testing.T) {
	for _, c := range []struct {
		err  error
		gone bool
	}{
		{&mysql.MySQLError{Number: 1146, Message: "Table 'app.hd_drill' doesn't exist"}, true},
		{fmt.Errorf("query: %w", &mysql.MySQLError{Number: 1049, Message: "Unknown database 'app'"}), true},
		{&mysql.MySQLError{Number: 1047, Message: "WSREP has not yet prepared node for application use"}, false},
		{&mysql.MySQLError{Number: 2013}, false},
		{context.DeadlineExceeded, false},
		{errors.New("dial unix db3/mysqld.sock: connect: connection refused"), false},
		{nil, false},
	} {
		if got := Gone(c.err) != ""; got != c.gone {
			t.Errorf("Gone(%v) = %v, want %v", c.err, got, c.gone)
		}
	}
	// a dropped table after a drill: its audit is lost, not unverified
	audit := AuditOf([]int64{1, 2}, map[string]Read{"db1": {IDs: map[int64]bool{}, Gone: Gone(&mysql.MySQLError{Number: 1146})}, "db2": {IDs: map[int64]bool{1: true, 2: true}}})
	if v := Decide(audit, nil, 0, nil, false); v != VerdictLost {
		t.Fatalf("verdict %s, want lost: %+v", v, audit)
	}
}

func TestAuditAndAgree(t *testing.T) {
	acked := Acked(append(writes(1, 2, 3), Op{Write: true, ID: 9, Sent: at(1), Done: at(2), Code: "lost"}))
	if !reflect.DeepEqual(acked, []int64{1, 2, 3}) {
		t.Fatalf("acked %v (a failed write is not acknowledged)", acked)
	}
	reads := map[string]Read{
		"db1": {IDs: map[int64]bool{1: true, 2: true, 3: true}},
		"db2": {IDs: map[int64]bool{1: true, 3: true, 9: true}},
		"db3": {Err: errors.New("dial unix db3/mysqld.sock: connect: no such file or directory")},
		"db4": {IDs: map[int64]bool{}},
		// the server answered that the table is gone: read, and it holds none
		"db5": {IDs: map[int64]bool{}, Gone: Gone(&mysql.MySQLError{Number: 1146})},
	}
	got := AuditOf(acked, reads)
	want := []NodeAudit{
		{Node: "db1", State: NodeVerified, Checked: 3},
		{Node: "db2", State: NodeMissing, Checked: 3, Missing: []int64{2}},
		// a node that cannot be read is unverified, never "lacks every id"
		{Node: "db3", State: NodeUnverified, Reason: "dial unix db3/mysqld.sock: connect: no such file or directory"},
		{Node: "db4", State: NodeMissing, Checked: 3, Missing: []int64{1, 2, 3}},
		{Node: "db5", State: NodeMissing, Checked: 3, Missing: []int64{1, 2, 3}, Reason: Gone(&mysql.MySQLError{Number: 1146})},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("audit\n got %+v\nwant %+v", got, want)
	}
	if lost := lostOf(got); !reflect.DeepEqual(lost, map[string][]int64{"db2": {2}, "db4": {1, 2, 3}, "db5": {1, 2, 3}}) {
		t.Fatalf("lost %v: only nodes that were read can lack ids", lost)
	}
	// a write three nodes lack is one write lost, not three (the audit of a
	// Galera cluster that lost a commit: every member lacks it)
	for _, c := range []struct {
		lost map[string][]int64
		want int
	}{
		{nil, 0},
		{lostOf(got), 3},
		{map[string][]int64{"db1": {44332}, "db2": {44332}, "db3": {44332}}, 1},
		{map[string][]int64{"db1": {7}, "db2": {8, 9}}, 3},
	} {
		if n := lostWrites(c.lost); n != c.want {
			t.Errorf("lostWrites(%v) = %d, want %d", c.lost, n, c.want)
		}
	}
	ok, differ := Agree(map[string]map[string]string{"db1": {"app.t": "1", "app.u": "5"}, "db2": {"app.t": "1", "app.u": "6"}, "db3": {"app.t": "1"}})
	if ok || !reflect.DeepEqual(differ, []string{"app.u"}) {
		t.Fatalf("agree %v %v", ok, differ)
	}
	if ok, _ := Agree(map[string]map[string]string{"db1": {"app.t": "1"}, "db2": {"app.t": "1"}}); !ok {
		t.Fatal("equal checksums must agree")
	}
}

func TestChecksumVerdict(t *testing.T) {
	same := map[string]string{"app.t": "1"}
	for _, c := range []struct {
		name   string
		sums   map[string]Sums
		agree  bool
		differ []string
		unread []string
	}{
		{"all read, same", map[string]Sums{"db1": {Tables: same}, "db2": {Tables: same}}, true, nil, nil},
		{"all read, differ", map[string]Sums{"db1": {Tables: same}, "db2": {Tables: map[string]string{"app.t": "2"}}}, false, []string{"app.t"}, nil},
		// the finding this guards against: no checksum read, yet "agree: true"
		{"none read", map[string]Sums{"db1": {Err: context.Canceled}, "db2": {Err: context.Canceled}}, false, nil, []string{"db1", "db2"}},
		{"one unread", map[string]Sums{"db1": {Tables: same}, "db2": {Tables: same}, "db3": {Err: errors.New("down")}}, false, nil, []string{"db3"}},
		{"nothing at all", map[string]Sums{}, false, nil, nil},
	} {
		got := ChecksumVerdict(c.sums)
		unread := slices.Collect(maps.Keys(got.Unread))
		slices.Sort(unread)
		if got.Agree != c.agree || !reflect.DeepEqual(got.Differ, c.differ) || !reflect.DeepEqual(unread, c.unread) {
			t.Errorf("%s: agree %v differ %v unread %v; want %v %v %v", c.name, got.Agree, got.Differ, unread, c.agree, c.differ, c.unread)
		}
		if len(got.Read)+len(got.Unread) != len(c.sums) {
			t.Errorf("%s: every node is read or unread: %+v", c.name, got)
		}
	}
}

func TestDecide(t *testing.T) {
	ok := NodeAudit{Node: "db1", State: NodeVerified}
	lost := NodeAudit{Node: "db2", State: NodeMissing, Missing: []int64{7}}
	unread := NodeAudit{Node: "db3", State: NodeUnverified, Reason: "down"}
	for _, c := range []struct {
		name        string
		audit       []NodeAudit
		differ      []string
		unreadSums  int
		problems    []string
		interrupted bool
		want        string
	}{
		{"all verified", []NodeAudit{ok, ok}, nil, 0, nil, false, VerdictPassed},
		{"a loss seen", []NodeAudit{ok, lost}, nil, 0, nil, false, VerdictLost},
		{"a loss seen beside an unread node", []NodeAudit{lost, unread}, nil, 1, nil, true, VerdictLost},
		{"an unread node is not a loss", []NodeAudit{ok, unread}, nil, 1, nil, false, VerdictUnverified},
		{"unread checksums only", []NodeAudit{ok, ok}, nil, 1, nil, false, VerdictUnverified},
		{"checksums differ", []NodeAudit{ok, ok}, []string{"app.t"}, 0, nil, false, VerdictFailed},
		{"another problem", []NodeAudit{ok, ok}, nil, 0, []string{"writes never resumed after the fault"}, false, VerdictFailed},
		{"interrupted, all verified", []NodeAudit{ok, ok}, nil, 0, nil, true, VerdictInterrupted},
		{"interrupted and unread", []NodeAudit{ok, unread}, nil, 1, nil, true, VerdictUnverified},
		{"no node audited", nil, nil, 0, nil, false, VerdictUnverified},
		{"a fenced node is out of service, not a loss", []NodeAudit{ok, {Node: "db4", State: NodeFenced, Reason: "holds 1-101-9"}}, nil, 0, nil, false, VerdictPassed},
	} {
		if got := Decide(c.audit, c.differ, c.unreadSums, c.problems, c.interrupted); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
		if c.want == VerdictPassed && !settled(c.audit) {
			t.Errorf("%s: a passing audit needs a second look", c.name)
		}
	}
}

func TestSampleVerdicts(t *testing.T) {
	whole := Sample{Nodes: map[string]NodeSample{"db1": {State: "Synced", Primary: true, Size: 4}, "db2": {State: "Synced", Primary: true, Size: 4}, "db3": {State: "Synced", Primary: true, Size: 4}}}
	if !whole.Whole(4) || whole.Whole(3) {
		t.Fatal("three nodes + arbitrator: whole at 4 members only")
	}
	after := Sample{Nodes: map[string]NodeSample{"db1": {State: "down"}, "db2": {State: "Synced", Primary: true, Size: 2}, "db3": {State: "Synced", Primary: true, Size: 2}}}
	if after.Whole(3) || !after.Reformed([]string{"db1"}, 2) || after.Reformed([]string{"db1"}, 3) {
		t.Fatal("re-formed without db1 at size 2")
	}
	split := Sample{Nodes: map[string]NodeSample{"db1": {State: "Synced", Primary: false, Size: 1}, "db2": {State: "Initialized", Primary: false, Size: 2}}}
	if split.Reformed(nil, 0) {
		t.Fatal("no primary component: not re-formed")
	}
}

func TestReplicatedSampleVerdicts(t *testing.T) {
	for _, c := range []struct {
		name            string
		nodes           map[string]NodeSample
		fenced          map[string]bool
		whole, reformed bool // reformed: without db1
	}{
		{"one writer, both follow", map[string]NodeSample{"db1": {State: "running", Writable: true}, "db2": {State: "running", Source: "db1"}, "db3": {State: "running", Source: "db1"}}, nil, true, false},
		{"primary killed", map[string]NodeSample{"db1": {State: "down"}, "db2": {State: "running"}, "db3": {State: "running"}}, nil, false, false},
		{"promoted, old primary down", map[string]NodeSample{"db1": {State: "down"}, "db2": {State: "running", Writable: true}, "db3": {State: "running", Source: "db2"}}, nil, false, true},
		{"old primary back as a replica", map[string]NodeSample{"db1": {State: "running", Source: "db2"}, "db2": {State: "running", Writable: true}, "db3": {State: "running", Source: "db2"}}, nil, true, true},
		{"old primary back, fenced", map[string]NodeSample{"db1": {State: "running"}, "db2": {State: "running", Writable: true}, "db3": {State: "running", Source: "db2"}}, map[string]bool{"db1": true}, true, true},
		{"old primary back, not yet placed", map[string]NodeSample{"db1": {State: "running"}, "db2": {State: "running", Writable: true}, "db3": {State: "running", Source: "db2"}}, nil, false, true},
		{"two writers", map[string]NodeSample{"db1": {State: "running", Writable: true}, "db2": {State: "running", Writable: true}}, nil, false, true},
		{"a replica of the old primary", map[string]NodeSample{"db1": {State: "running"}, "db2": {State: "running", Writable: true}, "db3": {State: "running", Source: "db1"}}, map[string]bool{"db1": true}, false, true},
	} {
		s := Sample{Replicated: true, Nodes: c.nodes, Fenced: c.fenced}
		if s.Whole(3) != c.whole || s.Reformed([]string{"db1"}, 2) != c.reformed {
			t.Errorf("%s: whole %v reformed %v, want %v %v", c.name, s.Whole(3), s.Reformed([]string{"db1"}, 2), c.whole, c.reformed)
		}
	}
}

func TestPhases(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	w := func(sent, took float64, code string) Op {
		return Op{Write: true, Sent: at(sent), Done: at(sent + took), Code: code}
	}
	ops := []Op{
		w(0.1, 0.001, ""), w(0.5, 0.003, ""), // before: 2 acked in 1 s
		w(1.2, 0.100, ""), w(1.5, 0.5, "lost"), w(2.5, 0.200, ""), // during (1 s to 3 s): 2 acked, 1 failed
		w(3.5, 0.002, ""),              // after (3 s to 4 s)
		{Sent: at(1.1), Done: at(1.2)}, // a read: not counted
	}
	got := Phases(ops, t0, at(1), at(3), at(4))
	want := []Phase{
		{Name: "before", Seconds: 1, AckedPerS: 2, P50Ms: 1, P99Ms: 3},
		{Name: "during", Seconds: 2, AckedPerS: 1, Failed: 1, P50Ms: 100, P99Ms: 200},
		{Name: "after", Seconds: 1, AckedPerS: 1, P50Ms: 2, P99Ms: 2},
	}
	if len(got) != len(want) {
		t.Fatalf("phases %+v", got)
	}
	for i := range want {
		g := got[i]
		if g.Name != want[i].Name || g.Seconds != want[i].Seconds || g.AckedPerS != want[i].AckedPerS || g.Failed != want[i].Failed ||
			math.Abs(g.P50Ms-want[i].P50Ms) > 0.01 || math.Abs(g.P99Ms-want[i].P99Ms) > 0.01 {
			t.Errorf("phase %d: %+v, want %+v", i, g, want[i])
		}
	}
	// never whole again: "during" runs to the end, no "after"; no fault: no phases
	if got := Phases(ops, t0, at(1), time.Time{}, at(4)); len(got) != 2 || got[1].Seconds != 3 {
		t.Errorf("never whole: %+v", got)
	}
	if got := Phases(ops, t0, time.Time{}, time.Time{}, at(4)); got != nil {
		t.Errorf("no fault: %+v", got)
	}
}

// TestLate (the labs review's finding 1): a node that lacks acknowledged
// writes while its replication is behind is late, and marked lagging when
// the audit gives up, not lost; one that lacks them at the most advanced
// position is missing.
func TestLate(t *testing.T) {
	audit := []NodeAudit{{Node: "db1", State: NodeVerified}, {Node: "db2", State: NodeMissing, Missing: []int64{7}}, {Node: "db3", State: NodeMissing, Missing: []int64{8}}}
	pos := map[string]string{"db1": "1-101-580,101-100-3", "db2": "1-101-512", "db3": "1-101-580"}
	late := Late(audit, pos)
	if fmt.Sprint(late) != "[db2]" {
		t.Fatalf("late %v: db2 is behind in domain 1; db1's own domain 101 is nobody else's", late)
	}
	got := Lagging(audit, late, pos, 90*time.Second)
	if got[1].State != NodeLagging || !strings.Contains(got[1].Reason, "had not caught up after 1m30s (db1 at 1-101-580,101-100-3, db2 at 1-101-512, db3 at 1-101-580)") || got[2].State != NodeMissing {
		t.Errorf("%+v", got)
	}
	if v := Decide(got[:2], nil, 0, nil, false); v != VerdictUnverified {
		t.Errorf("a lagging node: %s", v)
	}
}

// TestSteadyRun: a cluster whole for one sample and then apart again is
// not steady; the first run whole for the hold is, from its start.
func TestSteadyRun(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	at := func(s float64, whole bool) Sample {
		return Sample{At: t0.Add(time.Duration(s * float64(time.Second))), Replicated: whole} // Replicated stands for "whole" here
	}
	ok := func(s Sample) bool { return s.Replicated }
	samples := []Sample{at(0, false), at(1, true), at(2, true), at(3, false), at(4, true), at(6, true), at(9, true), at(10, false)}
	if got, found := steadyRun(samples, 5*time.Second, ok); !found || !got.Equal(t0.Add(4*time.Second)) {
		t.Errorf("steady from %v %v, want 4 s (1–2 s broke at 3 s)", got.Sub(t0), found)
	}
	if _, found := steadyRun(samples[:6], 5*time.Second, ok); found {
		t.Error("steady before any run lasted 5 s")
	}
	if got, found := steadyRun(samples, 0, ok); !found || !got.Equal(t0.Add(time.Second)) {
		t.Errorf("hold 0: %v %v, want the first whole sample", got.Sub(t0), found)
	}
}

// TestWritesBack: writes are back at the end of the fault's first pause,
// not of a later, longer one (the gap's); a pause shorter than stallMin
// counts only when it is the longest; nothing closed, nothing back.
func TestWritesBack(t *testing.T) {
	steady := func(from, to int) []int {
		var out []int
		for m := from; m <= to; m += 20 {
			out = append(out, m)
		}
		return out
	}
	for _, c := range []struct {
		name    string
		acks    []int
		fault   int
		back    int // ms; -1: zero
		gapFrom int
	}{
		{"one pause", append(steady(0, 1000), steady(1700, 3000)...), 1010, 1700, 1000},
		{"a later longer pause", append(append(steady(0, 1000), steady(1500, 3000)...), steady(4000, 5000)...), 1010, 1500, 3000},
		{"jitter before the pause is not it", append(append(steady(0, 1000), steady(1100, 1200)...), steady(1900, 2500)...), 1010, 1900, 1200},
		{"a short pause that is the longest", append(steady(0, 1000), steady(1150, 2000)...), 1010, 1150, 1000},
		{"a pause mostly before the fault is not its", append(append(steady(0, 700), steady(1020, 1400)...), steady(1860, 2500)...), 1000, 1860, 1400},
		{"no pause at all", nil, 1010, -1, 0},
	} {
		g := ClientGap(writes(c.acks...), at(c.fault))
		got := WritesBack(writes(c.acks...), at(c.fault), g)
		if (c.back < 0) != got.IsZero() || (c.back >= 0 && got != at(c.back)) {
			t.Errorf("%s: writes back at %v, want %d ms (gap %+v)", c.name, got.Sub(t0), c.back, g)
		}
		if c.back >= 0 && g.From != at(c.gapFrom) {
			t.Errorf("%s: the gap from %v, want %d ms", c.name, g.From.Sub(t0), c.gapFrom)
		}
	}
	// the gap open at the end, an earlier pause closed: back at its end
	ops := append(writes(append(steady(0, 1000), steady(1600, 2000)...)...), Op{Write: true, ID: 500, Sent: at(2010), Done: at(6000), Code: "timeout"})
	g := ClientGap(ops, at(1010))
	if got := WritesBack(ops, at(1010), g); !g.Open || got != at(1600) {
		t.Errorf("open gap after a closed pause: back %v, gap %+v", got.Sub(t0), g)
	}
	r := Result{FaultAt: at(1010), Gap: g, WritesBackS: secs(at(1600).Sub(at(1010)))}
	if from, later := r.LaterPause(); !later || math.Abs(from-0.99) > 1e-9 {
		t.Errorf("LaterPause %v %v, want 0.99 s after the fault", from, later)
	}
	r = Result{FaultAt: at(1010), Gap: Gap{From: at(1000), To: at(1700)}, WritesBackS: secs(at(1700).Sub(at(1010)))}
	if _, later := r.LaterPause(); later {
		t.Error("the first pause taken for a later one")
	}
}
