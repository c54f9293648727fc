// Package consistency checks transactional histories for the anomalies a
// database's promise forbids. A history is every operation a workload's
// clients ran, as invoked and then completed (ok: committed; fail: surely
// not; info: unknown), of one workload's operations (a Family: list-append,
// bank, set, counter). Over list-append keys a transaction appends unique
// values to keys' lists and reads whole lists; from the reads it infers
// each key's order of versions, builds the transactions' dependency graph
// (Adya's ww, wr and rw edges, and the clients' process and real-time
// order), finds its cycles and names them (G0, G1c, G-single, G2-item, G-nonadjacent (a long fork among them) and
// their -process and -realtime forms), and checks what needs no cycle
// (aborted and intermediate reads, lost appends, duplicates, garbage). It
// follows the published algorithm of Kingsbury and Alvaro's Elle (VLDB
// 2020) over Adya's definitions.
package consistency

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
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
	// Data is the value of an operation of a workload other than
	// list-append, in its own type (Value is then empty): its Family is
	// the operation's.
	Data Payload `json:"-"`
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
		return fmt.Errorf("expected an integer key (64 bits at most), got %s", raw[1])
	}
	if m.F == "append" {
		if err := json.Unmarshal(raw[2], &m.Value); err != nil {
			return fmt.Errorf("expected an integer value to append (64 bits at most), got %s", raw[2])
		}
		return nil
	}
	if string(raw[2]) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw[2], &m.List); err != nil {
		return fmt.Errorf("expected a read's list of integers (64 bits at most) or null, got %.60s", raw[2])
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

// maxLine is the longest line a history may have.
var maxLine = 64 << 20 // a variable: tests lower it

// Read parses a history in JSON Lines, one operation per line, and checks
// its shape: every problem with its line, at once. A line holds exactly
// one operation with every field an operation needs ("time", "process",
// "type", "f", "value"; "index" is the operation's place when it is
// missing), its f a function of one of fams, and a history at least one
// operation, all of one family.
func Read(r io.Reader, fams ...Family) ([]Op, error) {
	if len(fams) == 0 {
		return nil, errors.New("a history read as no workload's operations")
	}
	fs := newFamilies(fams)
	var problems []string
	// the operations in blocks (each chunk's), joined once at the end: a
	// history of a million operations is not copied each time its slice
	// grows
	var blocks [][]Op
	n, first, firstFam := 0, "", Family(nil)
	split := splitLines(r, fs, runtime.GOMAXPROCS(0))
	for out := range split.order {
		p := <-out
		kept, next := p.ops[:0], 0
		for k, op := range p.ops {
			for ; next < len(p.problems) && p.problems[next].line < p.lines[k]; next++ {
				problems = append(problems, p.problems[next].String())
			}
			if op.Index == unsetIndex {
				op.Index = n
			}
			if n > 0 && op.F != first && familyOf(op) != firstFam {
				problems = append(problems, fmt.Sprintf("line %d: f: %q in a history of %q operations (one workload a history)", p.lines[k], op.F, first))
				continue
			}
			if n == 0 {
				first, firstFam = op.F, familyOf(op)
			}
			kept = append(kept, op)
			n++
		}
		for _, pr := range p.problems[next:] {
			problems = append(problems, pr.String())
		}
		blocks = append(blocks, kept)
	}
	ops := make([]Op, 0, n)
	for _, b := range blocks {
		ops = append(ops, b...)
	}
	if err := split.err; err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = fmt.Errorf("longer than %d MiB, the longest line a history may have", maxLine>>20)
		}
		problems = append(problems, fmt.Sprintf("line %d: %v", split.lines+1, err))
	}
	if len(ops) == 0 && len(problems) == 0 {
		problems = append(problems, "the history holds no operations (expected one JSON object a line)")
	}
	if err := refusal(problems); err != nil {
		return nil, err
	}
	return ops, nil
}

// readChunk is about how many bytes of lines one parser takes at a time:
// a history is cut into chunks of whole lines, parsed by as many
// goroutines as there are CPUs and joined in order (a variable: tests
// lower it).
var readChunk = 4 << 20

// unsetIndex marks an operation whose line gave no "index" until its
// place in the whole history is known (an index of the smallest int is
// read as none).
const unsetIndex = math.MinInt

// lineProblem is why a line was not an operation.
type lineProblem struct {
	line int
	err  error
}

func (p lineProblem) String() string { return fmt.Sprintf("line %d: %v", p.line, p.err) }

