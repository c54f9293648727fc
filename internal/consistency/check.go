package consistency

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hadrill/hadrill/internal/hderr"
)

// Models a history may be checked against, weakest first.
var Models = []string{"read-committed", "repeatable-read", "snapshot-isolation", "serializable", "strict-serializable"}

// ModelProblem says what is wrong with a --model ("": it is one of Models).
func ModelProblem(model string) string {
	if slices.Contains(Models, model) {
		return ""
	}
	return fmt.Sprintf("--model: expected one of %s, got %q", strings.Join(Models, ", "), model)
}

// forbidden says whether a model forbids an anomaly type: every model
// forbids what no database may do (G0, G1a/b/c, garbage, duplicates, an
// internal inconsistency, incompatible orders); repeatable read adds
// G-single, G2-item (G-nonadjacent and long forks among them), lost
// updates and non-repeatable reads; snapshot isolation G-single,
// G-nonadjacent (a long fork is one), lost updates and non-repeatable
// reads (write skew, a G2-item whose two reads that missed a write are
// next to each other, it allows); serializable every data cycle; strict serializable
// also the cycles through a client's own order (-process) and real time
// (-realtime) and a lost append (a read that began after the append was
// acknowledged and missed it: serializable may order that read first). A
// family's own types that strict serializability alone forbids (a set's
// stale element, a counter's stale read) its checker names to finish; its
// other types (a set's lost element) every model forbids.
func forbidden(model, anomaly string) bool {
	if anomaly == "lost" {
		return model == "strict-serializable"
	}
	base, ordered := anomaly, false
	for _, suffix := range []string{"-process", "-realtime"} {
		if b, ok := strings.CutSuffix(anomaly, suffix); ok {
			base, ordered = b, true
		}
	}
	if ordered && model != "strict-serializable" {
		return false
	}
	switch base {
	case "G-single", "lost-update", "non-repeatable-read", "G-nonadjacent", LongFork:
		return model != "read-committed"
	case "G2-item":
		return model == "repeatable-read" || model == "serializable" || model == "strict-serializable"
	}
	return true
}

// judge says whether a model forbids an anomaly type, and whether that is
// undecided: a read whose cycle is G-single or G2-item (the search cut
// short) is forbidden when the model forbids both, undecided when one.
func judge(model, anomaly string) (forbids, undecided bool) {
	if rest, ok := strings.CutPrefix(anomaly, Undecided); ok {
		a, b := forbidden(model, "G-single"+rest), forbidden(model, "G2-item"+rest)
		return a && b, a != b
	}
	return forbidden(model, anomaly), false
}

// unitOf is what an anomaly type's count counts: the reads that closed its
// cycles (an rw edge: a read that missed an append; a wr edge: one that
// saw it), the appends that closed a cycle of writes, the appends lost,
// the updates lost, and otherwise the reads that showed it.
func unitOf(anomaly string) string {
	switch {
	case strings.HasPrefix(anomaly, "G0"), anomaly == "lost":
		return "appends"
	case anomaly == "lost-update":
		return "updates"
	}
	return "reads"
}

// Anomaly is one type of anomaly found: how many (counted in Unit), whether
// the model forbids it, and the smallest example in words.
type Anomaly struct {
	Type      string `json:"type"`
	Count     int    `json:"count"`
	Unit      string `json:"unit"`
	Forbidden bool   `json:"forbidden"`
	Example   string `json:"example"`
	// First is when the earliest of them was complete (the last of its
	// transactions to end), in seconds from the history's start; nil when
	// not known.
	First *float64 `json:"first_s,omitempty"`
	size  int
	cycle []dep // a cycle type's example
}

// Counted is the count in words: "1 read", "3 appends".
func (a Anomaly) Counted() string {
	if a.Count == 1 {
		return "1 " + strings.TrimSuffix(a.Unit, "s")
	}
	return fmt.Sprintf("%d %s", a.Count, a.Unit)
}

