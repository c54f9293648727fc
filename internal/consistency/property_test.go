package consistency

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
)

// counts are a result's anomaly counts by type.
func counts(r *Result) map[string]int {
	out := map[string]int{}
	for _, a := range r.Anomalies {
		out[a.Type] = a.Count
	}
	return out
}

func check(t *testing.T, ops []Op, model string) *Result {
	t.Helper()
	r, err := Check(context.Background(), ops, model)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// serial builds a history of transactions run one after the other (each
// over [now, now+1]) against a model database, so that whatever it holds
// besides is what was put there on purpose.
type serial struct {
	r     *rand.Rand
	h     hist
	now   int64
	db    map[int][]int
	next  map[int]int
	past  []map[int]int // before each transaction: each key's length
	procs int           // processes taken so far (each injected transaction gets one of its own)
	stale int           // stale reads made
}

func newSerial(seed uint64) *serial {
	return &serial{r: rand.New(rand.NewPCG(seed, 7)), db: map[int][]int{}, next: map[int]int{}, procs: 100}
}

func (s *serial) snapshot() {
	m := map[int]int{}
	for k, l := range s.db {
		m[k] = len(l)
	}
	s.past = append(s.past, m)
}

func (s *serial) value(k int) int { s.next[k]++; return s.next[k] }

// txn runs one ordinary transaction of 1 to 4 micro-operations over keys
// 0..keys-1 on one of eight processes.
func (s *serial) txn(keys int) {
	s.snapshot()
	var mops []Mop
	for j := 0; j <= s.r.IntN(4); j++ {
		k := s.r.IntN(keys)
		if s.r.IntN(2) == 0 {
			v := s.value(k)
			s.db[k] = append(s.db[k], v)
			mops = append(mops, ap(k, v))
		} else {
			mops = append(mops, rd(k, s.db[k]...))
		}
	}
	s.h.txn(s.r.IntN(8), s.now, s.now+1, "ok", mops...)
	s.now += 2
}

// staleRead reads a few keys as they were some transactions ago, on a
// process of its own: each key it reads that has changed since is one
// stale read (whatever it missed completed before it began).
func (s *serial) staleRead(keys int) {
	if len(s.past) == 0 {
		s.snapshot()
	}
	back := s.past[max(0, len(s.past)-1-s.r.IntN(200))]
	s.snapshot()
	var mops []Mop
	for j := 0; j <= s.r.IntN(3); j++ {
		k := s.r.IntN(keys)
		if slices.ContainsFunc(mops, func(m Mop) bool { return m.Key == k }) {
			continue
		}
		l := s.db[k][:back[k]]
		if len(l) < len(s.db[k]) {
			s.stale++
		}
		mops = append(mops, rd(k, l...))
	}
	s.procs++
	s.h.txn(s.procs, s.now, s.now+1, "ok", mops...)
	s.now += 2
}

// inject puts one cycle of the given type between two concurrent
// transactions on fresh keys and processes (and a reader of both after
// them), and returns what it should count.
func (s *serial) inject(kind string, a, b int) (string, int) {
	s.snapshot()
	x, y := s.procs+1, s.procs+2
	s.procs += 3
	t := s.now
	var want int
	switch kind {
	case "G0": // the two keys' appends in opposite orders
		s.h.txn(x, t, t+3, "ok", ap(a, 1), ap(b, 2)).txn(y, t+1, t+2, "ok", ap(a, 2), ap(b, 1))
		s.h.txn(s.procs, t+4, t+5, "ok", rd(a, 1, 2), rd(b, 1, 2))
		want = 2
	case "G1c": // each read the other's append
		s.h.txn(x, t, t+3, "ok", ap(a, 1), rd(b, 1)).txn(y, t+1, t+2, "ok", ap(b, 1), rd(a, 1))
		s.h.txn(s.procs, t+4, t+5, "ok", rd(a, 1), rd(b, 1))
		want = 2
	case "G-single": // y saw x's append to b, not its append to a
		s.h.txn(x, t, t+3, "ok", ap(a, 1), ap(b, 1)).txn(y, t+1, t+2, "ok", rd(a), rd(b, 1))
		s.h.txn(s.procs, t+4, t+5, "ok", rd(a, 1), rd(b, 1))
		want = 1
	case "G2-item": // write skew
		s.h.txn(x, t, t+3, "ok", rd(a), ap(b, 1)).txn(y, t+1, t+2, "ok", rd(b), ap(a, 1))
		s.h.txn(s.procs, t+4, t+5, "ok", rd(a, 1), rd(b, 1))
		want = 2
	}
	s.now += 6
	return kind, want
}

// finalRead reads every key once all is done (nothing acknowledged goes
// unread).
func (s *serial) finalRead(keys int) {
	var mops []Mop
	for k := 0; k < keys; k++ {
		mops = append(mops, rd(k, s.db[k]...))
	}
	s.procs++
	s.h.txn(s.procs, s.now, s.now+1, "ok", mops...)
}

// TestInjectedAnomalies: serial histories whose stale reads bind them
// into one large strongly connected component (through real time), with
// cycles of each type injected at random depths: the checker finds every
// injected one, counted exactly, every stale read, and nothing else.
func TestInjectedAnomalies(t *testing.T) {
	kinds := []string{"G0", "G1c", "G-single", "G2-item"}
	for seed := uint64(1); seed <= 24; seed++ {
		s := newSerial(seed)
		const keys, n = 12, 1500
		want := map[string]int{}
		at := map[int]string{}
		for range 1 + s.r.IntN(3) {
			at[s.r.IntN(n)] = kinds[s.r.IntN(len(kinds))]
		}
		fresh := 1000
		for i := 0; i < n; i++ {
			if kind, ok := at[i]; ok {
				k, c := s.inject(kind, fresh, fresh+1)
				fresh += 2
				want[k] += c
			}
			if s.r.IntN(10) == 0 {
				s.staleRead(keys)
			} else {
				s.txn(keys)
			}
		}
		s.finalRead(keys)
		if s.stale > 0 {
			want["G-single-realtime"] = s.stale
		}
		r := check(t, s.h.sorted(), "strict-serializable")
		size := map[int32]int{}
		for _, x := range analysed(t, s.h.sorted()).g.components(ww | wr | rw | process | realtime) {
			size[x]++
		}
		if largest := slices.Max(slices.Collect(maps.Values(size))); largest < n/2 {
			t.Errorf("seed %d: the largest component holds %d transactions of %d", seed, largest, n)
		}
		if got := counts(r); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("seed %d (injected %v): found %v, want %v", seed, at, got, want)
		}
		checkExamples(t, r)
		for _, m := range []string{"serializable", "snapshot-isolation"} {
			r := check(t, s.h.sorted(), m)
			plain := false
			for typ := range want {
				plain = plain || forbidden(m, typ)
			}
			if r.Valid == plain {
				t.Errorf("seed %d, %s: valid %v with %v", seed, m, r.Valid, want)
			}
		}
	}
}