// parsedChunk is a chunk's operations, each with its line, and its lines
// that are not one.
type parsedChunk struct {
	ops      []Op
	lines    []int
	problems []lineProblem
}

// split is a history cut into chunks as it is read: order gives each
// chunk's parse, in the history's order; err and lines (how many were
// read) are set once order is closed.
type split struct {
	order chan chan parsedChunk
	err   error
	lines int
}

// splitLines reads r line by line (a line of at most maxLine), hands
// chunks of about readChunk bytes to workers parsers and returns at once.
func splitLines(r io.Reader, fs families, workers int) *split {
	workers = max(workers, 1)
	type job struct {
		first int // the line number of the chunk's first line
		data  []byte
		out   chan parsedChunk
	}
	s := &split{order: make(chan chan parsedChunk, 2*workers)}
	jobs := make(chan job, workers)
	for range workers {
		go func() {
			for j := range jobs {
				j.out <- parseChunk(j.data, j.first, fs)
			}
		}()
	}
	go func() {
		defer close(s.order)
		defer close(jobs)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), maxLine)
		room := min(readChunk, 4<<20) + 1024 // a chunk's last line ends past readChunk
		buf, first := make([]byte, 0, room), 1
		send := func() {
			out := make(chan parsedChunk, 1)
			s.order <- out
			jobs <- job{first, buf, out}
			buf, first = make([]byte, 0, room), s.lines+1
		}
		for sc.Scan() {
			s.lines++
			buf = append(append(buf, sc.Bytes()...), '\n')
			if len(buf) >= readChunk {
				send()
			}
		}
		if len(buf) > 0 {
			send()
		}
		s.err = sc.Err()
	}()
	return s
}

// parseChunk reads the operations of a chunk of lines (each ended by a
// newline, the first numbered first): on the fast path when list-append
// is read (scanOp, its lists shared along each key's chain within the
// chunk), else, and for any line not in the shape a history is written
// in, with care (readOp, which says what is wrong).
func parseChunk(data []byte, first int, fs families) parsedChunk {
	var p parsedChunk
	fast := fs.has(ListAppendOps) // scanOp reads list-append's operations only
	a := &arenas{}
	nodes := map[string]string{}
	for line := first; len(data) > 0; line++ {
		i := bytes.IndexByte(data, '\n')
		text := bytes.TrimSpace(data[:i])
		data = data[i+1:]
		if len(text) == 0 {
			continue
		}
		var op Op
		ok := false
		if fast {
			op, ok = scanOp(text, unsetIndex, a, nodes)
		}
		if !ok {
			var err error
			if op, err = readOp(string(text), unsetIndex, fs); err != nil {
				p.problems = append(p.problems, lineProblem{line, err})
				continue
			}
		}
		p.ops, p.lines = append(p.ops, op), append(p.lines, line)
	}
	return p
}

// scanOp reads one line's operation in the shape a history is written in
// — an object of known keys, each once, strings without escapes, integers,
// a list-append value — its value cut from a and its node's name shared
// through nodes (ok false: anything else, which readOp then reads and,
// when it is wrong, says why).
func scanOp(b []byte, at int, a *arenas, nodes map[string]string) (Op, bool) {
	p := &scan{b: b, a: a}
	op := Op{Index: at}
	if !p.byte('{') {
		return op, false
	}
	const (
		index = 1 << iota
		tm
		process
		typ
		f
		node
		errno
		value
	)
	var seen int
	var val []byte
	for {
		p.space()
		key, ok := p.str()
		if !ok {
			return op, false
		}
		p.space()
		if !p.byte(':') {
			return op, false
		}
		p.space()
		var bit int
		switch string(key) {
		case "index":
			bit = index
			op.Index, ok = p.int()
		case "time":
			bit = tm
			op.Time, ok = p.int64()
		case "process":
			bit = process
			op.Process, ok = p.int()
		case "type":
			bit = typ
			var s []byte
			if s, ok = p.str(); ok {
				op.Type, ok = known(s, "invoke", "ok", "fail", "info")
			}
		case "f":
			bit = f
			var s []byte
			if s, ok = p.str(); ok {
				op.F, ok = known(s, FTxn)
			}
		case "node":
			bit = node
			var s []byte
			if s, ok = p.str(); ok {
				if op.Node, ok = nodes[string(s)]; !ok {
					op.Node, ok = string(s), true
					nodes[op.Node] = op.Node
				}
			}
		case "error":
			bit = errno
			op.Error, ok = p.int()
		case "value":
			bit = value
			start := p.i
			if ok = p.skip(); ok {
				val = b[start:p.i]
			}
		}
		if !ok || bit == 0 || seen&bit != 0 {
			return op, false
		}
		seen |= bit
		p.space()
		if p.byte('}') {
			break
		}
		if !p.byte(',') {
			return op, false
		}
	}
	if !p.end() || seen&(tm|process|typ|f|value) != tm|process|typ|f|value {
		return op, false
	}
	var ok bool
	op.Value, ok = scanMops(val, a)
	return op, ok
}

