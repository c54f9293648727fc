package consistency

import (
	"context"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/hadrill/hadrill/internal/hderr"
)

// hist builds a history: each transaction its invocation (its reads'
// lists null) and its completion, at the times given.
type hist struct{ ops []Op }

// all are the families this package checks, as a history is read here.
var all = []Family{ListAppendOps, BankOps, SetOps, CounterOps}

func ap(k, v int) Mop        { return Mop{F: "append", Key: k, Value: v} }
func rd(k int, l ...int) Mop { return Mop{F: "r", Key: k, List: append([]int{}, l...), Read: true} }

func (h *hist) txn(process int, start, end int64, typ string, mops ...Mop) *hist {
	inv := make([]Mop, len(mops))
	for i, m := range mops {
		inv[i] = m
		if m.F == "r" {
			inv[i] = Mop{F: "r", Key: m.Key}
		}
	}
	h.ops = append(h.ops, Op{Index: len(h.ops), Time: start, Process: process, Type: "invoke", F: "txn", Value: inv})
	done := mops
	if typ != "ok" {
		done = inv
	}
	h.ops = append(h.ops, Op{Index: len(h.ops), Time: end, Process: process, Type: typ, F: "txn", Value: done})
	return h
}

// sorted puts operations in time order (the builder writes each
// transaction's two at once).
func (h *hist) sorted() []Op {
	ops := slices.Clone(h.ops)
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].Time < ops[j].Time })
	for i := range ops {
		ops[i].Index = i
	}
	return ops
}

func types(r *Result) string {
	var out []string
	for _, a := range r.Anomalies {
		out = append(out, a.Type)
	}
	return strings.Join(out, " ")
}