// checkExamples: every cycle type's example is a simple cycle of its
// type.
func checkExamples(t *testing.T, r *Result) {
	t.Helper()
	for _, a := range r.Anomalies {
		if a.cycle == nil {
			continue
		}
		if got := classify(a.cycle); got != a.Type {
			t.Errorf("%s's example is a %s: %s", a.Type, got, a.Example)
		}
		seen := map[int32]bool{}
		for i, d := range a.cycle {
			// a G-nonadjacent read's example is a closed walk, which may
			// pass a transaction twice
			if seen[d.from] && !strings.HasPrefix(a.Type, "G-nonadjacent") || d.to != a.cycle[(i+1)%len(a.cycle)].from {
				t.Errorf("%s's example is not a simple cycle: %s", a.Type, a.Example)
			}
			seen[d.from] = true
		}
	}
}

// TestChainedStaleReads (the review's H2): a read skew inside a component
// made large by 100 chained stale reads is still found, and each stale
// read counts (M1).
func TestChainedStaleReads(t *testing.T) {
	for _, n := range []int{10, 100, 1000} {
		h := new(hist)
		for i := 0; i < n; i++ {
			tm := int64(10 * i)
			if i == 0 {
				h.txn(i, tm, tm+5, "ok", ap(i, 1))
				continue
			}
			h.txn(i, tm, tm+5, "ok", ap(i, 1), rd(i-1)) // began after i-1 completed, missed its append
		}
		x := int64(10 * n)
		h.txn(n, x, x+5, "ok", ap(9000, 1), ap(9001, 1)).txn(n+1, x+1, x+4, "ok", rd(9000, 1), rd(9001))
		var all []Mop
		for i := 0; i < n; i++ {
			all = append(all, rd(i, 1))
		}
		h.txn(n+2, x+10, x+11, "ok", append(all, rd(9000, 1), rd(9001, 1))...)
		r := check(t, h.sorted(), "serializable")
		if got := fmt.Sprint(counts(r)); r.Valid || got != fmt.Sprintf("map[G-single:1 G-single-realtime:%d]", n-1) {
			t.Errorf("%d chained: valid %v, %s", n, r.Valid, got)
		}
		checkExamples(t, r)
	}
}