// known is s as the one of names it spells (ok false: none).
func known(s []byte, names ...string) (string, bool) {
	for _, n := range names {
		if string(s) == n {
			return n, true
		}
	}
	return "", false
}

// readOp reads one line's operation as one of fs (at is its place, its
// index when the line names none).
func readOp(text string, at int, fs families) (Op, error) {
	if text[0] != '{' {
		return Op{}, fmt.Errorf("expected an operation (a JSON object), got %.40s", text)
	}
	var raw struct {
		Index   *int            `json:"index"`
		Time    *int64          `json:"time"`
		Process *int            `json:"process"`
		Type    *string         `json:"type"`
		F       *string         `json:"f"`
		Node    string          `json:"node"`
		Error   int             `json:"error"`
		Value   json.RawMessage `json:"value"`
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return Op{}, jsonProblem(err)
	}
	if rest := strings.TrimSpace(text[dec.InputOffset():]); rest != "" {
		return Op{}, fmt.Errorf("more after the operation (%.40s): one operation a line", rest)
	}
	var missing []string
	for _, f := range []struct {
		name string
		ok   bool
	}{{"time", raw.Time != nil}, {"process", raw.Process != nil}, {"type", raw.Type != nil}, {"f", raw.F != nil}, {"value", len(raw.Value) > 0}} {
		if !f.ok {
			missing = append(missing, strconv.Quote(f.name))
		}
	}
	if len(missing) > 0 {
		return Op{}, fmt.Errorf("missing %s (every operation has time, process, type, f and value)", strings.Join(missing, ", "))
	}
	op := Op{Index: at, Time: *raw.Time, Process: *raw.Process, Type: *raw.Type, F: *raw.F, Node: raw.Node, Error: raw.Error}
	if raw.Index != nil {
		op.Index = *raw.Index
	}
	switch op.Type {
	case "invoke", "ok", "fail", "info":
	default:
		return Op{}, fmt.Errorf("type: expected invoke, ok, fail or info, got %q", op.Type)
	}
	fam := fs.of(op.F)
	if fam == nil {
		return Op{}, fmt.Errorf("f: expected %s, got %q", fs.list, op.F)
	}
	err := fam.parse(&op, raw.Value)
	if err != nil {
		return Op{}, fmt.Errorf("value: %v", err)
	}
	return op, nil
}

