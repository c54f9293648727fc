package consistency

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// sets builds set histories: adds and whole-set reads, each its own
// process, times in seconds.
type sets struct{ ops []Op }

func (h *sets) add(process int, start, end float64, typ string, v int) *sets {
	h.ops = append(h.ops, Op{Time: int64(start * 1e9), Process: process, Type: "invoke", F: FAdd, Node: "db1", Data: &SetOp{Elements: []int{v}}},
		Op{Time: int64(end * 1e9), Process: process, Type: typ, F: FAdd, Node: "db1", Data: &SetOp{Elements: []int{v}}})
	return h
}

func (h *sets) read(process int, start, end float64, node string, vs ...int) *sets {
	if vs == nil {
		vs = []int{}
	}
	h.ops = append(h.ops, Op{Time: int64(start * 1e9), Process: process, Type: "invoke", F: FReadSet, Node: node, Data: &SetOp{}},
		Op{Time: int64(end * 1e9), Process: process, Type: "ok", F: FReadSet, Node: node, Data: &SetOp{Elements: vs}})
	return h
}

func (h *sets) check(t *testing.T, model string) *Result {
	t.Helper()
	ops := (&hist{ops: h.ops}).sorted()
	r, err := Check(context.Background(), ops, model)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSet: each element's fate (stable, stale and how long, lost, never
// read) and which model forbids what.
func TestSet(t *testing.T) {
	h := new(sets).
		add(0, 1, 2, "ok", 1).           // acknowledged at 2 s
		add(1, 1, 2, "ok", 2).           // at 2 s, then lost
		add(2, 1, 2, "info", 3).         // unknown, seen at 4 s
		add(3, 1, 2, "fail", 4).         // failed, never seen
		read(4, 3, 3.5, "db2", 2).       // misses 1 (stale: 1 s after)
		read(5, 3.5, 4, "db1", 1, 2, 3). // sees everything
		read(4, 5, 5.5, "db2", 1, 3).    // misses 2: lost from here
		read(5, 6, 6.5, "db1", 1, 3).
		add(6, 7, 8, "ok", 5) // acknowledged last: never read
	r := h.check(t, "serializable")
	f := figuresOf(r)
	if got := fmt.Sprintf("%+v", f); got != "{Adds:5 Acknowledged:3 Failed:1 Unknown:1 Known:4 Stable:2 Stale:1 Lost:1 NeverRead:1 VisibleP50:0 VisibleP95:1 VisibleP99:1 VisibleMax:1}" {
		t.Errorf("figures %s", got)
	}
	if got := types(r); got != "lost-element stale-element" || r.Valid || strings.Join(r.Forbidden, ",") != "lost-element" {
		t.Errorf("serializable: %s, valid %v, forbidden %v", got, r.Valid, r.Forbidden)
	}
	if s := r.Own.Text; !strings.Contains(s, "5 elements added (3 acknowledged, 1 failed, 1 unknown); of 4 known: 2 stable, 1 lost, 1 never read after") {
		t.Errorf("text: %s", s)
	}
	for _, a := range r.Anomalies {
		t.Logf("%s: %s", a.Type, a.Example)
	}
	// without the loss: a stale element is allowed but under strict
	// serializability
	h = new(sets).add(0, 1, 2, "ok", 1).read(1, 3, 3.5, "db2").read(2, 4, 4.5, "db1", 1)
	if r := h.check(t, "serializable"); !r.Valid || types(r) != "stale-element" {
		t.Errorf("a stale element under serializability: valid %v, %s", r.Valid, types(r))
	}
	r = h.check(t, "strict-serializable")
	if r.Valid || strings.Join(r.Forbidden, ",") != "stale-element" {
		t.Errorf("a stale element under strict serializability: valid %v, %v", r.Valid, r.Forbidden)
	}
	if got := fmt.Sprint(r.Reads); got != "[{ 2 1 1 1 1} {db1 1 0 0 0 0} {db2 1 1 1 1 1}]" {
		t.Errorf("reads %s", got)
	}
	// a read of another set does not miss this set's elements
	h = new(sets).add(0, 1, 2, "ok", 1)
	h.ops = append(h.ops, Op{Time: 3e9, Process: 1, Type: "invoke", F: FReadSet, Node: "db2", Data: &SetOp{Set: 1}},
		Op{Time: 3.5e9, Process: 1, Type: "ok", F: FReadSet, Node: "db2", Data: &SetOp{Set: 1, Elements: []int{}}})
	h.read(2, 4, 4.5, "db1", 1)
	if r := h.check(t, "strict-serializable"); !r.Valid || figuresOf(r).Stale != 0 || r.Reads[0].Stale != 0 {
		t.Errorf("another set's read counted as missing: valid %v, %+v, %+v", r.Valid, r.Own, r.Reads)
	}
	// a read of an element never added, one whose add failed
	h = new(sets).add(0, 1, 2, "fail", 1).read(1, 3, 4, "db1", 1, 9)
	if got := types(h.check(t, "read-committed")); got != "G1a garbage-read" {
		t.Errorf("bad reads: %s", got)
	}
}

// TestSetHistoryRoundTrip: a set history written and read back is the
// same, and its shape is checked: an add's element, a read's list.
func TestSetHistoryRoundTrip(t *testing.T) {
	h := new(sets).add(0, 1, 2, "ok", 7).read(1, 3, 4, "db2", 7)
	var b strings.Builder
	if err := Write(&b, (&hist{ops: h.ops}).sorted()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"f":"add","node":"db1","value":[0,7]}`) || !strings.Contains(b.String(), `"f":"read-set","node":"db2","value":[0,[7]]}`) ||
		!strings.Contains(b.String(), `"type":"invoke","f":"read-set","node":"db2","value":[0,null]}`) {
		t.Errorf("written:\n%s", b.String())
	}
	ops, err := Read(strings.NewReader(b.String()), all...)
	if err != nil || len(ops) != 4 || fmt.Sprint(setOf(ops[3]).Elements) != "[7]" {
		t.Fatalf("read back: %v %+v", err, ops)
	}
	_, err = Read(strings.NewReader(`{"time": 1, "process": 0, "type": "invoke", "f": "add", "value": [0, 1]}
{"time": 2, "process": 0, "type": "ok", "f": "add", "value": [0, null]}
{"time": 2, "process": 2, "type": "ok", "f": "read-set", "value": [0, {"a": 1}]}
{"time": 2, "process": 2, "type": "ok", "f": "read-set", "value": 7}
{"time": 3, "process": 1, "type": "invoke", "f": "txn", "value": []}
`), all...)
	for _, want := range []string{"line 2: value: expected the integer element added second, got null", "line 3: value: expected the elements read", "line 4: value: expected [SET, ELEMENTS]", `line 5: f: "txn" in a history of "add" operations`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in %v", want, err)
		}
	}
}

// TestSimulatedSet: a simulated set history with a replica a few adds
// behind shows every element stable, the ones the reads missed stale, and
// the reads stale; one without lag shows nothing stale.
func TestSimulatedSet(t *testing.T) {
	r, err := Check(context.Background(), SimulateSet(2000, 10, 20, 3), "serializable")
	if err != nil {
		t.Fatal(err)
	}
	f := figuresOf(r)
	if f.Known != 2000 || f.Stable != 2000 || f.Lost != 0 || f.Stale != 3*19 || r.Reads[0].Stale != 19 { // the last read, the final one, sees everything
		t.Errorf("figures %+v, reads %+v", f, r.Reads)
	}
	r, _ = Check(context.Background(), SimulateSet(2000, 10, 20, 0), "strict-serializable")
	if !r.Valid || figuresOf(r).Stale != 0 {
		t.Errorf("no lag: valid %v, %+v", r.Valid, r.Own)
	}
}

// figuresOf are a set history's figures, read back from its Own.
func figuresOf(r *Result) SetFigures {
	var f SetFigures
	if r.Own != nil {
		b, _ := json.Marshal(r.Own.Values)
		_ = json.Unmarshal(b, &f)
	}
	return f
}

// TestOwnFromEarlierRuns: a result recorded with a set's figures under
// "set" reads back with them as its Own, in words too.
func TestOwnFromEarlierRuns(t *testing.T) {
	var r Result
	err := json.Unmarshal([]byte(`{"valid": true, "model": "serializable", "set": {"adds": 3, "acknowledged": 3, "known": 3, "stable": 3}}`), &r)
	if err != nil || !r.Valid || r.Own == nil || r.Own.Of != "elements" || r.Own.Values["stable"] != 3 || !strings.HasPrefix(r.Own.Text, "3 elements added (3 acknowledged") {
		t.Errorf("%v %+v", err, r.Own)
	}
	b, _ := json.Marshal(Result{Own: SetFigures{Adds: 2}.own()})
	if !strings.Contains(string(b), `"own":{"of":"elements","text":"2 elements added`) || !strings.Contains(string(b), `"adds":2,`) {
		t.Errorf("written: %s", b)
	}
}