// TestTwoReadSkews (M2): two read skews sharing a writer are two
// G-singles, not a G2-item (a cycle through one transaction twice).
func TestTwoReadSkews(t *testing.T) {
	h := new(hist).txn(0, 1, 10, "ok", ap(1, 1), ap(2, 1), ap(3, 1), ap(4, 1)).
		txn(1, 2, 9, "ok", rd(1, 1), rd(2)).txn(2, 3, 8, "ok", rd(3, 1), rd(4)).
		txn(3, 11, 12, "ok", rd(1, 1), rd(2, 1), rd(3, 1), rd(4, 1))
	r := check(t, h.sorted(), "read-committed")
	if got := fmt.Sprint(counts(r)); got != "map[G-single:2]" {
		t.Errorf("found %s", got)
	}
	checkExamples(t, r)
}

// TestLostUnderModels (H3): a read that began after an acknowledged append
// and missed it is forbidden only where real time is part of the model;
// removing the later read that saw the append never makes it worse.
func TestLostUnderModels(t *testing.T) {
	stale := new(hist).txn(0, 1, 2, "ok", ap(1, 1)).txn(1, 3, 4, "ok", rd(1)).txn(2, 5, 6, "ok", rd(1, 1))
	lost := new(hist).txn(0, 1, 2, "ok", ap(1, 1)).txn(1, 3, 4, "ok", rd(1))
	for _, m := range Models {
		rs, rl := check(t, stale.sorted(), m), check(t, lost.sorted(), m)
		strict := m == "strict-serializable"
		if rs.Valid == strict || rl.Valid == strict {
			t.Errorf("%s: stale valid %v (%v), lost valid %v (%v)", m, rs.Valid, rs.Forbidden, rl.Valid, rl.Forbidden)
		}
	}
}

// TestCountsPerOccurrence (M1): each read that shows an anomaly counts.
func TestCountsPerOccurrence(t *testing.T) {
	sep := new(hist)
	for i := 0; i < 50; i++ {
		tm := int64(100 * i)
		sep.txn(0, tm, tm+1, "ok", ap(i, 1)).txn(1, tm+2, tm+3, "ok", rd(i)).txn(2, tm+4, tm+5, "ok", rd(i, 1))
	}
	if got := counts(check(t, sep.sorted(), "strict-serializable")); got["G-single-realtime"] != 50 || len(got) != 1 {
		t.Errorf("50 separate stale reads: %v", got)
	}
	g1a := new(hist).txn(0, 1, 2, "fail", ap(1, 1)).txn(1, 3, 4, "ok", ap(1, 2))
	for i := 0; i < 5; i++ {
		g1a.txn(2+i, 5, 6, "ok", rd(1, 1, 2))
	}
	if got := counts(check(t, g1a.sorted(), "read-committed")); got["G1a"] != 5 {
		t.Errorf("5 reads of a failed append: %v", got)
	}
	pre := new(hist).txn(0, 1, 2, "fail", ap(1, 1)).txn(1, 3, 4, "ok", ap(1, 2)).txn(2, 5, 6, "ok", rd(1, 1)).txn(3, 7, 8, "ok", rd(1, 1, 2)).txn(4, 9, 10, "ok", rd(1))
	if got := counts(check(t, pre.sorted(), "read-committed")); got["G1a"] != 2 {
		t.Errorf("two of three reads reach the failed append: %v", got)
	}
	lu := new(hist).txn(0, 1, 5, "ok", rd(1), ap(1, 1)).txn(1, 2, 6, "ok", rd(1), ap(1, 2)).txn(2, 3, 7, "ok", rd(1), ap(1, 3)).txn(3, 8, 9, "ok", rd(1, 1, 2, 3))
	if got := counts(check(t, lu.sorted(), "repeatable-read")); got["lost-update"] != 2 {
		t.Errorf("three appends over one version lose two updates: %v", got)
	}
}

