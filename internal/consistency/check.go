package consistency

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Models a history may be checked against, weakest first.
var Models = []string{"read-committed", "repeatable-read", "snapshot-isolation", "serializable", "strict-serializable"}

// forbidden says whether a model forbids an anomaly type: every model
// forbids what no database may do (G0, G1a/b/c, garbage, duplicates, an
// internal inconsistency, incompatible orders, a lost append);
// repeatable read adds G-single, G2-item, lost updates and non-repeatable
// reads; snapshot isolation G-single, lost updates and non-repeatable
// reads (write skew, G2-item, it allows);
// serializable every data cycle; strict serializable also the cycles
// through a client's own order (-process) and real time (-realtime).
func forbidden(model, anomaly string) bool {
	base, suffix, _ := strings.Cut(anomaly, "-process")
	if suffix == "" && !strings.HasSuffix(anomaly, "-process") {
		base, _, _ = strings.Cut(anomaly, "-realtime")
	}
	ordered := strings.HasSuffix(anomaly, "-process") || strings.HasSuffix(anomaly, "-realtime")
	if ordered && model != "strict-serializable" {
		return false
	}
	switch base {
	case "G-single", "lost-update", "non-repeatable-read":
		return model != "read-committed"
	case "G2-item":
		return model == "repeatable-read" || model == "serializable" || model == "strict-serializable"
	}
	return true
}

