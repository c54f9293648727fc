package consistency

import (
	"context"
	"strings"
	"testing"
)

// counters builds counter histories: increments and reads, each its own
// process, times in seconds.
type counters struct{ ops []Op }

func (h *counters) incr(process int, start, end float64, typ string, key, delta int) *counters {
	h.ops = append(h.ops, Op{Time: int64(start * 1e9), Process: process, Type: "invoke", F: FIncr, Node: "db1", Data: &CounterOp{Key: key, Delta: delta}},
		Op{Time: int64(end * 1e9), Process: process, Type: typ, F: FIncr, Node: "db1", Data: &CounterOp{Key: key, Delta: delta}})
	return h
}

func (h *counters) read(process int, start, end float64, node string, key, v int) *counters {
	h.ops = append(h.ops, Op{Time: int64(start * 1e9), Process: process, Type: "invoke", F: FReadCounter, Node: node, Data: &CounterOp{Key: key}},
		Op{Time: int64(end * 1e9), Process: process, Type: "ok", F: FReadCounter, Node: node, Data: &CounterOp{Key: key, Value: v, Read: true}})
	return h
}

func (h *counters) check(t *testing.T, model string) *Result {
	t.Helper()
	r, err := Check(context.Background(), (&hist{ops: h.ops}).sorted(), model)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestCounter: each read bounded by the increments around it; which model
// forbids what; the figures.
func TestCounter(t *testing.T) {
	for _, c := range []struct {
		name   string
		h      *counters
		types  string
		strict bool // valid under strict serializability
		valid  bool // under serializability
	}{
		{"valid", new(counters).incr(0, 1, 2, "ok", 0, 3).incr(1, 1, 4, "info", 0, 2).read(2, 3, 3.5, "db2", 0, 3).read(3, 5, 5.5, "db1", 0, 5), "", true, true},
		{"an unknown increment may or may not count", new(counters).incr(0, 1, 2, "info", 0, 2).read(2, 3, 3.5, "db2", 0, 0).read(3, 4, 4.5, "db1", 0, 2), "", true, true},
		{"a failed increment counted", new(counters).incr(0, 1, 2, "fail", 0, 2).read(2, 3, 3.5, "db2", 0, 2), "counter-too-high", false, false},
		{"an increment read before it was invoked", new(counters).read(2, 1, 1.5, "db2", 0, 4).incr(0, 2, 3, "ok", 0, 4).read(3, 4, 4.5, "db1", 0, 4), "counter-too-high", false, false},
		{"a stale read", new(counters).incr(0, 1, 2, "ok", 0, 3).read(2, 3, 3.5, "db2", 0, 0).read(3, 4, 4.5, "db1", 0, 3), "stale-counter", false, true},
		{"a lost increment", new(counters).incr(0, 1, 2, "ok", 0, 3).incr(1, 1, 2, "ok", 0, 4).read(3, 4, 4.5, "db1", 0, 4), "lost-increment stale-counter", false, true},
		{"another counter's increments", new(counters).incr(0, 1, 2, "ok", 1, 3).read(2, 3, 3.5, "db2", 0, 0).read(3, 4, 4.5, "db1", 1, 3), "", true, true},
	} {
		r := c.h.check(t, "strict-serializable")
		if got := types(r); got != c.types || r.Valid != c.strict {
			t.Errorf("%s: %q, valid %v under strict serializability; want %q, %v", c.name, got, r.Valid, c.types, c.strict)
		}
		if r := c.h.check(t, "serializable"); r.Valid != c.valid {
			t.Errorf("%s: valid %v under serializability, want %v (%s)", c.name, r.Valid, c.valid, types(r))
		}
		for _, a := range r.Anomalies {
			t.Logf("%s: %s: %s", c.name, a.Type, a.Example)
		}
	}
	r := new(counters).incr(0, 1, 2, "ok", 0, 3).incr(1, 1, 2, "ok", 0, 4).incr(4, 1, 2, "fail", 0, 1).incr(5, 1, 9, "info", 0, 2).
		read(2, 3, 3.5, "db2", 0, 0).read(3, 4, 4.5, "db1", 0, 4).check(t, "strict-serializable")
	v := r.Own.Values
	if r.Own.Of != "increments" || v["increments"] != 4 || v["acknowledged"] != 2 || v["acknowledged_sum"] != 7 || v["failed"] != 1 || v["unknown_sum"] != 2 ||
		v["reads"] != 2 || v["stale"] != 2 || v["lost"] != 3 || v["too_high"] != 0 {
		t.Errorf("figures %+v", r.Own)
	}
	if !strings.HasPrefix(r.Own.Text, "4 increments (2 acknowledged, adding 7; 1 failed; 1 unknown, adding up to 2); 2 reads, 2 stale") {
		t.Errorf("text: %s", r.Own.Text)
	}
	if len(r.Reads) != 3 || r.Reads[0].Stale != 2 || r.Reads[1].Node != "db1" {
		t.Errorf("freshness %+v", r.Reads)
	}
	if ex := r.Anomalies[1].Example; !strings.Contains(ex, "read 0 from counter 0 at 3.000 s, but the increments acknowledged before it began add up to 7") {
		t.Errorf("stale example: %s", ex)
	}
}

// TestCounterHistory: a counter history written and read back, and its
// bad lines named.
func TestCounterHistory(t *testing.T) {
	h := new(counters).incr(0, 1, 2, "ok", 3, 5).read(1, 3, 4, "db2", 3, 5)
	h.ops = append(h.ops, Op{Time: 5e9, Process: 2, Type: "invoke", F: FReadCounter, Data: &CounterOp{Key: 3}})
	var b strings.Builder
	if err := Write(&b, h.ops); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"f":"incr","node":"db1","value":[3,5]}`, `"type":"ok","f":"read-counter","node":"db2","value":[3,5]}`, `"type":"invoke","f":"read-counter","value":[3,null]}`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("written lacks %s:\n%s", want, b.String())
		}
	}
	ops, err := Read(strings.NewReader(b.String()), all...)
	if err != nil || len(ops) != 5 || *counterOf(ops[3]) != (CounterOp{Key: 3, Value: 5, Read: true}) || counterOf(ops[4]).Read {
		t.Fatalf("read back: %v %+v", err, ops)
	}
	_, err = Read(strings.NewReader(`{"time": 1, "process": 0, "type": "invoke", "f": "incr", "value": [0, 1]}
{"time": 1, "process": 3, "type": "invoke", "f": "incr", "value": [0, 0]}
{"time": 2, "process": 0, "type": "ok", "f": "read-counter", "value": [0, null]}
{"time": 2, "process": 2, "type": "ok", "f": "read-counter", "value": [0, -1]}
{"time": 2, "process": 2, "type": "ok", "f": "incr", "value": 7}
{"time": 3, "process": 1, "type": "invoke", "f": "add", "value": [0, 1]}
`), all...)
	for _, want := range []string{"line 2: value: expected a positive amount second, got 0", "line 3: value: expected the value read, got null", "line 4: value: a value of -1",
		"line 5: value: expected [KEY, AMOUNT]", `line 6: f: "add" in a history of "incr" operations`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in %v", want, err)
		}
	}
}

// TestCounterFiguresWords: one of a thing is said in the singular.
func TestCounterFiguresWords(t *testing.T) {
	got := CounterFigures{Increments: 1, Acknowledged: 1, AcknowledgedSum: 3, Reads: 1, Unread: 1}.text()
	want := "1 increment (1 acknowledged, adding 3; 0 failed; 0 unknown, adding up to 0); 1 read, 0 stale, 0 above every increment that may have committed; 0 acknowledged missed by the last reads (1 counter with acknowledged increments and no read after the last of them)"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := (SetFigures{Adds: 1, Acknowledged: 1, Known: 1, Stable: 0}).text(); !strings.HasPrefix(got, "1 element added") {
		t.Errorf("got %s", got)
	}
}