// TestUndecided: a search cut short never says valid: its reads are
// forbidden where both of their possible types are, undecided where one
// is.
func TestUndecided(t *testing.T) {
	old := maxSteps
	maxSteps = 0
	defer func() { maxSteps = old }()
	h := new(hist).txn(0, 1, 5, "ok", rd(1), ap(2, 1)).txn(1, 2, 6, "ok", rd(2), ap(1, 1)).txn(2, 7, 8, "ok", rd(1, 1), rd(2, 1))
	// a write skew: its reads' way back needs a search, which stops at once
	// (the shortcut of one component does not apply)
	si := check(t, h.sorted(), "snapshot-isolation")
	if si.Valid || len(si.Forbidden) != 0 || fmt.Sprint(si.Undecided) != "["+Undecided+"]" {
		t.Errorf("snapshot isolation: %+v", si)
	}
	ser := check(t, h.sorted(), "serializable")
	if ser.Valid || fmt.Sprint(ser.Forbidden) != "["+Undecided+"]" || len(ser.Undecided) != 0 {
		t.Errorf("serializable: %+v", ser)
	}
	if rc := check(t, h.sorted(), "read-committed"); !rc.Valid {
		t.Errorf("read committed allows both: %+v", rc)
	}
}

// randomHistory is a small history of random transactions: random
// intervals, processes, appends, and reads that return random prefixes of
// each key's order (so every kind of cycle can arise).
func randomHistory(r *rand.Rand, n, keys int) []Op {
	order := map[int][]int{}
	next := map[int]int{}
	type planned struct {
		proc       int
		start, end int64
		mops       []Mop
	}
	var txns []planned
	for i := 0; i < n; i++ {
		var mops []Mop
		for j := 0; j <= r.IntN(3); j++ {
			k := r.IntN(keys)
			if r.IntN(2) == 0 {
				next[k]++
				order[k] = append(order[k], next[k])
				mops = append(mops, ap(k, next[k]))
			} else {
				mops = append(mops, Mop{F: "r", Key: k})
			}
		}
		start := int64(r.IntN(4 * n))
		txns = append(txns, planned{proc: i, start: start, end: start + 1 + int64(r.IntN(n)), mops: mops})
	}
	for k := range order { // each key's order shuffled: reads then disagree with the appends' times
		r.Shuffle(len(order[k]), func(i, j int) { order[k][i], order[k][j] = order[k][j], order[k][i] })
	}
	// a process runs one transaction at a time: each takes the first of
	// three processes free when it begins, or one of its own
	sort.Slice(txns, func(i, j int) bool { return txns[i].start < txns[j].start })
	free := []int64{-1, -1, -1}
	h := new(hist)
	for i, p := range txns {
		proc := 100 + i
		for q := range free {
			if free[q] < p.start {
				proc, free[q] = q, p.end
				break
			}
		}
		own := map[int][]int{}
		for j, m := range p.mops {
			if m.F == "append" {
				own[m.Key] = append(own[m.Key], m.Value)
				continue
			}
			var l []int // a prefix of the order without this transaction's appends, then its own so far
			for _, v := range order[m.Key][:r.IntN(len(order[m.Key])+1)] {
				if !slices.ContainsFunc(p.mops, func(x Mop) bool { return x.F == "append" && x.Key == m.Key && x.Value == v }) {
					l = append(l, v)
				}
			}
			p.mops[j] = rd(m.Key, append(l, own[m.Key]...)...)
		}
		h.txn(proc, p.start, p.end, "ok", p.mops...)
	}
	var all []Mop
	for k := 0; k < keys; k++ {
		all = append(all, rd(k, order[k]...))
	}
	h.txn(99, int64(6*n), int64(6*n+1), "ok", all...)
	return h.sorted()
}