// Anomaly is one type of anomaly found: how many times, whether the model
// forbids it, and the smallest example in words.
type Anomaly struct {
	Type      string `json:"type"`
	Count     int    `json:"count"`
	Forbidden bool   `json:"forbidden"`
	Example   string `json:"example"`
	size      int
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
	// Escaped are the transactions the server ended before their commit
	// without saying so (recorded as info with error -1): their later
	// statements ran outside any transaction.
	Escaped int `json:"escaped"`
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

// edge kinds of the dependency graph
const (
	ww = 1 << iota
	wr
	rw
	process
	realtime
)

var kindName = map[int]string{ww: "ww", wr: "wr", rw: "rw", process: "process", realtime: "realtime"}

type edge struct {
	to   int
	kind int
	why  func() string // the edge in words (said only for the cycles reported)
}

// checker holds one history's analysis.
type checker struct {
	txns     []*Txn
	writer   map[int]map[int]*Txn // key -> value -> the transaction that appended it
	order    map[int][]int        // key -> its versions' order (the longest read)
	graph    map[int][]edge       // transaction id -> edges out
	found    map[string]*Anomaly
	nodeOf   map[int]bool // transactions in the graph: committed, or observed
	appended map[*Txn]map[int][]int
	longest  map[int][]int // key -> the longest list a committed transaction read of it
	checked  map[int]bool  // key -> its longest list's elements have been checked
}

func (c *checker) add(kind, example string, size int) {
	a := c.found[kind]
	if a == nil {
		a = &Anomaly{Type: kind, size: -1}
		c.found[kind] = a
	}
	a.Count++
	if a.size < 0 || size < a.size {
		a.Example, a.size = example, size
	}
}

// Check analyses a history against a model (one of Models).
func Check(ops []Op, model string) (*Result, error) {
	if !slices.Contains(Models, model) {
		return nil, fmt.Errorf("unknown model %q (known: %s)", model, strings.Join(Models, ", "))
	}
	if len(ops) > 0 && bankOp(ops[0].F) {
		return checkBank(ops, model)
	}
	txns, err := pair(ops)
	if err != nil {
		return nil, err
	}
	c := &checker{txns: txns, writer: map[int]map[int]*Txn{}, order: map[int][]int{}, graph: map[int][]edge{},
		found: map[string]*Anomaly{}, nodeOf: map[int]bool{}, appended: map[*Txn]map[int][]int{}, longest: map[int][]int{}, checked: map[int]bool{}}
	res := &Result{Model: model, Ops: len(ops)}
	for _, t := range txns {
		res.tally(t)
	}
	c.writers()
	c.longestReads()
	c.reads()
	c.versions()
	c.lost()
	c.lostUpdates()
	c.dependencies()
	c.ordering()
	c.cycles()
	for _, a := range c.found {
		a.Forbidden = forbidden(model, a.Type)
		res.Anomalies = append(res.Anomalies, *a)
		if a.Forbidden {
			res.Forbidden = append(res.Forbidden, a.Type)
		}
	}
	sort.Slice(res.Anomalies, func(i, j int) bool { return res.Anomalies[i].Type < res.Anomalies[j].Type })
	sort.Strings(res.Forbidden)
	res.Valid = len(res.Forbidden) == 0
	return res, nil
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

// writers indexes every append by key and value.
func (c *checker) writers() {
	for _, t := range c.txns {
		for _, m := range t.Mops {
			if m.F != "append" {
				continue
			}
			if c.writer[m.Key] == nil {
				c.writer[m.Key] = map[int]*Txn{}
			}
			if prev := c.writer[m.Key][m.Value]; prev != nil && prev != t {
				c.add("duplicate-appends", fmt.Sprintf("%s and %s both appended %d to key %d (each value is appended once per key)", describe(prev), describe(t), m.Value, m.Key), 2)
				continue
			}
			c.writer[m.Key][m.Value] = t
			if c.appended[t] == nil {
				c.appended[t] = map[int][]int{}
			}
			c.appended[t][m.Key] = append(c.appended[t][m.Key], m.Value)
		}
	}
}

// longestReads finds each key's longest read by a committed transaction.
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
}

// elements checks every element of one read: no value twice, none never
// appended, none from a failed transaction.
func (c *checker) elements(t *Txn, m Mop) {
	seen := make(map[int]bool, len(m.List))
	for _, v := range m.List {
		if seen[v] {
			c.add("duplicate-elements", fmt.Sprintf("%s read key %d = %s: %d twice", describe(t), m.Key, short(m.List), v), 1)
			break
		}
		seen[v] = true
	}
	for _, v := range m.List {
		w := c.writer[m.Key][v]
		switch {
		case w == nil:
			c.add("garbage-read", fmt.Sprintf("%s read key %d = %s: nothing ever appended %d to it", describe(t), m.Key, short(m.List), v), 1)
		case w.Type == "fail" && w != t:
			c.add("G1a", fmt.Sprintf("%s read key %d = %s: %d was appended by %s, which failed (an aborted read)", describe(t), m.Key, short(m.List), v, describe(w)), 2)
		}
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
			whole := !prefix(m.List, c.longest[m.Key]) || !c.checked[m.Key] && len(m.List) == len(c.longest[m.Key])
			if whole && prefix(m.List, c.longest[m.Key]) {
				c.checked[m.Key] = true
			}
			if whole {
				c.elements(t, m)
			}
			if n := len(m.List); n > 0 {
				last := m.List[n-1]
				if w := c.writer[m.Key][last]; w != nil && w != t && w.Type != "fail" {
					if mine := c.appended[w][m.Key]; len(mine) > 1 && mine[len(mine)-1] != last {
						c.add("G1b", fmt.Sprintf("%s read key %d = %v, ending in %d, which %s appended before its own later %d (an intermediate read)",
							describe(t), m.Key, m.List, last, describe(w), mine[len(mine)-1]), 2)
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
					describe(t), m.Key, apart(m.List, state[m.Key]), apart(state[m.Key], m.List)), 1)
			case known[m.Key] && !slices.Equal(m.List, state[m.Key]):
				c.add("internal", fmt.Sprintf("%s read key %d = %s where its own earlier operations say %s", describe(t), m.Key, apart(m.List, state[m.Key]), apart(state[m.Key], m.List)), 1)
			case !known[m.Key] && len(own[m.Key]) > 0 && !hasSuffix(m.List, own[m.Key]):
				c.add("internal", fmt.Sprintf("%s read key %d = %s without its own appends %v at the end", describe(t), m.Key, short(m.List), own[m.Key]), 1)
			}
			state[m.Key], known[m.Key], since[m.Key] = slices.Clone(m.List), true, nil
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
				c.add("incompatible-order", fmt.Sprintf("%s read key %d = %s, which is not a prefix of %s, its longest read: no one order of versions explains both", describe(t), m.Key, apart(m.List, c.longest[m.Key]), apart(c.longest[m.Key], m.List)), 1)
			}
		}
	}
	for k, l := range c.longest {
		c.order[k] = l
	}
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
		for k, vs := range c.appended[w] {
			for _, v := range vs {
				if r := lastRead[k]; !observed[k][v] && r != nil && r.Invoke.Time > w.Complete.Time {
					c.add("lost", fmt.Sprintf("%s appended %d to key %d and committed; %s began after that, read key %d, and no read ever saw %d", describe(w), v, k, describe(r), k, v), 2)
				}
			}
		}
	}
}

// externalRead is what a transaction read of a key before its own appends
// to it (ok: it read the key from others at all).
func externalRead(t *Txn, k int) (list []int, ok bool) {
	for _, m := range t.Mops {
		if m.Key != k {
			continue
		}
		if m.F == "append" {
			return nil, false
		}
		if m.Read {
			return m.List, true
		}
	}
	return nil, false
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
		for k := range c.appended[t] {
			l, ok := externalRead(t, k)
			if !ok {
				continue
			}
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
			c.add("lost-update", fmt.Sprintf("%s and %s both read key %d at %s and both appended to it: each wrote without the other's", describe(ts[0]), describe(ts[1]), key.k, version), 2)
		}
	}
}

