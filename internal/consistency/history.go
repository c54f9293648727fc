// Package consistency checks transactional histories for the anomalies a
// database's promise forbids. A history is every operation a workload's
// clients ran, as invoked and then completed (ok: committed; fail: surely
// not; info: unknown), over list-append keys: a transaction appends unique
// values to keys' lists and reads whole lists. From the reads it infers
// each key's order of versions, builds the transactions' dependency graph
// (Adya's ww, wr and rw edges, and the clients' process and real-time
// order), finds its cycles and names them (G0, G1c, G-single, G2-item and
// their -process and -realtime forms), and checks what needs no cycle
// (aborted and intermediate reads, lost appends, duplicates, garbage). It
// follows the published algorithm of Kingsbury and Alvaro's Elle (VLDB
// 2020) over Adya's definitions.
package consistency

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/hadrill/hadrill/internal/hderr"
)

// Op is one line of a history: an invocation or a completion.
type Op struct {
	Index   int    `json:"index"`
	Time    int64  `json:"time"` // nanoseconds, one monotonic clock
	Process int    `json:"process"`
	Type    string `json:"type"` // invoke | ok | fail | info
	F       string `json:"f"`    // txn
	Node    string `json:"node,omitempty"`
	Error   int    `json:"error,omitempty"` // the server's error number, if any
	Value   []Mop  `json:"value"`
	// Bank is a bank operation's value (f transfer, read or init; its
	// "value" in the file): Value is then empty.
	Bank *Bank `json:"-"`
}

// Mop is a micro-operation: ["append", key, value] or ["r", key, list]
// (the list null in an invocation).
type Mop struct {
	F     string // append | r
	Key   int
	Value int   // append
	List  []int // r (nil: not read, or not known)
	Read  bool  // r with a list
}

// UnmarshalJSON reads a micro-operation from its three-element array.
func (m *Mop) UnmarshalJSON(b []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil || len(raw) != 3 {
		return fmt.Errorf(`expected ["append", KEY, VALUE] or ["r", KEY, LIST], got %s`, b)
	}
	if err := json.Unmarshal(raw[0], &m.F); err != nil || (m.F != "append" && m.F != "r") {
		return fmt.Errorf(`expected "append" or "r" first, got %s`, raw[0])
	}
	if err := json.Unmarshal(raw[1], &m.Key); err != nil {
		return fmt.Errorf("expected an integer key, got %s", raw[1])
	}
	if m.F == "append" {
		if err := json.Unmarshal(raw[2], &m.Value); err != nil {
			return fmt.Errorf("expected an integer value to append, got %s", raw[2])
		}
		return nil
	}
	if string(raw[2]) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw[2], &m.List); err != nil {
		return fmt.Errorf("expected a read's list of integers or null, got %s", raw[2])
	}
	m.Read = true
	if m.List == nil {
		m.List = []int{}
	}
	return nil
}

// MarshalJSON writes a micro-operation as its three-element array.
func (m Mop) MarshalJSON() ([]byte, error) {
	if m.F == "append" {
		return json.Marshal([]any{m.F, m.Key, m.Value})
	}
	if !m.Read {
		return json.Marshal([]any{m.F, m.Key, nil})
	}
	return json.Marshal([]any{m.F, m.Key, m.List})
}

// maxProblems is how many bad lines a history's error names.
const maxProblems = 20

// Read parses a history in JSON Lines, one operation per line, and checks
// its shape: every problem with its line, at once.
func Read(r io.Reader) ([]Op, error) {
	var ops []Op
	var problems []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var raw struct {
			Op
			Value json.RawMessage `json:"value"`
		}
		dec := json.NewDecoder(strings.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&raw); err != nil {
			problems = append(problems, fmt.Sprintf("line %d: %v", line, err))
			continue
		}
		op := raw.Op
		var err error
		if bankOp(op.F) {
			op.Bank, err = parseBank(op.F, raw.Value)
		} else {
			op.Value, err = parseMops(raw.Value)
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("line %d: value: %v", line, err))
			continue
		}
		switch op.Type {
		case "invoke", "ok", "fail", "info":
		default:
			problems = append(problems, fmt.Sprintf("line %d: type: expected invoke, ok, fail or info, got %q", line, op.Type))
		}
		switch {
		case op.F != FTxn && !bankOp(op.F):
			problems = append(problems, fmt.Sprintf("line %d: f: expected txn (list-append) or transfer, read and init (bank), got %q", line, op.F))
		case len(ops) > 0 && bankOp(op.F) != bankOp(ops[0].F):
			problems = append(problems, fmt.Sprintf("line %d: f: %q in a history of %q operations (one workload a history)", line, op.F, ops[0].F))
		}
		ops = append(ops, op)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(problems) > maxProblems {
		problems = append(problems[:maxProblems], fmt.Sprintf("… and %d more", len(problems)-maxProblems))
	}
	if len(problems) > 0 {
		return nil, hderr.User("%s", strings.Join(problems, "\n"))
	}
	return ops, nil
}