// oracle classifies every dependency as cycles() does, by plain
// breadth-first searches over the whole graph (no components, no pruning,
// no shortcuts): a second way to the same counts.
func oracle(c *checker) map[string]int {
	g := c.g
	reach := func(v, u int32, mask uint8, skip []bool) bool {
		seen := map[int32]bool{v: true}
		q := []int32{v}
		for len(q) > 0 {
			x := q[0]
			q = q[1:]
			if x == u {
				return true
			}
			for _, e := range g.edges(x) {
				d := g.deps[e]
				if d.kind&mask != 0 && !skip[e] && !seen[d.to] {
					seen[d.to] = true
					q = append(q, d.to)
				}
			}
		}
		return false
	}
	out := map[string]int{}
	done := make([]bool, len(g.deps))
	single := make([]bool, len(g.deps))
	none := make([]bool, len(g.deps))
	for _, lv := range levels {
		for i, d := range g.deps {
			if done[i] {
				continue
			}
			typ := ""
			switch d.kind {
			case ww:
				if reach(d.to, d.from, ww|lv.order, none) {
					typ = "G0"
				}
			case wr:
				if reach(d.to, d.from, ww|wr|lv.order, none) {
					typ = "G1c"
				}
			case rw:
				if reach(d.to, d.from, ww|wr|lv.order, none) {
					typ = "G-single"
					single[i] = true
				}
			}
			if typ != "" {
				out[typ+lv.suffix]++
				done[i] = true
			}
		}
		for i, d := range g.deps { // two or more reads that missed a write, none of a G-single
			if !done[i] && d.kind == rw && reach(d.to, d.from, ww|wr|rw|lv.order, single) {
				typ := "G2-item" + lv.suffix
				switch {
				case lv.order == 0 && plainFork(g, i, single):
					typ = LongFork
				case plainNonadjacent(g, i, ww|wr|rw|lv.order, single):
					typ = "G-nonadjacent" + lv.suffix
				}
				out[typ]++
				done[i] = true
			}
		}
	}
	return out
}

// analysed runs the checker's analysis and returns it.
func analysed(t *testing.T, ops []Op) *checker {
	t.Helper()
	c, err := analyse(context.Background(), ops)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// cycleCounts are the cycle types' counts the checker found.
func cycleCounts(c *checker) map[string]int {
	out := map[string]int{}
	for typ, a := range c.found {
		if a.cycle != nil || strings.HasPrefix(typ, Undecided) {
			out[typ] = a.Count
		}
	}
	return out
}

// TestOracle: on random histories (small, dense with cycles of every
// kind) and simulated ones with stale reads, the components, pruning and
// shortcuts give the counts plain searches give.
func TestOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for i := 0; i < 300; i++ {
		ops := randomHistory(r, 4+r.IntN(20), 1+r.IntN(4))
		c := analysed(t, ops)
		if got, want := cycleCounts(c), oracle(c); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("history %d: found %v, the oracle %v", i, got, want)
		}
	}
	for seed := uint64(1); seed <= 5; seed++ {
		c := analysed(t, Simulate(600, 8, 6, true, seed))
		if got, want := cycleCounts(c), oracle(c); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("simulated %d: found %v, the oracle %v", seed, got, want)
		}
	}
}

// plainFork says whether rw edge e (T1 → W2) lies on a long fork, by
// trying every W2 wr→ T2 rw→ W1 wr→ T1, looking the last edge up in a set.
func plainFork(g *graph, e int, skip []bool) bool {
	d := g.deps[e]
	wrs := map[[2]int32]bool{}
	for _, x := range g.deps {
		if x.kind == wr {
			wrs[[2]int32{x.from, x.to}] = true
		}
	}
	for _, i := range g.edges(d.to) {
		a := g.deps[i]
		if a.kind != wr || a.to == d.from {
			continue
		}
		for _, j := range g.edges(a.to) {
			b := g.deps[j]
			if b.kind == rw && !skip[j] && b.to != d.to && b.to != d.from && wrs[[2]int32{b.to, d.from}] {
				return true
			}
		}
	}
	return false
}

// plainNonadjacent says whether rw edge e lies on a closed walk with no two
// rw edges next to each other, by a breadth-first search over (node,
// reached by rw) over the whole graph.
func plainNonadjacent(g *graph, e int, mask uint8, skip []bool) bool {
	type state struct {
		x     int32
		viaRW bool
	}
	d := g.deps[e]
	seen := map[state]bool{{d.to, true}: true}
	q := []state{{d.to, true}}
	for len(q) > 0 {
		s := q[0]
		q = q[1:]
		if s == (state{d.from, false}) {
			return true
		}
		for _, i := range g.edges(s.x) {
			f := g.deps[i]
			if f.kind&mask == 0 || skip[i] || f.kind == rw && s.viaRW {
				continue
			}
			if n := (state{f.to, f.kind == rw}); !seen[n] {
				seen[n] = true
				q = append(q, n)
			}
		}
	}
	return false
}