// Result is a history checked against a model.
type Result struct {
	Valid     bool      `json:"valid"`
	Model     string    `json:"model"`
	Ops       int       `json:"operations"`
	OK        int       `json:"ok"`
	Fail      int       `json:"fail"`
	Info      int       `json:"info"`
	Anomalies []Anomaly `json:"anomalies"`
	// Forbidden are the anomaly types found that the model rules out.
	Forbidden []string `json:"forbidden"`
	// Undecided are the types found whose cycles' search was cut short
	// where the model forbids one of the two they may be: the history is
	// then neither valid nor, for want of a forbidden type, invalid.
	Undecided []string `json:"undecided"`
	// Escaped are the transactions the server ended before their commit
	// without saying so (recorded as info with error -1): their later
	// statements ran outside any transaction.
	Escaped int `json:"escaped"`
	// Reads are how stale the committed reads were, overall and per node
	// (list-append histories).
	Reads []Freshness `json:"reads,omitempty"`
	// Own are the figures of the history's own workload beyond its
	// anomalies and its reads (a set's per element).
	Own *Own `json:"own,omitempty"`
	// losses are the anomaly types of its family that are acknowledged
	// writes lost once final reads are in the history.
	losses []string
}

// Losses are the anomalies found that are acknowledged writes lost, once
// the history holds final reads made after every node applied what was
// committed, and that the model did not forbid already (a drill fails on
// them whatever its model: list-append's lost, which strict
// serializability alone forbids, is data lost once no later read, the
// final ones included, saw the append).
func (r *Result) Losses() []Anomaly {
	var out []Anomaly
	for _, a := range r.Anomalies {
		if a.Count > 0 && slices.Contains(r.losses, a.Type) && !slices.Contains(r.Forbidden, a.Type) {
			out = append(out, a)
		}
	}
	return out
}

// Own are a workload's own figures: what they count, in words, and by
// name (each a number).
type Own struct {
	Of     string             `json:"of"`
	Text   string             `json:"text"`
	Values map[string]float64 `json:"values"`
}

// ownFigures are v's figures (a struct of numbers, named by their JSON
// keys) counting of, in words text.
func ownFigures(of string, v any, text string) *Own {
	o := &Own{Of: of, Text: text, Values: map[string]float64{}}
	b, _ := json.Marshal(v)
	_ = json.Unmarshal(b, &o.Values)
	return o
}