// Txn is one transaction: its invocation and completion (Complete nil: it
// never completed, as if info), and what it did: the completion's
// micro-operations for ok, the invocation's otherwise.
type Txn struct {
	ID       int // its place among the transactions, from 0
	Process  int
	Node     string
	Type     string // ok, fail or info
	Invoke   *Op
	Complete *Op
	Mops     []Mop
}

// pair matches each process's invocations with their completions, in
// order: a process runs one operation at a time; after info it goes on as
// a new process.
func pair(ops []Op) ([]*Txn, error) {
	open := map[int]*Txn{}
	var out []*Txn
	var problems []string
	for i := range ops {
		op := &ops[i]
		if op.Type == "invoke" {
			if open[op.Process] != nil {
				problems = append(problems, fmt.Sprintf("index %d: process %d invoked again before its operation at index %d completed", op.Index, op.Process, open[op.Process].Invoke.Index))
				continue
			}
			t := &Txn{ID: len(out), Process: op.Process, Node: op.Node, Invoke: op, Type: "info", Mops: op.Value}
			open[op.Process] = t
			out = append(out, t)
			continue
		}
		t := open[op.Process]
		if t == nil {
			problems = append(problems, fmt.Sprintf("index %d: process %d completed an operation it never invoked", op.Index, op.Process))
			continue
		}
		delete(open, op.Process)
		t.Complete, t.Type = op, op.Type
		if op.Node != "" {
			t.Node = op.Node
		}
		if op.Type == "ok" {
			t.Mops = op.Value
		}
	}
	if len(problems) > maxProblems {
		problems = append(problems[:maxProblems], fmt.Sprintf("… and %d more", len(problems)-maxProblems))
	}
	if len(problems) > 0 {
		return nil, hderr.User("%s", strings.Join(problems, "\n"))
	}
	return out, nil
}

// parseMops reads a value's micro-operations: a hand-written scanner for
// the one shape they have (a history's reads hold long lists, which the
// general JSON decoder reads several times slower).
func parseMops(b []byte) ([]Mop, error) {
	p := &scan{b: b}
	p.space()
	if p.literal("null") {
		return nil, nil
	}
	if !p.byte('[') {
		return nil, fmt.Errorf("expected a list of micro-operations, got %.40s", b)
	}
	var out []Mop
	p.space()
	if p.byte(']') {
		return out, nil
	}
	for {
		start := p.i
		m, ok := p.mop()
		if !ok {
			var fallback Mop // the decoder's own words for what is wrong
			if err := json.NewDecoder(bytes.NewReader(b[start:])).Decode(&fallback); err != nil {
				return nil, err
			}
			return nil, fmt.Errorf(`expected ["append", KEY, VALUE] or ["r", KEY, LIST], got %.60s`, b[start:])
		}
		out = append(out, m)
		p.space()
		if p.byte(']') {
			return out, nil
		}
		if !p.byte(',') {
			return nil, fmt.Errorf("expected , or ] after a micro-operation at byte %d", p.i)
		}
		p.space()
	}
}

type scan struct {
	b []byte
	i int
}

func (p *scan) space() {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\t' || p.b[p.i] == '\n' || p.b[p.i] == '\r') {
		p.i++
	}
}

func (p *scan) byte(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *scan) literal(s string) bool {
	if len(p.b)-p.i >= len(s) && string(p.b[p.i:p.i+len(s)]) == s {
		p.i += len(s)
		return true
	}
	return false
}

func (p *scan) int() (int, bool) {
	p.space()
	neg := p.byte('-')
	start, v := p.i, 0
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		v = v*10 + int(p.b[p.i]-'0')
		p.i++
	}
	if p.i == start || p.i-start > 18 {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// mop reads ["append", KEY, VALUE] or ["r", KEY, LIST|null].
func (p *scan) mop() (Mop, bool) {
	var m Mop
	if !p.byte('[') {
		return m, false
	}
	p.space()
	switch {
	case p.literal(`"append"`):
		m.F = "append"
	case p.literal(`"r"`):
		m.F = "r"
	default:
		return m, false
	}
	p.space()
	if !p.byte(',') {
		return m, false
	}
	var ok bool
	if m.Key, ok = p.int(); !ok {
		return m, false
	}
	p.space()
	if !p.byte(',') {
		return m, false
	}
	p.space()
	if m.F == "append" {
		if m.Value, ok = p.int(); !ok {
			return m, false
		}
	} else if !p.literal("null") {
		if !p.byte('[') {
			return m, false
		}
		m.List, m.Read = []int{}, true
		p.space()
		if !p.byte(']') {
			for {
				v, ok := p.int()
				if !ok {
					return m, false
				}
				m.List = append(m.List, v)
				p.space()
				if p.byte(']') {
					break
				}
				if !p.byte(',') {
					return m, false
				}
			}
		}
	}
	p.space()
	return m, p.byte(']')
}