// TestCorpus: small hand-written histories, one per anomaly and several
// valid ones, classified exactly.
func TestCorpus(t *testing.T) {
	for _, c := range []struct {
		name  string
		h     *hist
		want  string // the anomaly types found, sorted
		valid []string
	}{
		{"serial", new(hist).txn(0, 1, 2, "ok", ap(1, 1)).txn(0, 3, 4, "ok", rd(1, 1)).txn(1, 5, 6, "ok", ap(1, 2), rd(1, 1, 2)),
			"", Models},
		{"concurrent, consistent", new(hist).txn(0, 1, 10, "ok", ap(1, 1), rd(2)).txn(1, 2, 9, "ok", ap(2, 1), ap(1, 2)).txn(2, 11, 12, "ok", rd(1, 1, 2), rd(2, 1)),
			"", Models},
		{"an unfinished transaction that took effect", new(hist).txn(0, 1, 2, "info", ap(1, 1)).txn(1, 3, 4, "ok", rd(1, 1)),
			"", Models},
		{"an unfinished transaction that did not", new(hist).txn(0, 1, 2, "info", ap(1, 1)).txn(1, 3, 4, "ok", rd(1)),
			"", Models},
		{"G0: writes in opposite orders", new(hist).txn(0, 1, 5, "ok", ap(1, 1), ap(2, 2)).txn(1, 2, 6, "ok", ap(1, 2), ap(2, 1)).txn(2, 7, 8, "ok", rd(1, 1, 2), rd(2, 1, 2)),
			"G0", nil},
		{"G1c: each read the other's write", new(hist).txn(0, 1, 5, "ok", ap(1, 1), rd(2, 1)).txn(1, 2, 6, "ok", ap(2, 1), rd(1, 1)),
			"G1c", nil},
		{"G-single: read skew", new(hist).txn(0, 1, 5, "ok", ap(1, 1), ap(2, 1)).txn(1, 2, 6, "ok", rd(1), rd(2, 1)).txn(2, 7, 8, "ok", rd(1, 1)),
			"G-single", []string{"read-committed"}},
		{"G2-item: write skew", new(hist).txn(0, 1, 5, "ok", rd(1), ap(2, 1)).txn(1, 2, 6, "ok", rd(2), ap(1, 1)).txn(2, 7, 8, "ok", rd(1, 1), rd(2, 1)),
			"G2-item", []string{"read-committed", "snapshot-isolation"}},
		{"long fork: two readers see two writes in opposite orders (snapshot isolation forbids it)",
			new(hist).txn(0, 1, 10, "ok", ap(1, 1)).txn(1, 1, 10, "ok", ap(2, 1)).txn(2, 2, 9, "ok", rd(1, 1), rd(2)).txn(3, 2, 9, "ok", rd(1), rd(2, 1)).txn(4, 11, 12, "ok", rd(1, 1), rd(2, 1)),
			"long-fork", []string{"read-committed"}},
		{"G-nonadjacent: a long fork with a second write between",
			new(hist).txn(0, 1, 10, "ok", ap(1, 1)).txn(1, 1, 10, "ok", ap(2, 1)).txn(5, 1, 10, "ok", ap(2, 2)).txn(2, 2, 9, "ok", rd(1, 1), rd(2)).txn(3, 2, 9, "ok", rd(1), rd(2, 1, 2)).txn(4, 11, 12, "ok", rd(1, 1), rd(2, 1, 2)),
			"G-nonadjacent", []string{"read-committed"}},
		{"lost update", new(hist).txn(0, 1, 5, "ok", rd(1), ap(1, 1)).txn(1, 2, 6, "ok", rd(1), ap(1, 2)).txn(2, 7, 8, "ok", rd(1, 1, 2)),
			"G-single lost-update", []string{"read-committed"}},
		{"G1a: an aborted read", new(hist).txn(0, 1, 2, "fail", ap(1, 1)).txn(1, 3, 4, "ok", rd(1, 1)),
			"G1a", nil},
		{"G1b: an intermediate read", new(hist).txn(0, 1, 5, "ok", ap(1, 1), ap(1, 2)).txn(1, 2, 4, "ok", rd(1, 1)).txn(2, 6, 7, "ok", rd(1, 1, 2)),
			"G1b", nil},
		{"internal", new(hist).txn(0, 1, 2, "ok", ap(1, 1), rd(1)),
			"internal", nil},
		{"internal: a later read that lost what the earlier one saw", new(hist).txn(0, 1, 2, "ok", ap(1, 1)).txn(1, 3, 6, "ok", rd(1, 1), ap(1, 2), rd(1, 2)),
			"incompatible-order internal", nil},
		{"non-repeatable read: another's append between a read and its own (InnoDB's repeatable read)",
			new(hist).txn(0, 1, 2, "ok", ap(1, 1)).txn(1, 3, 8, "ok", rd(1, 1), ap(1, 3), rd(1, 1, 2, 3)).txn(2, 4, 5, "ok", ap(1, 2)).txn(3, 9, 10, "ok", rd(1, 1, 2, 3)),
			"G-single non-repeatable-read", []string{"read-committed"}},
		{"duplicate elements", new(hist).txn(0, 1, 2, "ok", ap(1, 1)).txn(1, 3, 4, "ok", rd(1, 1, 1)),
			"duplicate-elements", nil},
		{"garbage read", new(hist).txn(0, 1, 2, "ok", rd(1, 9)),
			"garbage-read", nil},
		{"incompatible order", new(hist).txn(0, 1, 5, "ok", ap(1, 1)).txn(1, 1, 5, "ok", ap(1, 2)).txn(2, 3, 7, "ok", rd(1, 1, 2)).txn(3, 3, 7, "ok", rd(1, 2, 1)),
			"incompatible-order", nil},
		{"lost: acknowledged, never read", new(hist).txn(0, 1, 2, "ok", ap(1, 1)).txn(1, 3, 4, "ok", rd(1)).txn(1, 5, 6, "ok", rd(1)),
			"lost", []string{"read-committed", "repeatable-read", "snapshot-isolation", "serializable"}},
		{"stale read: G-single in real time", new(hist).txn(0, 1, 2, "ok", ap(1, 1)).txn(1, 3, 4, "ok", rd(1)).txn(2, 5, 6, "ok", rd(1, 1)),
			"G-single-realtime", []string{"read-committed", "repeatable-read", "snapshot-isolation", "serializable"}},
		{"a process that does not see its own write", new(hist).txn(0, 1, 2, "ok", ap(1, 1)).txn(0, 3, 4, "ok", rd(1)).txn(1, 5, 6, "ok", rd(1, 1)),
			"G-single-process", []string{"read-committed", "repeatable-read", "snapshot-isolation", "serializable"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, m := range Models {
				r, err := Check(context.Background(), c.h.sorted(), m)
				if err != nil {
					t.Fatal(err)
				}
				if got := types(r); got != c.want {
					t.Fatalf("anomalies %q, want %q: %+v", got, c.want, r.Anomalies)
				}
				if want := slices.Contains(c.valid, m); r.Valid != want {
					t.Errorf("%s: valid %v, want %v (forbidden: %v)", m, r.Valid, want, r.Forbidden)
				}
				for _, a := range r.Anomalies {
					if a.Example == "" || a.Count < 1 {
						t.Errorf("%s: %+v has no example", m, a)
					}
				}
			}
		})
	}
}