// simpleCycleTypes are the types of every simple cycle of the graph (by
// enumeration: small graphs only).
func simpleCycleTypes(c *checker) map[string]bool {
	g := c.g
	out := map[string]bool{}
	var path []dep
	on := map[int32]bool{}
	var walk func(start, x int32)
	walk = func(start, x int32) {
		for _, e := range g.edges(x) {
			d := g.deps[e]
			switch {
			case d.to == start:
				out[classify(append(slices.Clone(path), d))] = true
			case d.to > start && !on[d.to]:
				on[d.to] = true
				path = append(path, d)
				walk(start, d.to)
				path = path[:len(path)-1]
				on[d.to] = false
			}
		}
	}
	for v := int32(0); v < int32(len(g.in)); v++ {
		on[v] = true
		walk(v, v)
		on[v] = false
	}
	return out
}

// walkOnly says whether typ is a G-nonadjacent type found on a closed walk
// that passes a transaction twice, where the simple cycles it is made of
// are themselves forbidden under snapshot isolation (that is what the walk
// proves): one of them with the same order is G-nonadjacent, a long fork,
// G-single, G1c or G0.
func walkOnly(typ string, all map[string]bool) bool {
	rest, ok := strings.CutPrefix(typ, "G-nonadjacent")
	if !ok {
		return false
	}
	for _, base := range []string{"G-nonadjacent", "G-single", "G1c", "G0"} {
		if all[base+rest] || all[base] {
			return true
		}
	}
	return all[LongFork]
}

// TestAgainstEnumeration: on small random histories, every type the
// checker names has a simple cycle of that type, and for every model the
// checker forbids some cycle type exactly when some simple cycle's type
// is forbidden.
func TestAgainstEnumeration(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for i := 0; i < 400; i++ {
		ops := randomHistory(r, 3+r.IntN(6), 1+r.IntN(3))
		c := analysed(t, ops)
		all := simpleCycleTypes(c)
		found := cycleCounts(c)
		for typ := range found {
			if !all[typ] && !walkOnly(typ, all) {
				t.Fatalf("history %d: %s found, but no simple cycle is one (%v)", i, typ, all)
			}
		}
		for _, m := range Models {
			any, anyFound := false, false
			for typ := range all {
				any = any || forbidden(m, typ)
			}
			for typ := range found {
				anyFound = anyFound || forbidden(m, typ)
			}
			if any != anyFound {
				t.Fatalf("history %d, %s: a forbidden simple cycle %v, found forbidden %v (cycles %v, found %v)", i, m, any, anyFound, all, found)
			}
		}
		for _, a := range c.found {
			if a.cycle != nil {
				checkExamples(t, &Result{Anomalies: []Anomaly{*a}})
			}
		}
	}
}

// TestRemovingAReadNeverInvalidates: removing a read-only transaction from
// a history valid under a model never makes it invalid (a property over
// generated histories with and without stale reads).
func TestRemovingAReadNeverInvalidates(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	tried := 0
	for seed := uint64(0); seed < 40; seed++ {
		ops := Simulate(120, 4, 4, seed%2 == 0, seed)
		for _, m := range Models {
			if !check(t, ops, m).Valid {
				continue
			}
			txns, _ := pair(ops)
			var reads []*Txn
			for _, x := range txns {
				if x.Type == "ok" && !slices.ContainsFunc(x.Mops, func(m Mop) bool { return m.F == "append" }) {
					reads = append(reads, x)
				}
			}
			r.Shuffle(len(reads), func(i, j int) { reads[i], reads[j] = reads[j], reads[i] })
			for _, x := range reads[:min(10, len(reads))] {
				var less []Op
				for _, op := range ops {
					if op.Index != x.Invoke.Index && op.Index != x.Complete.Index {
						less = append(less, op)
					}
				}
				tried++
				if res := check(t, less, m); !res.Valid {
					t.Errorf("seed %d, %s: removing T%d made it invalid: %v", seed, m, x.ID, res.Forbidden)
				}
			}
		}
	}
	if tried < 100 {
		t.Errorf("only %d removals tried", tried)
	}
}