// jsonProblem says what the JSON decoder found wrong in words of the
// history's own (no Go types).
func jsonProblem(err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Errorf("not JSON at byte %d: %s", syntax.Offset, strings.TrimPrefix(syntax.Error(), "json: "))
	case errors.As(err, &typ):
		want := "an integer"
		if typ.Type.Kind() == reflect.String {
			want = "a string"
		}
		return fmt.Errorf("%s: expected %s, got %s", typ.Field, want, typ.Value)
	}
	return errors.New(strings.TrimPrefix(err.Error(), "json: "))
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
	freed := map[int]*Op{} // process -> its last completion
	var out []*Txn
	var problems []string
	for i := range ops {
		op := &ops[i]
		if op.Type == "invoke" {
			if open[op.Process] != nil {
				problems = append(problems, fmt.Sprintf("index %d: process %d invoked again before its operation at index %d completed", op.Index, op.Process, open[op.Process].Invoke.Index))
				continue
			}
			if prev := freed[op.Process]; prev != nil && op.Time < prev.Time {
				problems = append(problems, fmt.Sprintf("index %d: process %d invoked at time %d, before its operation at index %d completed (time %d): a process runs one operation at a time", op.Index, op.Process, op.Time, prev.Index, prev.Time))
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
		freed[op.Process] = op
		if op.Time < t.Invoke.Time {
			problems = append(problems, fmt.Sprintf("index %d: completed at time %d, before its invocation at index %d (time %d)", op.Index, op.Time, t.Invoke.Index, t.Invoke.Time))
		}
		if op.F != t.Invoke.F {
			problems = append(problems, fmt.Sprintf("index %d: completes %q, but index %d invoked %q", op.Index, op.F, t.Invoke.Index, t.Invoke.F))
		} else if m := mismatch(*op, *t.Invoke); m != "" {
			problems = append(problems, fmt.Sprintf("index %d: %s", op.Index, m))
		} else if op.Type == "ok" && !sameMops(t.Invoke.Value, op.Value) {
			problems = append(problems, fmt.Sprintf("index %d: its micro-operations are not those index %d invoked (the same functions, keys and appended values, in order; a read's list filled in)", op.Index, t.Invoke.Index))
		} else if op.Type == "info" && len(op.Value) > 0 && !runOf(t.Invoke.Value, op.Value) {
			problems = append(problems, fmt.Sprintf("index %d: an unknown outcome's micro-operations are those index %d invoked or a run of them (what the client sent), got others", op.Index, t.Invoke.Index))
		}
		t.Complete, t.Type = op, op.Type
		if op.Node != "" {
			t.Node = op.Node
		}
		// an unknown outcome narrowed by its client to what it sent (a
		// transaction cut short, or whose statement ran on its own after
		// the server ended it) is judged on that alone
		if op.Type == "ok" || (op.Type == "info" && len(op.Value) > 0) {
			t.Mops = op.Value
		}
	}
	if err := refusal(problems); err != nil {
		return nil, err
	}
	return out, nil
}

// runOf says whether done is a run of invoked (consecutive micro-operations,
// as sameMops compares them).
func runOf(invoked, done []Mop) bool {
	for j := 0; j+len(done) <= len(invoked); j++ {
		if sameMops(invoked[j:j+len(done)], done) {
			return true
		}
	}
	return false
}

// sameMops says whether a completion did what was invoked: the same
// functions on the same keys, the same values appended.
func sameMops(invoked, done []Mop) bool {
	if len(invoked) != len(done) {
		return false
	}
	for i, m := range invoked {
		d := done[i]
		if m.F != d.F || m.Key != d.Key || m.F == "append" && m.Value != d.Value {
			return false
		}
	}
	return true
}

// parseMops reads a value's micro-operations: a hand-written scanner for
// the one shape they have (a history's reads hold long lists, which the
// general JSON decoder reads several times slower), and the decoder for
// what the scanner does not take (escapes in strings, and the words for
// what is wrong).
func parseMops(b []byte) ([]Mop, error) {
	if out, ok := scanMops(b, nil); ok {
		return out, nil
	}
	if string(b) == "null" {
		return nil, errors.New("expected a list of micro-operations, got null")
	}
	var out []Mop
	if err := json.Unmarshal(b, &out); err != nil {
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) || errors.As(err, new(*json.SyntaxError)) {
			return nil, fmt.Errorf("expected a list of micro-operations, got %.60s", b)
		}
		return nil, err // a micro-operation's own words (Mop.UnmarshalJSON)
	}
	if out == nil {
		out = []Mop{}
	}
	return out, nil
}

// scanMops reads a list of micro-operations in the shape a history
// writes them (ok false: anything else), its lists and itself cut from
// the arenas (nil: allocated each).
func scanMops(b []byte, a *arenas) ([]Mop, bool) {
	if a == nil { // one list: blocks the size of a few micro-operations
		a = &arenas{ints: arena[int]{block: 16}, mops: arena[Mop]{block: 4}}
	}
	p := &scan{b: b, a: a}
	p.space()
	if !p.byte('[') {
		return nil, false
	}
	start := a.mops.begin()
	p.space()
	if p.byte(']') {
		return a.mops.end(start), p.end()
	}
	for {
		m, ok := p.mop()
		if !ok {
			return nil, false
		}
		start = a.mops.push(start, m)
		p.space()
		if p.byte(']') {
			return a.mops.end(start), p.end()
		}
		if !p.byte(',') {
			return nil, false
		}
		p.space()
	}
}

type scan struct {
	b []byte
	i int
	a *arenas // where lists are cut from
}

// arena hands out slices cut from large shared blocks: a history's
// millions of short lists cost a few large allocations instead of one
// each. Each slice's capacity ends where it does, so an append to it
// copies instead of writing over its neighbour.
type arena[T any] struct {
	buf   []T
	block int // how many elements a block holds at least (0: arenaBlock)
}

// arenaBlock is how many elements a history reader's blocks hold.
const arenaBlock = 1 << 15