// TestFirst: each anomaly type says when its earliest instance was
// complete (its last transaction's end), whether counted at a read or on
// a cycle: a history of two stale reads, ending at 4 s and 8 s, and a
// lost update whose later writer ends at 16 s.
func TestFirst(t *testing.T) {
	const s = int64(1e9)
	h := new(hist).txn(0, 1*s, 2*s, "ok", ap(1, 1)).txn(1, 3*s, 4*s, "ok", rd(1)).txn(2, 7*s, 8*s, "ok", rd(1)).txn(3, 9*s, 10*s, "ok", rd(1, 1)).
		txn(4, 11*s, 15*s, "ok", rd(2), ap(2, 1)).txn(5, 12*s, 16*s, "ok", rd(2), ap(2, 2)).txn(6, 17*s, 18*s, "ok", rd(2, 1, 2))
	r, err := Check(context.Background(), h.sorted(), "strict-serializable")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"G-single-realtime": 4, "lost-update": 16, "G-single": 16}
	for _, a := range r.Anomalies {
		w, ok := want[a.Type]
		if !ok {
			continue
		}
		if a.First == nil || *a.First != w {
			t.Errorf("%s: first %v, want %g s", a.Type, a.First, w)
		}
		delete(want, a.Type)
	}
	if len(want) > 0 {
		t.Errorf("not found: %v (found %s)", want, types(r))
	}
}