func (c *checker) link(from, to *Txn, kind int, why func() string) {
	if from == nil || to == nil || from == to || !c.nodeOf[from.ID] || !c.nodeOf[to.ID] {
		return
	}
	c.graph[from.ID] = append(c.graph[from.ID], edge{to: to.ID, kind: kind, why: why})
}

// dependencies draws Adya's edges between transactions: ww between the
// writers of consecutive versions, wr from a version's writer to its
// readers, rw from a version's readers to the writer of the next.
func (c *checker) dependencies() {
	for _, t := range c.txns {
		if t.Type == "ok" {
			c.nodeOf[t.ID] = true
		}
	}
	for k, l := range c.order { // an unfinished transaction whose write was read took effect
		for _, v := range l {
			if w := c.writer[k][v]; w != nil && w.Type == "info" {
				c.nodeOf[w.ID] = true
			}
		}
	}
	pos := map[int]map[int]int{} // key -> value -> its place in the order
	for k, l := range c.order {
		pos[k] = map[int]int{}
		for i, v := range l {
			pos[k][v] = i
		}
		for i := 0; i+1 < len(l); i++ {
			a, b := c.writer[k][l[i]], c.writer[k][l[i+1]]
			c.link(a, b, ww, func() string {
				return fmt.Sprintf("%s appended %d to key %d, and %s then appended %d", nameOf(a), l[i], k, nameOf(b), l[i+1])
			})
		}
	}
	for _, t := range c.txns {
		if t.Type != "ok" {
			continue
		}
		done := map[int]bool{}
		for _, m := range t.Mops {
			if m.F != "r" || !m.Read || done[m.Key] {
				continue
			}
			done[m.Key] = true // one external read of a key is enough: the others are the same (or internal)
			l, ok := externalRead(t, m.Key)
			if !ok {
				continue
			}
			order := c.order[m.Key]
			next := 0
			var seenWriter *Txn
			if len(l) > 0 {
				last := l[len(l)-1]
				seenWriter = c.writer[m.Key][last]
				c.link(seenWriter, t, wr, func() string {
					return fmt.Sprintf("%s read key %d = %s, which ends in %s's %d", name(t), m.Key, short(l), nameOf(seenWriter), last)
				})
				p, ok := pos[m.Key][last]
				if !ok {
					continue
				}
				next = p + 1
			}
			// the next version is the next value another transaction
			// appended (the rest of the seen writer's are its own)
			for next < len(order) && c.writer[m.Key][order[next]] == seenWriter && seenWriter != nil {
				next++
			}
			if next < len(order) {
				w := c.writer[m.Key][order[next]]
				c.link(t, w, rw, func() string {
					return fmt.Sprintf("%s read key %d = %s, without %s's %d that follows", name(t), m.Key, short(l), nameOf(w), order[next])
				})
			}
		}
	}
}

func nameOf(t *Txn) string {
	if t == nil {
		return "no one"
	}
	return name(t)
}

// ordering draws the clients' own order: each process's committed
// transactions one after the other, and real time: a transaction that
// completed before another began precedes it (only the latest ones that
// did: the rest follow by transitivity).
func (c *checker) ordering() {
	last := map[int]*Txn{}
	type event struct {
		at     int64
		finish bool
		t      *Txn
	}
	var events []event
	for _, t := range c.txns {
		if !c.nodeOf[t.ID] {
			continue
		}
		if p := last[t.Process]; p != nil && t.Type == "ok" {
			c.link(p, t, process, func() string {
				return fmt.Sprintf("%s and %s ran one after the other on process %d", name(p), name(t), t.Process)
			})
		}
		if t.Type == "ok" {
			last[t.Process] = t
		}
		events = append(events, event{t.Invoke.Time, false, t})
		if t.Complete != nil && t.Type == "ok" {
			events = append(events, event{t.Complete.Time, true, t})
		}
	}
	sort.SliceStable(events, func(i, j int) bool {
		if events[i].at != events[j].at {
			return events[i].at < events[j].at
		}
		return !events[i].finish && events[j].finish // a start at the same moment as a finish does not follow it
	})
	var frontier []*Txn // completed, and not known to precede another completed one
	for _, e := range events {
		if !e.finish {
			for _, f := range frontier {
				c.link(f, e.t, realtime, func() string { return fmt.Sprintf("%s completed before %s began", name(f), name(e.t)) })
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
			parts = append(parts, fmt.Sprintf("%s (%d)", a.Type, a.Count))
		}
	}
	return fmt.Sprintf("not %s: %s", e.Result.Model, strings.Join(parts, ", "))
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