// begin is where the next slice starts.
func (a *arena[T]) begin() int {
	if a.buf == nil {
		a.buf = make([]T, 0, cmp.Or(a.block, arenaBlock))
	}
	return len(a.buf)
}

// push adds v to the slice begun at start and returns where it starts now
// (a full block: the slice so far moved to a new one).
func (a *arena[T]) push(start int, v T) int {
	if len(a.buf) == cap(a.buf) {
		moved := make([]T, 0, max(cmp.Or(a.block, arenaBlock), 2*(len(a.buf)-start+1)))
		a.buf = append(moved, a.buf[start:]...)
		start = 0
	}
	a.buf = append(a.buf, v)
	return start
}

// end is the slice begun at start (empty, not nil, when nothing was
// pushed).
func (a *arena[T]) end(start int) []T {
	n := len(a.buf)
	return a.buf[start:n:n]
}

// arenas are a history reader's: lists read and micro-operations.
type arenas struct {
	ints    arena[int]
	mops    arena[Mop]
	scratch []int         // the list being read
	chains  map[int][]int // key -> the longest list read of it that the next reads extended
}

// list is a read list l of key k kept: most reads of a key repeat an
// earlier read's list, or extend it by what was appended since, so each
// key's reads share one growing chain of values, and only a list that
// leaves its key's chain (a stale or odd read) takes room of its own.
// Every list's capacity ends where it does.
func (a *arenas) list(k int, l []int) []int {
	if len(l) == 0 {
		return []int{}
	}
	if a.chains == nil {
		a.chains = map[int][]int{}
	}
	ch := a.chains[k]
	switch {
	case len(l) <= len(ch) && slices.Equal(l, ch[:len(l)]):
	case len(ch) < len(l) && slices.Equal(ch, l[:len(ch)]):
		if cap(ch) < len(l) {
			ch = append(make([]int, 0, max(2*len(l), 8)), ch...)
		}
		ch = append(ch, l[len(ch):]...) // past every list handed out of it
		a.chains[k] = ch
	default:
		start := a.ints.begin()
		for _, v := range l {
			start = a.ints.push(start, v)
		}
		return a.ints.end(start)
	}
	return ch[:len(l):len(l)]
}

// end says whether nothing but space is left.
func (p *scan) end() bool {
	p.space()
	return p.i == len(p.b)
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

// int64 reads an integer of up to 19 digits that fits in 64 bits (a
// time in nanoseconds since 1970 has 19).
func (p *scan) int64() (int64, bool) {
	p.space()
	neg := p.byte('-')
	start := p.i
	var v uint64
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		v = v*10 + uint64(p.b[p.i]-'0')
		p.i++
	}
	if p.i == start || p.i-start > 19 || v > math.MaxInt64 {
		return 0, false
	}
	if neg {
		return -int64(v), true
	}
	return int64(v), true
}

// str reads a string without escapes or control characters (ok false:
// anything else).
func (p *scan) str() ([]byte, bool) {
	if !p.byte('"') {
		return nil, false
	}
	start := p.i
	for p.i < len(p.b) {
		switch c := p.b[p.i]; {
		case c == '"':
			p.i++
			return p.b[start : p.i-1], true
		case c == '\\' || c < 0x20:
			return nil, false
		}
		p.i++
	}
	return nil, false
}

// skip passes over one JSON array (its strings without escapes) without
// reading it.
func (p *scan) skip() bool {
	if !p.byte('[') {
		return false
	}
	for depth := 1; p.i < len(p.b); {
		switch p.b[p.i] {
		case '[', '{':
			depth++
		case ']', '}':
			if depth--; depth == 0 {
				p.i++
				return true
			}
		case '"':
			if _, ok := p.str(); !ok {
				return false
			}
			continue
		}
		p.i++
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
		l := p.a.scratch[:0]
		m.Read = true
		p.space()
		if !p.byte(']') {
			for {
				v, ok := p.int()
				if !ok {
					return m, false
				}
				l = append(l, v)
				p.space()
				if p.byte(']') {
					break
				}
				if !p.byte(',') {
					return m, false
				}
			}
		}
		p.a.scratch = l
		m.List = p.a.list(m.Key, l)
	}
	p.space()
	return m, p.byte(']')
}

// mismatch says how a completion differs from its invocation in what its
// family's values carry ("": it does not).
func mismatch(op, invoked Op) string {
	return familyOf(op).mismatch(op, invoked)
}