// UnmarshalJSON reads a result, and a set history's figures where runs
// recorded before Own kept them ("set").
func (r *Result) UnmarshalJSON(b []byte) error {
	type plain Result // the same fields, without this method
	var v struct {
		plain
		Set *SetFigures `json:"set"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*r = Result(v.plain)
	if r.Own == nil && v.Set != nil {
		r.Own = v.Set.own()
	}
	return nil
}

// tally counts a transaction's outcome (and an escape: the server ended
// it before its commit without an error).
func (r *Result) tally(t *Txn) {
	if t.Complete != nil && t.Complete.Error == EscapedError {
		r.Escaped++
	}
	switch t.Type {
	case "ok":
		r.OK++
	case "fail":
		r.Fail++
	default:
		r.Info++
	}
}

// Count is how many anomalies of the given types the check found.
func (r *Result) Count(types ...string) int {
	n := 0
	for _, a := range r.Anomalies {
		if slices.Contains(types, a.Type) {
			n += a.Count
		}
	}
	return n
}

// findings are a checker's anomalies by type, each with its smallest
// example.
type findings map[string]*Anomaly

// note counts one anomaly of typ (counted in unit), keeps its example when
// it is smaller (size) than the one kept, and when the transactions ts that
// show it had ended.
func (f findings) note(typ, unit, example string, size int, ts ...*Txn) {
	a := f[typ]
	if a == nil {
		a = &Anomaly{Type: typ, Unit: unit, size: size + 1}
		f[typ] = a
	}
	a.Count++
	if size < a.size {
		a.Example, a.size = example, size
	}
	a.seen(ended(ts...))
}

// finish judges what was found against the model (strictOnly: the
// types of the history's own that strict serializability alone forbids,
// the others judged by forbidden).
func (r *Result) finish(found map[string]*Anomaly, strictOnly ...string) {
	r.Anomalies, r.Forbidden, r.Undecided = []Anomaly{}, []string{}, []string{}
	for _, a := range found {
		forbids, undecided := judge(r.Model, a.Type)
		if slices.Contains(strictOnly, a.Type) {
			forbids, undecided = r.Model == "strict-serializable", false
		}
		a.Forbidden = forbids
		r.Anomalies = append(r.Anomalies, *a)
		switch {
		case forbids:
			r.Forbidden = append(r.Forbidden, a.Type)
		case undecided:
			r.Undecided = append(r.Undecided, a.Type)
		}
	}
	sort.Slice(r.Anomalies, func(i, j int) bool { return r.Anomalies[i].Type < r.Anomalies[j].Type })
	sort.Strings(r.Forbidden)
	sort.Strings(r.Undecided)
	r.Valid = len(r.Forbidden) == 0 && len(r.Undecided) == 0
}

// checker holds one history's analysis.
type checker struct {
	txns    []*Txn
	writer  map[int]*appends // key -> value -> the transaction that appended it
	order   map[int][]int    // key -> its versions' order (the longest read)
	keys    []int            // every key with an order, sorted
	g       *graph
	seq     []int32 // transaction -> its place among its process's committed ones (-1: none)
	found   findings
	longest map[int][]int // key -> the longest list a committed transaction read of it
	marks   map[int]marks // key -> where its longest read first goes wrong
}

// add counts one anomaly of kind, in its unit (findings.note).
func (c *checker) add(kind, example string, size int, ts ...*Txn) {
	c.found.note(kind, unitOf(kind), example, size, ts...)
}

// seen keeps the earliest time an instance was complete (ns; <0: none).
func (a *Anomaly) seen(at int64) {
	if at < 0 {
		return
	}
	if s := float64(at) / 1e9; a.First == nil || s < *a.First {
		a.First = &s
	}
}

// ended is when the last of the transactions ended (its completion, or
// its invocation when it has none), in the history's ns; -1 for none.
func ended(ts ...*Txn) int64 {
	at := int64(-1)
	for _, t := range ts {
		switch {
		case t == nil:
		case t.Complete != nil:
			at = max(at, t.Complete.Time)
		case t.Invoke != nil:
			at = max(at, t.Invoke.Time)
		}
	}
	return at
}

// Check analyses a history against a model (one of Models), by the
// checker of its operations' family (list-append's when they carry no
// Data; one family a history, as Read requires). It stops when ctx ends.
func Check(ctx context.Context, ops []Op, model string) (*Result, error) {
	if !slices.Contains(Models, model) {
		return nil, fmt.Errorf("unknown model %q (known: %s)", model, strings.Join(Models, ", "))
	}
	fam := ListAppendOps
	if len(ops) > 0 {
		fam = familyOf(ops[0])
	}
	for i := range ops {
		o := &ops[i] // not copied: a history may hold millions
		switch {
		case o.Data != nil && o.Data.Family() != fam, o.Data == nil && fam != ListAppendOps:
			return nil, hderr.User("index %d: f: %q in a history of %q operations (one workload a history)", o.Index, o.F, ops[0].F)
		case !slices.Contains(fam.Functions(), o.F):
			return nil, hderr.User("index %d: f: expected %s (%s), got %q", o.Index, strings.Join(fam.Functions(), ", "), fam.Name(), o.F)
		}
	}
	res, err := fam.check(ctx, ops, model)
	if res != nil {
		res.losses = fam.losses()
	}
	return res, err
}

// checkAppend checks a list-append history.
func checkAppend(ctx context.Context, ops []Op, model string) (*Result, error) {
	c, err := analyse(ctx, ops)
	if err != nil {
		return nil, err
	}
	res := &Result{Model: model, Ops: len(ops)}
	for _, t := range c.txns {
		res.tally(t)
	}
	res.finish(c.found)
	res.Reads = c.freshness()
	return res, nil
}

// analyse pairs a list-append history's operations and runs every check
// of it.
func analyse(ctx context.Context, ops []Op) (*checker, error) {
	txns, err := pair(ops)
	if err != nil {
		return nil, err
	}
	c := &checker{txns: txns, writer: map[int]*appends{}, order: map[int][]int{}, g: newGraph(len(txns)),
		found: findings{}, longest: map[int][]int{}, marks: map[int]marks{}}
	if err := c.writers(); err != nil {
		return nil, err
	}
	c.longestReads()
	c.reads()
	c.versions()
	c.lost()
	c.lostUpdates()
	c.members()
	events, realtimeEdges := c.timeline()
	c.g.deps = slices.Grow(c.g.deps, c.edgesAtMost()+realtimeEdges) // once: see edgesAtMost
	c.dependencies()
	c.ordering(events)
	c.g.seal()
	return c, c.cycles(ctx)
}

func name(t *Txn) string { return fmt.Sprintf("T%d", t.ID) }

// describe names a transaction with its process and node.
func describe(t *Txn) string {
	s := fmt.Sprintf("T%d (process %d", t.ID, t.Process)
	if t.Node != "" {
		s += ", " + t.Node
	}
	return s + ", " + t.Type + ")"
}

// writers indexes every append by key and value; a value appended twice
// to a key is refused (a history's shape: each value once per key), since
// a read of it could not say which append it saw. A first pass finds each
// key's values' range, so a key whose values are dense (as a workload's
// counters are) indexes them in a slice, not a map.
func (c *checker) writers() error {
	type span struct{ lo, hi, n int }
	spans := map[int]*span{}
	for _, t := range c.txns {
		for _, m := range t.Mops {
			if m.F != "append" {
				continue
			}
			if sp := spans[m.Key]; sp == nil {
				spans[m.Key] = &span{m.Value, m.Value, 1}
			} else {
				sp.lo, sp.hi, sp.n = min(sp.lo, m.Value), max(sp.hi, m.Value), sp.n+1
			}
		}
	}
	for k, sp := range spans {
		c.writer[k] = newAppends(sp.lo, sp.hi, sp.n)
	}
	var problems []string
	for _, t := range c.txns {
		for _, m := range t.Mops {
			if m.F != "append" {
				continue
			}
			if prev := c.writer[m.Key].get(m.Value); prev != nil {
				problems = append(problems, fmt.Sprintf("index %d: appends %d to key %d, which the operation at index %d appended already (each value is appended once per key)", t.Invoke.Index, m.Value, m.Key, prev.Invoke.Index))
				continue
			}
			c.writer[m.Key].set(m.Value, t)
		}
	}
	return refusal(problems)
}

// writerOf is the transaction that appended v to key k (nil: none did).
func (c *checker) writerOf(k, v int) *Txn { return c.writer[k].get(v) }

// appends are one key's appended values and the transactions that
// appended them: a slice from lo when the values fill at least half of
// their range, else a map.
type appends struct {
	lo     int
	dense  []*Txn
	sparse map[int]*Txn
}

// newAppends is room for n values from lo to hi.
func newAppends(lo, hi, n int) *appends {
	if span := hi - lo + 1; span > 0 && span <= 2*n {
		return &appends{lo: lo, dense: make([]*Txn, span)}
	}
	return &appends{sparse: make(map[int]*Txn, n)}
}

// get is the transaction that appended v (nil: none; a nil *appends is a
// key nothing was appended to).
func (a *appends) get(v int) *Txn {
	switch {
	case a == nil:
		return nil
	case a.sparse != nil:
		return a.sparse[v]
	case v < a.lo || uint(v-a.lo) >= uint(len(a.dense)): // v-a.lo as unsigned: the distance, even past the largest int
		return nil
	}
	return a.dense[v-a.lo]
}

// set records that t appended v (within the range it was made for).
func (a *appends) set(v int, t *Txn) {
	if a.sparse != nil {
		a.sparse[v] = t
		return
	}
	a.dense[v-a.lo] = t
}

// lastAppend is the last value t appended to key k and how many it
// appended to it.
func lastAppend(t *Txn, k int) (last, n int) {
	for _, m := range t.Mops {
		if m.F == "append" && m.Key == k {
			last, n = m.Value, n+1
		}
	}
	return last, n
}

// appendKeys are the keys t appended to, each once, in order.
func appendKeys(t *Txn) []int {
	var keys []int
	for _, m := range t.Mops {
		if m.F == "append" && !slices.Contains(keys, m.Key) {
			keys = append(keys, m.Key)
		}
	}
	slices.Sort(keys)
	return keys
}

// refusal is the user error naming a history's problems (at most
// maxProblems of them), or nil.
func refusal(problems []string) error {
	if len(problems) == 0 {
		return nil
	}
	if len(problems) > maxProblems {
		problems = append(problems[:maxProblems], fmt.Sprintf("… and %d more", len(problems)-maxProblems))
	}
	return hderr.User("%s", strings.Join(problems, "\n"))
}

// longestReads finds each key's longest read by a committed transaction,
// and where its elements first go wrong.
func (c *checker) longestReads() {
	for _, t := range c.txns {
		if t.Type != "ok" {
			continue
		}
		for _, m := range t.Mops {
			if m.F == "r" && m.Read {
				if l, ok := c.longest[m.Key]; !ok || len(m.List) > len(l) {
					c.longest[m.Key] = m.List
				}
			}
		}
	}
	for k, l := range c.longest {
		c.marks[k] = c.marksOf(k, l)
	}
}

// marks are where a read's elements first go wrong (-1: nowhere): a value
// read twice, one never appended, one a failed transaction appended.
type marks struct{ dup, garbage, aborted int }

func (c *checker) marksOf(k int, l []int) marks {
	m := marks{-1, -1, -1}
	seen := make(map[int]bool, len(l))
	for i, v := range l {
		if seen[v] && m.dup < 0 {
			m.dup = i
		}
		seen[v] = true
		w := c.writerOf(k, v)
		switch {
		case w == nil && m.garbage < 0:
			m.garbage = i
		case w != nil && w.Type == "fail" && m.aborted < 0:
			m.aborted = i
		}
	}
	return m
}

// elements checks every element of one committed read: no value twice,
// none never appended, none from a failed transaction. A read that is a
// prefix of its key's longest read goes wrong where that one does, if it
// reaches so far; each read that shows it counts.
func (c *checker) elements(t *Txn, m Mop) {
	mk := c.marks[m.Key]
	if !prefix(m.List, c.longest[m.Key]) {
		mk = c.marksOf(m.Key, m.List)
	}
	n := len(m.List)
	if mk.dup >= 0 && mk.dup < n {
		c.add("duplicate-elements", fmt.Sprintf("%s read key %d = %s: %d twice", describe(t), m.Key, short(m.List), m.List[mk.dup]), 1, t)
	}
	if mk.garbage >= 0 && mk.garbage < n {
		c.add("garbage-read", fmt.Sprintf("%s read key %d = %s: nothing ever appended %d to it", describe(t), m.Key, short(m.List), m.List[mk.garbage]), 1, t)
	}
	if mk.aborted >= 0 && mk.aborted < n {
		v := m.List[mk.aborted]
		c.add("G1a", fmt.Sprintf("%s read key %d = %s: %d was appended by %s, which failed (an aborted read)", describe(t), m.Key, short(m.List), v, describe(c.writerOf(m.Key, v))), 2, t, c.writerOf(m.Key, v))
	}
}

// prefix says whether a is a prefix of b.
func prefix(a, b []int) bool { return len(a) <= len(b) && slices.Equal(a, b[:len(a)]) }

// reads checks what each committed transaction read on its own: no value
// twice, none never appended, none from a failed transaction or between
// another's appends, and its own writes in its later reads. A read that is
// a prefix of its key's longest read has the same elements: the longest
// is checked once (each read's last element apart).
func (c *checker) reads() {
	for _, t := range c.txns {
		if t.Type != "ok" {
			continue
		}
		state := map[int][]int{} // key -> what t must read next (known)
		known := map[int]bool{}
		own := map[int][]int{}   // key -> t's appends so far
		since := map[int][]int{} // key -> t's appends since its last read of it
		for _, m := range t.Mops {
			if m.F == "append" {
				state[m.Key] = append(state[m.Key], m.Value)
				own[m.Key] = append(own[m.Key], m.Value)
				since[m.Key] = append(since[m.Key], m.Value)
				continue
			}
			if !m.Read {
				continue
			}
			c.elements(t, m)
			if n := len(m.List); n > 0 {
				last := m.List[n-1]
				if w := c.writerOf(m.Key, last); w != nil && w != t && w.Type != "fail" {
					if mine, n := lastAppend(w, m.Key); n > 1 && mine != last {
						c.add("G1b", fmt.Sprintf("%s read key %d = %v, ending in %d, which %s appended before its own later %d (an intermediate read)",
							describe(t), m.Key, m.List, last, describe(w), mine), 2, t, w)
					}
				}
			}
			// internal: what this transaction must see of its own work; a
			// later read that extends the earlier one with others' appends
			// before its own is a non-repeatable read (read committed
			// allows it; one snapshot does not)
			before := state[m.Key][:len(state[m.Key])-len(since[m.Key])]
			switch {
			case known[m.Key] && !slices.Equal(m.List, state[m.Key]) && prefix(before, m.List) && hasSuffix(m.List, since[m.Key]):
				c.add("non-repeatable-read", fmt.Sprintf("%s read key %d = %s where its own earlier operations say %s: others' appends came between (its reads are not one snapshot)",
					describe(t), m.Key, apart(m.List, state[m.Key]), apart(state[m.Key], m.List)), 1, t)
			case known[m.Key] && !slices.Equal(m.List, state[m.Key]):
				c.add("internal", fmt.Sprintf("%s read key %d = %s where its own earlier operations say %s", describe(t), m.Key, apart(m.List, state[m.Key]), apart(state[m.Key], m.List)), 1, t)
			case !known[m.Key] && len(own[m.Key]) > 0 && !hasSuffix(m.List, own[m.Key]):
				c.add("internal", fmt.Sprintf("%s read key %d = %s without its own appends %v at the end", describe(t), m.Key, short(m.List), own[m.Key]), 1, t)
			}
			state[m.Key], known[m.Key], since[m.Key] = slices.Clip(m.List), true, nil // clipped: an append to it copies, never writes into the read
		}
	}
}

func hasSuffix(list, suffix []int) bool {
	return len(list) >= len(suffix) && slices.Equal(list[len(list)-len(suffix):], suffix)
}

// versions infers each key's order of versions from the longest read of
// it by a committed transaction; every other read must be a prefix of it.
func (c *checker) versions() {
	for _, t := range c.txns {
		if t.Type != "ok" {
			continue
		}
		for _, m := range t.Mops {
			if m.F == "r" && m.Read && !prefix(m.List, c.longest[m.Key]) {
				c.add("incompatible-order", fmt.Sprintf("%s read key %d = %s, which is not a prefix of %s, its longest read: no one order of versions explains both", describe(t), m.Key, apart(m.List, c.longest[m.Key]), apart(c.longest[m.Key], m.List)), 1, t)
			}
		}
	}
	for k, l := range c.longest {
		c.order[k] = l
		c.keys = append(c.keys, k)
	}
	sort.Ints(c.keys)
}

// lost finds appends acknowledged as committed that no read ever saw,
// though a committed read of the key began after the append completed.
func (c *checker) lost() {
	observed := map[int]map[int]bool{}
	for k, l := range c.order {
		observed[k] = map[int]bool{}
		for _, v := range l {
			observed[k][v] = true
		}
	}
	lastRead := map[int]*Txn{} // key -> the committed reader of it that began last
	for _, r := range c.txns {
		if r.Type != "ok" {
			continue
		}
		for _, m := range r.Mops {
			if m.F == "r" && m.Read {
				if l := lastRead[m.Key]; l == nil || r.Invoke.Time > l.Invoke.Time {
					lastRead[m.Key] = r
				}
			}
		}
	}
	for _, w := range c.txns {
		if w.Type != "ok" || w.Complete == nil {
			continue
		}
		for _, m := range w.Mops {
			k, v := m.Key, m.Value
			if m.F != "append" {
				continue
			}
			if r := lastRead[k]; !observed[k][v] && r != nil && r.Invoke.Time > w.Complete.Time {
				c.add("lost", fmt.Sprintf("%s appended %d to key %d and committed; %s began after that, read key %d, and no read ever saw %d", describe(w), v, k, describe(r), k, v), 2, w, r)
			}
		}
	}
}

// externalRead is the micro-operation in which a transaction read a key
// before its own appends to it (ok: it read the key from others at all).
func externalRead(t *Txn, k int) (at int, ok bool) {
	for i, m := range t.Mops {
		if m.Key != k {
			continue
		}
		if m.F == "append" {
			return -1, false
		}
		if m.Read {
			return i, true
		}
	}
	return -1, false
}

// lostUpdates finds committed transactions that read the same version of a
// key and both appended to it (P4: one of them did not see the other).
func (c *checker) lostUpdates() {
	type at struct {
		k    int
		last int
		n    int
	}
	by := map[at][]*Txn{}
	var order []at
	for _, t := range c.txns {
		if t.Type != "ok" {
			continue
		}
		for _, k := range appendKeys(t) {
			i, ok := externalRead(t, k)
			if !ok {
				continue
			}
			l := t.Mops[i].List
			key := at{k, -1, len(l)}
			if len(l) > 0 {
				key.last = l[len(l)-1]
			}
			if by[key] == nil {
				order = append(order, key)
			}
			by[key] = append(by[key], t)
		}
	}
	for _, key := range order {
		if ts := by[key]; len(ts) > 1 {
			version := "the empty list"
			if key.n > 0 {
				version = fmt.Sprintf("the version ending in %d", key.last)
			}
			example := fmt.Sprintf("%s and %s both read key %d at %s and both appended to it: each wrote without the other's", describe(ts[0]), describe(ts[1]), key.k, version)
			for _, t := range ts[1:] { // of k transactions that wrote over one version, k-1 updates are lost
				c.add("lost-update", example, 2, ts[0], t)
			}
		}
	}
}

// link adds an edge between two transactions of the graph.
func (c *checker) link(from, to *Txn, d dep) {
	if from == nil || to == nil || from == to || !c.g.in[from.ID] || !c.g.in[to.ID] {
		return
	}
	d.from, d.to = int32(from.ID), int32(to.ID)
	c.g.add(d)
}

// members marks the graph's nodes: the committed transactions, and the
// unfinished ones whose write was read (they took effect).
func (c *checker) members() {
	for _, t := range c.txns {
		if t.Type == "ok" {
			c.g.in[t.ID] = true
		}
	}
	for _, k := range c.keys {
		for _, v := range c.order[k] {
			if w := c.writerOf(k, v); w != nil && w.Type == "info" {
				c.g.in[w.ID] = true
			}
		}
	}
}

// dependencies draws Adya's edges between transactions: ww between the
// writers of consecutive versions, wr from a version's writer to its
// readers, rw from a version's readers to the writer of the next.
func (c *checker) dependencies() {
	// where a value is in its key's order: the read's own length, for a
	// read that is a prefix of an order holding each value once (the
	// rule); else from a map of the order, made for the keys that need it
	pos := map[int]map[int]int{}
	place := func(k, v, n int) (int, bool) {
		if l := c.order[k]; n <= len(l) && l[n-1] == v && c.marks[k].dup < 0 {
			return n - 1, true
		}
		if pos[k] == nil {
			pos[k] = make(map[int]int, len(c.order[k]))
			for i, v := range c.order[k] {
				pos[k][v] = i
			}
		}
		p, ok := pos[k][v]
		return p, ok
	}
	for _, k := range c.keys {
		l := c.order[k]
		for i := 0; i+1 < len(l); i++ {
			c.link(c.writerOf(k, l[i]), c.writerOf(k, l[i+1]), dep{kind: ww, key: k, a: l[i], b: l[i+1]})
		}
	}
	var done []int // the keys a transaction read so far: few, a list rather than a map
	for _, t := range c.txns {
		if t.Type != "ok" {
			continue
		}
		done = done[:0]
		for _, m := range t.Mops {
			if m.F != "r" || !m.Read || slices.Contains(done, m.Key) {
				continue
			}
			done = append(done, m.Key) // one external read of a key is enough: the others are the same (or internal)
			at, ok := externalRead(t, m.Key)
			if !ok {
				continue
			}
			l := t.Mops[at].List
			order := c.order[m.Key]
			next := 0
			var seenWriter *Txn
			if len(l) > 0 {
				last := l[len(l)-1]
				seenWriter = c.writerOf(m.Key, last)
				c.link(seenWriter, t, dep{kind: wr, key: m.Key, mop: int32(at)})
				p, ok := place(m.Key, last, len(l))
				if !ok {
					continue
				}
				next = p + 1
			}
			// the next version is the next value another transaction
			// appended (the rest of the seen writer's are its own)
			for next < len(order) && c.writerOf(m.Key, order[next]) == seenWriter && seenWriter != nil {
				next++
			}
			if next < len(order) {
				c.link(t, c.writerOf(m.Key, order[next]), dep{kind: rw, key: m.Key, mop: int32(at), b: order[next]})
			}
		}
	}
}

// edgesAtMost bounds the edges dependencies and ordering draw but for
// real time's (which timeline counts): a ww edge a version, a wr
// and an rw edge a committed read, a process edge a transaction. The
// graph's edges are its largest slice: grown by doubling, they were
// copied about twice over, and held up to twice the room they needed.
func (c *checker) edgesAtMost() int {
	n := len(c.txns)
	for _, k := range c.keys {
		n += len(c.order[k])
	}
	for _, t := range c.txns {
		if t.Type != "ok" {
			continue
		}
		for _, m := range t.Mops {
			if m.F == "r" && m.Read {
				n += 2
			}
		}
	}
	return n
}

// event is a transaction's start or (committed) end in real time.
type event struct {
	at     int64
	finish bool
	t      *Txn
}

// timeline numbers each process's committed transactions and orders the
// graph's transactions' starts and ends in real time (a start at the same
// moment as an end does not follow it), and counts the real-time edges
// ordering will draw, so the graph's edges are given their room once.
func (c *checker) timeline() ([]event, int) {
	c.seq = make([]int32, len(c.txns))
	n := map[int]int32{} // process -> its committed transactions so far
	events := make([]event, 0, 2*len(c.txns))
	for _, t := range c.txns {
		c.seq[t.ID] = -1
		if !c.g.in[t.ID] {
			continue
		}
		if t.Type == "ok" {
			c.seq[t.ID] = n[t.Process]
			n[t.Process]++
		}
		events = append(events, event{t.Invoke.Time, false, t})
		if t.Complete != nil && t.Type == "ok" {
			events = append(events, event{t.Complete.Time, true, t})
		}
	}
	slices.SortStableFunc(events, func(a, b event) int {
		if c := cmp.Compare(a.at, b.at); c != 0 {
			return c
		}
		switch {
		case a.finish == b.finish:
			return 0
		case b.finish:
			return -1
		}
		return 1
	})
	return events, c.sweep(events, false)
}

// ordering draws the clients' own order: each process's committed
// transactions one after the other, and real time: a transaction that
// completed before another began precedes it (only the latest ones that
// did: the rest follow by transitivity), from timeline's events.
func (c *checker) ordering(events []event) {
	last := map[int]*Txn{}
	for _, t := range c.txns {
		if !c.g.in[t.ID] || t.Type != "ok" {
			continue
		}
		if p := last[t.Process]; p != nil {
			c.link(p, t, dep{kind: process})
		}
		last[t.Process] = t
	}
	c.sweep(events, true)
}

// sweep walks the events keeping the completed transactions not known to
// precede another completed one, and counts (draw: also draws) an edge
// from each of them to each transaction that starts.
func (c *checker) sweep(events []event, draw bool) (n int) {
	var frontier []*Txn
	for _, e := range events {
		if !e.finish {
			n += len(frontier)
			if draw {
				for _, f := range frontier {
					c.link(f, e.t, dep{kind: realtime})
				}
			}
			continue
		}
		kept := frontier[:0]
		for _, f := range frontier {
			if f.Complete.Time >= e.t.Invoke.Time { // e.t did not begin after f: both stay
				kept = append(kept, f)
			}
		}
		frontier = append(kept, e.t)
	}
	return n
}

// EscapedError is the error a client records for a transaction the
// server ended before its commit without saying so.
const EscapedError = -1

// Invalid is a history that shows anomalies its model forbids: a result
// of the check (its own exit status), not a failure to check.
type Invalid struct{ Result *Result }

func (e *Invalid) Error() string {
	var parts []string
	for _, a := range e.Result.Anomalies {
		if a.Forbidden {
			parts = append(parts, fmt.Sprintf("%s (%s)", a.Type, a.Counted()))
		}
	}
	return fmt.Sprintf("not %s: %s", e.Result.Model, strings.Join(parts, ", "))
}

// UndecidedError is a history the check could not judge: nothing it
// found is forbidden, but the type of some cycles was left open (a
// failure to check, not a verdict).
type UndecidedError struct{ Result *Result }

func (e *UndecidedError) Error() string { return e.Result.Verdict() }

// Err is the check's verdict as an error: nil when valid, *Invalid when
// the model forbids what was found, *UndecidedError when it cannot say.
func (r *Result) Err() error {
	switch {
	case len(r.Forbidden) > 0:
		return &Invalid{Result: r}
	case len(r.Undecided) > 0:
		return &UndecidedError{Result: r}
	}
	return nil
}

// Verdict says in words what the model makes of the history.
func (r *Result) Verdict() string {
	switch {
	case len(r.Forbidden) > 0:
		return "not " + r.Model + ": " + strings.Join(r.Forbidden, ", ")
	case len(r.Undecided) > 0:
		return fmt.Sprintf("undecided for %s: the search of some cycles (%s) stopped after %d steps before it could tell a G-single, which %s forbids, from a G2-item, which it allows",
			r.Model, strings.Join(r.Undecided, ", "), maxSteps, r.Model)
	}
	return "valid: nothing " + r.Model + " forbids"
}

// short writes a read's list as an example shows it: whole when short,
// else its first values and its last (where a read's news is), with how
// many there are.
func short(l []int) string {
	const head, tail = 3, 5
	if len(l) <= head+tail+2 {
		return fmt.Sprint(l)
	}
	return fmt.Sprintf("%v … %v (%d values)", strings.Trim(fmt.Sprint(l[:head]), "]"), strings.Trim(fmt.Sprint(l[len(l)-tail:]), "["), len(l))
}

// apart writes list a as an example shows it beside b: whole when short,
// else around where the two first differ (the values there and two either
// side), with how many there are.
func apart(a, b []int) string {
	if len(a) <= 10 {
		return fmt.Sprint(a)
	}
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from, to := max(i-2, 0), min(i+3, len(a))
	out := strings.Trim(fmt.Sprint(a[from:to]), "[]")
	if from > 0 {
		out = "… " + out
	}
	if to < len(a) {
		out += " …"
	}
	return fmt.Sprintf("[%s] (%d values; from the %s)", out, len(a), ordinal(from+1))
}

func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s", n, suffix)
}