func TestReadRefusesBadLines(t *testing.T) {
	in := `{"index": 0, "time": 1, "process": 0, "type": "invoke", "f": "txn", "value": [["append", 1, 2]]}
{"index": 1, "time": 2, "process": 0, "type": "done", "f": "txn", "value": [["append", 1, 2]]}
{"index": 2, "time": 3, "process": 0, "type": "ok", "f": "txn", "value": [["write", 1, 2]]}
not json
{"index": 4, "time": 5, "process": 0, "type": "ok", "f": "txn", "value": [["r", "x", null]], "extra": 1}
`
	_, err := Read(strings.NewReader(in), all...)
	if err == nil {
		t.Fatal("a bad history read")
	}
	for _, want := range []string{"line 2: type: expected invoke, ok, fail or info", `line 3:`, `"append" or "r"`, "line 4:", "line 5:"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	ops, err := Read(strings.NewReader(`{"index": 7, "time": 1203340112, "process": 3, "type": "ok", "f": "txn", "node": "db2", "value": [["append", 4, 17], ["r", 2, [3, 5, 9]]]}`), all...)
	if err != nil || len(ops) != 1 || ops[0].Value[1].List[2] != 9 || ops[0].Node != "db2" {
		t.Errorf("the documented line: %+v %v", ops, err)
	}
}

// TestReadStrictly (the review's M5, L2, L3, L4): what is not one whole
// operation a line, with every field, is refused naming the line, in the
// history's own words; an empty history too.
func TestReadStrictly(t *testing.T) {
	const inv = `{"index": 0, "time": 1, "process": 0, "type": "invoke", "f": "txn", "value": [["append", 1, 1]]}`
	const ok = `{"index": 1, "time": 2, "process": 0, "type": "ok", "f": "txn", "value": [["append", 1, 1]]}`
	for _, c := range []struct{ name, history, want string }{
		{"empty", "", "the history holds no operations"},
		{"blank lines only", "\n \n", "the history holds no operations"},
		{"two operations on one line", inv + " " + ok + "\n", "line 1: more after the operation"},
		{"trailing garbage", inv + " x\n", "line 1: more after the operation (x)"},
		{"no time", `{"index": 0, "process": 0, "type": "invoke", "f": "txn", "value": []}`, `line 1: missing "time"`},
		{"a null time", `{"index": 0, "time": null, "process": 0, "type": "invoke", "f": "txn", "value": []}`, `line 1: missing "time"`},
		{"no process, type, f or value", `{"index": 0, "time": 1}`, `line 1: missing "process", "type", "f", "value"`},
		{"a null line", "null", "line 1: expected an operation (a JSON object), got null"},
		{"a list", "[1]", "line 1: expected an operation (a JSON object)"},
		{"a string time", `{"index": 0, "time": "1", "process": 0, "type": "invoke", "f": "txn", "value": []}`, "line 1: time: expected an integer, got string"},
		{"a value of the wrong shape", `{"index": 0, "time": 1, "process": 0, "type": "invoke", "f": "txn", "value": {"a": 1}}`, "line 1: value: expected a list of micro-operations"},
		{"a txn with a null value", `{"index": 0, "time": 1, "process": 0, "type": "invoke", "f": "txn", "value": null}`, "line 1: value: expected a list of micro-operations, got null"},
		{"a key beyond 64 bits", `{"index": 0, "time": 1, "process": 0, "type": "invoke", "f": "txn", "value": [["append", 99999999999999999999, 1]]}`, "expected an integer key (64 bits at most)"},
		{"not JSON", "{oops", "line 1: not JSON at byte"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(c.history), all...)
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "Go ") || strings.Contains(err.Error(), "json:") {
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
	// what the fast scanner does not take, the decoder does: escapes, and
	// a 19-digit key (a 64-bit integer)
	ops, err := Read(strings.NewReader(`{"time": 1, "process": 0, "type": "invoke", "f": "txn", "value": [["\u0061ppend", 1000000000000000000, 1]]}`+"\n"), all...)
	if err != nil || ops[0].Value[0].F != "append" || ops[0].Value[0].Key != 1000000000000000000 || ops[0].Index != 0 {
		t.Errorf("an escaped append and a 19-digit key: %+v %v", ops, err)
	}
}

// TestPairStrictly (L2, L3): a completion before its invocation, an
// invocation before the process's last completion, a completion that did
// something else, and a value appended twice are refused.
func TestPairStrictly(t *testing.T) {
	for _, c := range []struct {
		name string
		h    *hist
		want string
	}{
		{"a completion before its invocation", new(hist).txn(0, 10, 1, "ok", ap(1, 1)), "completed at time 1, before its invocation"},
		{"an invocation before the last completion", new(hist).txn(0, 1, 5, "ok", ap(1, 1)).txn(0, 3, 6, "ok", ap(1, 2)), "before its operation at index 1 completed"},
		{"a value appended twice", new(hist).txn(0, 1, 2, "fail", ap(1, 1)).txn(0, 3, 4, "ok", ap(1, 1)).txn(1, 5, 6, "ok", rd(1, 1)), "appends 1 to key 1, which the operation at index 0 appended already"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Check(context.Background(), c.h.ops, "serializable")
			if err == nil || !strings.Contains(err.Error(), c.want) || !hderr.IsUser(err) {
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
	h := new(hist).txn(0, 1, 2, "ok", ap(1, 1))
	h.ops[1].Value = []Mop{ap(1, 2)}
	if _, err := Check(context.Background(), h.ops, "serializable"); err == nil || !strings.Contains(err.Error(), "its micro-operations are not those index 0 invoked") {
		t.Errorf("a completion that appended something else: %v", err)
	}
	h = new(hist).txn(0, 1, 2, "info", ap(1, 1), ap(1, 2))
	h.ops[1].Value = []Mop{ap(1, 3)}
	if _, err := Check(context.Background(), h.ops, "serializable"); err == nil || !strings.Contains(err.Error(), "an unknown outcome's micro-operations are those index 0 invoked or a run of them") {
		t.Errorf("an unknown outcome that names what was not invoked: %v", err)
	}
}

// TestInfoNarrowed: an unknown outcome whose client recorded what it sent
// (its second append never sent: the server had ended the transaction
// under it, and its first append ran on its own) is judged on that: a
// read of the first append alone is no intermediate read; judged on what
// was invoked, the same history shows G1b.
func TestInfoNarrowed(t *testing.T) {
	h := new(hist).txn(0, 1, 5, "info", ap(1, 1), ap(1, 2)).txn(1, 6, 7, "ok", rd(1, 1))
	r, err := Check(context.Background(), h.sorted(), "read-committed")
	if err != nil || !strings.Contains(types(r), "G1b") {
		t.Fatalf("judged on what was invoked: %v %s", err, types(r))
	}
	h.ops[1].Value = []Mop{ap(1, 1)}
	r, err = Check(context.Background(), h.sorted(), "read-committed")
	if err != nil || strings.Contains(types(r), "G1b") || !r.Valid {
		t.Errorf("judged on what was sent: %v %s", err, types(r))
	}
}

// TestLongLine (L4): a line past the limit is named with its number and
// the limit, not the scanner's words.
func TestLongLine(t *testing.T) {
	old := maxLine
	maxLine = 2 << 20
	defer func() { maxLine = old }()
	in := `{"time": 1, "process": 0, "type": "invoke", "f": "txn", "value": []}` + "\n" + strings.Repeat("x", 3<<20) + "\n"
	if _, err := Read(strings.NewReader(in), all...); err == nil || !strings.Contains(err.Error(), "line 2: longer than 2 MiB, the longest line a history may have") {
		t.Errorf("%v", err)
	}
}

// A key's appends are a slice when their values are dense, a map when
// not, and a value outside what was appended has no writer either way,
// however far from the range (no overflow).
func TestAppendsDenseAndSparse(t *testing.T) {
	t1, t2 := &Txn{ID: 1}, &Txn{ID: 2}
	for _, c := range []struct {
		lo, hi, n int
		dense     bool
	}{{1, 4, 4, true}, {-3, 4, 4, true}, {1, 9, 4, false}, {math.MinInt, math.MaxInt, 2, false}, {-1, math.MaxInt, 2, false}} {
		a := newAppends(c.lo, c.hi, c.n)
		if (a.dense != nil) != c.dense {
			t.Errorf("%d to %d, %d values: dense %v, want %v", c.lo, c.hi, c.n, a.dense != nil, c.dense)
		}
		a.set(c.lo, t1)
		a.set(c.hi, t2)
		if a.get(c.lo) != t1 || a.get(c.hi) != t2 {
			t.Errorf("%d to %d: writers %v %v", c.lo, c.hi, a.get(c.lo), a.get(c.hi))
		}
		for _, v := range []int{math.MinInt, math.MaxInt, c.lo - 1, c.hi + 1, c.lo + (c.hi-c.lo)/2 + 1} {
			if v != c.lo && v != c.hi && a.get(v) != nil {
				t.Errorf("%d to %d: %d has a writer", c.lo, c.hi, v)
			}
		}
	}
	var none *appends
	if none.get(3) != nil {
		t.Error("a key nothing was appended to has a writer")
	}
}
