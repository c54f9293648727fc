package consistency

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Cycles are found by what closes them. Every dependency that lies on a
// cycle is counted once, under the most severe type of cycle it closes,
// and each type is searched completely, in polynomial time:
//
//   - an append that follows another's (ww) closes a G0 when its two
//     writers are in one strongly connected component of the ww edges: the
//     shortest way back is a cycle of writes, and every cycle of writes has
//     such an edge;
//   - a read that saw another's append (wr) closes a G1c when its two ends
//     are in one component of the ww and wr edges;
//   - a read that missed an append (rw) closes a G-single when the writer
//     reaches the reader by ww and wr edges alone (Elle's restricted graph:
//     the path back, shortest, is simple, and with the rw edge a cycle with
//     exactly one anti-dependency); when it does not but both ends are in one
//     component of all the data edges, every cycle through it holds a second
//     rw edge, so it closes a G2-item (and a simple one: the shortest way
//     back).
//
// The same is asked again with the clients' own order added (-process),
// then real time too (-realtime), for the dependencies no weaker order
// closed. A model forbids a history's cycle of some type exactly when it
// forbids the type some dependency of that cycle was counted under, since
// each type forbids no less than the weaker orders' types of its kind.
// Only the G-single question needs a search per read; a search that
// exceeds maxSteps leaves those reads' type open between G-single and
// G2-item (G-single-or-G2-item), which the verdict says.

// levels are the orders a cycle may take besides the data edges, weakest
// first, with the suffix their cycles' types take.
var levels = []struct {
	suffix string
	order  uint8
}{{"", 0}, {"-process", process}, {"-realtime", process | realtime}}

// maxSteps bounds the edges the G-single searches of one history may
// cross (a variable: tests lower it).
var maxSteps = 400_000_000

// maxExamples is how many of a type's dependencies are tried for its
// shortest example.
const maxExamples = 8

// Undecided is the type of a read whose cycle is G-single or G2-item,
// left open because the search was cut short.
const Undecided = "G-single-or-G2-item"

// DataCycles are the types of cycles of data edges alone (no process or
// real-time order), each read or append counted once: what a study's
// "cycles" counts.
var DataCycles = []string{"G0", "G1c", "G-single", "G2-item", "G-nonadjacent", LongFork, Undecided}

// LongFork is a G-nonadjacent cycle of four: two transactions each saw one
// of two others' writes and missed the other's, so they saw the two in
// opposite orders (T1 rw→ W2 wr→ T2 rw→ W1 wr→ T1). Snapshot isolation
// forbids it (every snapshot is a prefix of one commit order); parallel
// snapshot isolation and read replicas applying commits out of order allow
// it.
const LongFork = "long-fork"

// search is the state of the cycle searches: the edges crossed so far and
// a stamp per node for each walk's visits.
type search struct {
	ctx   context.Context
	steps int
	seen  []int32
	stamp int32
	queue []int32
	from  []int32 // breadth-first walks: the edge a node was reached by
	// nonadjacent's walks, over states (a node, and whether an rw edge led
	// there): visits, the edge a state was reached by and from which state
	seen2, from2, prev2 []int32
}

// cycles classifies every ww, wr and rw dependency by the cycles it
// closes (see above) and records each type found with its count and
// shortest example.
func (c *checker) cycles(ctx context.Context) error {
	g := c.g
	s := &search{ctx: ctx, seen: make([]int32, len(g.in)), from: make([]int32, len(g.in))}
	done := make([]bool, len(g.deps))
	single := make([]bool, len(g.deps)) // rw edges that close a G-single (or may)
	// the strongest level's graph holds every weaker one's edges: with no
	// cycle there, there is none at all (a valid history's usual case,
	// decided by one search instead of one a level)
	strongest := levels[len(levels)-1].order
	compAll := g.components(ww | wr | rw | strongest)
	if !g.cyclic(compAll) {
		return nil
	}
	comps := g.levelComponents(compAll)
	for l, lv := range levels {
		if err := ctx.Err(); err != nil {
			return err
		}
		compD, compR, compW := comps[l].d, comps[l].r, comps[l].w
		if compD == nil { // no cycle at this level: nothing to classify
			continue
		}
		classes := map[string][]int32{}
		var order []string
		note := func(typ string, i int) {
			if classes[typ] == nil {
				order = append(order, typ)
			}
			classes[typ] = append(classes[typ], int32(i))
			done[i] = true
		}
		for i, d := range g.deps {
			if done[i] {
				continue
			}
			switch d.kind {
			case ww:
				if compW[d.from] == compW[d.to] {
					note("G0"+lv.suffix, i)
				}
			case wr:
				if compR[d.from] == compR[d.to] {
					note("G1c"+lv.suffix, i)
				}
			case rw:
				if compD[d.from] != compD[d.to] {
					continue
				}
				found, ok := c.reaches(s, d.to, d.from, ww|wr|lv.order, compR, compD)
				switch {
				case !ok:
					note(Undecided+lv.suffix, i)
					single[i] = true
				case found:
					note("G-single"+lv.suffix, i)
					single[i] = true
				}
			}
			if i&0xfff == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
		}
		// a G2-item is a cycle of two or more reads that missed a write,
		// none of which closes a G-single: a cycle through one of those
		// is that read's (a stale read puts every read since on a cycle)
		// one whose cycle can have no two of them next to each other is
		// worse: snapshot isolation forbids it (see nonadjacent)
		var compG2, alt []int32
		together(func() { compG2 = g.componentsWithout(ww|wr|rw|lv.order, single) },
			func() { alt = g.alternating(ww|wr|rw|lv.order, single) }) // needed when compG2 is cyclic: searched beside it
		walks, drawn := map[int32][]dep{}, 0
		for i, d := range g.deps {
			if done[i] || d.kind != rw || compG2[d.from] != compG2[d.to] {
				continue
			}
			if lv.order == 0 {
				if cyc := c.longFork(s, int32(i), single); cyc != nil {
					walks[int32(i)] = cyc
					note(LongFork, i)
					continue
				}
			}
			if alt[2*d.from] != alt[2*d.to+1] {
				note("G2-item"+lv.suffix, i)
				continue
			}
			note("G-nonadjacent"+lv.suffix, i)
			if drawn < maxExamples { // its walk drawn for the example: a few are enough
				drawn++
				if walk, _ := s.nonadjacent(g, int32(i), ww|wr|rw|lv.order, single, func(y int32) bool { return compG2[y] == compG2[d.from] }); walk != nil {
					walks[int32(i)] = walk
				}
			}
		}
		for _, typ := range order {
			deps := classes[typ]
			base := strings.TrimSuffix(typ, lv.suffix)
			mask, keep, skip := ww|wr|rw|lv.order, compG2, single // a G2-item's way back: any data edge but a G-single's
			switch base {
			case "G0":
				mask, keep, skip = ww|lv.order, compW, nil
			case "G1c":
				mask, keep, skip = ww|wr|lv.order, compR, nil
			case "G-single", Undecided:
				mask, keep, skip = ww|wr|lv.order, compD, nil
			}
			var best []dep
			tries := deps[:min(len(deps), maxExamples)]
			if base == LongFork || base == "G-nonadjacent" {
				for _, i := range deps { // each read's own cycle or walk (a simple one first): no other search
					w, ok := walks[i]
					if ok && (best == nil || simple(w) && !simple(best) || simple(w) == simple(best) && len(w) < len(best)) {
						best = w
					}
				}
				tries = nil
			}
			for _, i := range tries {
				d := g.deps[i]
				path := s.shortest(g, d.to, d.from, mask, skip, func(y int32) bool {
					// without rw edges, the way back keeps within the
					// components between the two ends
					return keep[y] == keep[d.from] && (mask&rw != 0 || compR[y] >= compR[d.from])
				})
				if path == nil {
					continue
				}
				cyc := append([]dep{d}, path...)
				if best == nil || len(cyc) < len(best) {
					best = cyc
				}
			}
			example := ""
			switch {
			case base == Undecided:
				d := g.deps[deps[0]]
				example = fmt.Sprintf("%s (rw), and %s reaches %s back through other dependencies; whether that way holds another read that missed a write (G2-item) or not (G-single) was not decided: the search stopped after %d steps",
					c.why(d), name(c.txns[d.to]), name(c.txns[d.from]), maxSteps)
			case base == LongFork:
				example = c.explainFork(rotate(best))
			case best != nil && base == "G-nonadjacent":
				example = "no two of its reads that missed a write are next to each other, so no snapshots explain it: " + c.explain(rotate(best))
			case best == nil:
				d := g.deps[deps[0]]
				example = fmt.Sprintf("%s (%s), and %s reaches %s back (the way not drawn: its search stopped after %d steps)", c.why(d), kindName[d.kind], name(c.txns[d.to]), name(c.txns[d.from]), maxSteps)
			default:
				example = c.explain(rotate(best))
			}
			a := &Anomaly{Type: typ, Count: len(deps), Unit: unitOf(typ), Example: example, size: len(best), cycle: best}
			for _, i := range deps { // each counted at its rw (or closing) edge: complete once both its ends are
				a.seen(ended(c.txns[g.deps[i].from], c.txns[g.deps[i].to]))
			}
			c.found[typ] = a
		}
	}
	return nil
}

// comps are one level's components: of its data edges (d; nil when they
// close no cycle), of its ww and wr edges (r: also the graph G-single
// paths take), of its ww edges (w: r when r has no cycle, since w's edges
// are fewer).
type comps struct{ d, r, w []int32 }

// levelComponents are each level's components, the strongest level's data
// components given (all). The searches do not depend on one another: they
// run side by side, in two rounds (what the second needs depends on the
// first's cycles).
func (g *graph) levelComponents(all []int32) []comps {
	out := make([]comps, len(levels))
	var first []func()
	for l, lv := range levels {
		out[l].d = all
		if l < len(levels)-1 {
			first = append(first, func() { out[l].d = g.components(ww | wr | rw | lv.order) })
		}
		first = append(first, func() { out[l].r = g.components(ww | wr | lv.order) })
	}
	together(first...)
	var second []func()
	for l, lv := range levels {
		switch {
		case !g.cyclic(out[l].d):
			out[l] = comps{}
		case g.cyclic(out[l].r):
			second = append(second, func() { out[l].w = g.components(ww | lv.order) })
		default:
			out[l].w = out[l].r
		}
	}
	together(second...)
	return out
}

// together runs fns side by side and returns once each has.
func together(fns ...func()) {
	var wg sync.WaitGroup
	for _, f := range fns {
		wg.Go(f)
	}
	wg.Wait()
}

// reaches says whether v reaches u by the edges in mask (a graph whose
// components are comp), walking only nodes of u's component in the
// graph with every data edge (within). ok is false when the search was
// cut short. Components are in reverse topological order, so a node whose
// component is numbered below u's cannot reach it.
func (c *checker) reaches(s *search, v, u int32, mask uint8, comp, within []int32) (found, ok bool) {
	switch {
	case comp[v] == comp[u]:
		return true, true
	case comp[v] < comp[u]:
		return false, true
	case mask&realtime != 0 && c.before(v, u):
		return true, true // v completed before u began: real time leads there
	case mask&process != 0 && c.seq[v] >= 0 && c.seq[u] > c.seq[v] && c.txns[v].Process == c.txns[u].Process:
		return true, true // one client ran v, then u
	}
	if s.steps > maxSteps {
		return false, false
	}
	s.stamp++
	s.queue = append(s.queue[:0], v)
	s.seen[v] = s.stamp
	for len(s.queue) > 0 {
		x := s.queue[len(s.queue)-1]
		s.queue = s.queue[:len(s.queue)-1]
		for _, e := range c.g.edges(x) {
			d := &c.g.deps[e]
			if d.kind&mask == 0 {
				continue
			}
			s.steps++
			y := d.to
			if y == u {
				return true, true
			}
			if s.seen[y] == s.stamp || comp[y] < comp[u] || within[y] != within[u] {
				continue
			}
			s.seen[y] = s.stamp
			s.queue = append(s.queue, y)
		}
		if s.steps > maxSteps {
			return false, false
		}
	}
	return false, true
}

// before says whether v completed before u began.
func (c *checker) before(v, u int32) bool {
	tv, tu := c.txns[v], c.txns[u]
	return tv.Type == "ok" && tv.Complete != nil && tv.Complete.Time < tu.Invoke.Time
}

// shortest is a shortest path from v to u by the edges in mask (but those
// skip marks) through the nodes keep allows (nil when there is none, or the walk's share of the
// steps ran out).
func (s *search) shortest(g *graph, v, u int32, mask uint8, skip []bool, keep func(int32) bool) []dep {
	s.stamp++
	s.queue = append(s.queue[:0], v)
	s.seen[v] = s.stamp
	s.from[v] = -1
	for head := 0; head < len(s.queue); head++ {
		x := s.queue[head]
		for _, e := range g.edges(x) {
			d := &g.deps[e]
			if d.kind&mask == 0 || skip != nil && skip[e] {
				continue
			}
			s.steps++
			y := d.to
			if s.seen[y] == s.stamp || (y != u && !keep(y)) {
				continue
			}
			s.seen[y] = s.stamp
			s.from[y] = e
			if y == u {
				var path []dep
				for at := u; at != v; at = g.deps[s.from[at]].from {
					path = append(path, g.deps[s.from[at]])
				}
				for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
					path[i], path[j] = path[j], path[i]
				}
				return path
			}
			s.queue = append(s.queue, y)
		}
		if s.steps > 2*maxSteps {
			return nil
		}
	}
	return nil
}

// rotate starts a cycle at its lowest-numbered transaction, so an example
// reads from the earliest.
func rotate(cyc []dep) []dep {
	at := 0
	for i, d := range cyc {
		if d.from < cyc[at].from {
			at = i
		}
	}
	return append(append([]dep{}, cyc[at:]...), cyc[:at]...)
}

// classify names a cycle by its edges: no rw edge is G0 (only ww) or G1c
// (a wr too); one rw edge G-single; two or more G2-item, or G-nonadjacent
// when no two are next to each other (a long fork when it is rw, wr, rw,
// wr and nothing else); with a real-time
// edge the type ends in -realtime, else with a process edge in -process.
func classify(edges []dep) string {
	rws, wrs, proc, rt := 0, 0, false, false
	for _, e := range edges {
		switch e.kind {
		case rw:
			rws++
		case wr:
			wrs++
		case process:
			proc = true
		case realtime:
			rt = true
		}
	}
	base := "G2-item"
	switch {
	case rws >= 2 && !adjacentRW(edges):
		base = "G-nonadjacent"
		if len(edges) == 4 && !proc && !rt && wrs == 2 {
			return LongFork
		}
	case rws == 0 && wrs == 0:
		base = "G0"
	case rws == 0:
		base = "G1c"
	case rws == 1:
		base = "G-single"
	}
	switch {
	case rt:
		return base + "-realtime"
	case proc:
		return base + "-process"
	}
	return base
}

// simple says whether a closed walk passes each transaction once.
func simple(walk []dep) bool {
	seen := make(map[int32]bool, len(walk))
	for _, d := range walk {
		if seen[d.from] {
			return false
		}
		seen[d.from] = true
	}
	return true
}

// adjacentRW says whether two rw edges follow each other round a cycle.
func adjacentRW(edges []dep) bool {
	for i, e := range edges {
		if e.kind == rw && edges[(i+1)%len(edges)].kind == rw {
			return true
		}
	}
	return false
}

// explain says a cycle in words, edge by edge.
func (c *checker) explain(cyc []dep) string {
	parts := make([]string, 0, len(cyc))
	who := make([]string, 0, len(cyc))
	for _, d := range cyc {
		parts = append(parts, fmt.Sprintf("%s (%s)", c.why(d), kindName[d.kind]))
		who = append(who, describe(c.txns[d.from]))
	}
	return fmt.Sprintf("a cycle of %d transactions: %s; so each must come before itself (%s)", len(cyc), strings.Join(parts, "; "), strings.Join(who, ", "))
}

// Snapshot isolation allows a cycle only when two of its reads that missed
// a write (rw) are next to each other (Cerone and Gotsman's
// characterisation; write skew is T1 rw→ T2 rw→ T1). A closed walk whose
// rw edges are never next to each other is impossible under it: give each
// transaction its snapshot's start and its commit; a ww or wr edge T→U
// means T committed before U's snapshot, an rw edge T→U that U committed
// after T's snapshot, so an rw edge followed by any other edge T→U→V, and
// any other edge T→V alone, puts T's start strictly before V's, and round
// the walk a start before itself. Elle names such a cycle G-nonadjacent.

// nonadjacent is a shortest walk from rw edge e's reader's target back to
// the reader, by edges in mask (but those skip marks) through the nodes
// keep allows, on which no rw edge follows another and the last is not rw
// (e, rw, comes next): with e, a closed walk of G-nonadjacent (nil when
// there is none; ok false when the search was cut short). A transaction
// may appear on it twice.
func (s *search) nonadjacent(g *graph, e int32, mask uint8, skip []bool, keep func(int32) bool) (walk []dep, ok bool) {
	if len(s.seen2) == 0 {
		n := 2 * len(g.in)
		s.seen2, s.from2, s.prev2 = make([]int32, n), make([]int32, n), make([]int32, n)
	}
	v, u := g.deps[e].to, g.deps[e].from
	s.stamp++
	start := 2*v + 1 // a state: node×2 + whether it was reached by an rw edge
	s.queue = append(s.queue[:0], start)
	s.seen2[start] = s.stamp
	for head := 0; head < len(s.queue); head++ {
		st := s.queue[head]
		x, afterRW := st/2, st%2 == 1
		for _, f := range g.edges(x) {
			d := &g.deps[f]
			if d.kind&mask == 0 || skip != nil && skip[f] || d.kind == rw && afterRW {
				continue
			}
			s.steps++
			next := 2 * d.to
			if d.kind == rw {
				next++
			}
			if s.seen2[next] == s.stamp || d.to != u && !keep(d.to) {
				continue
			}
			s.seen2[next], s.from2[next], s.prev2[next] = s.stamp, f, st
			if next == 2*u {
				for at := next; at != start; at = s.prev2[at] {
					walk = append(walk, g.deps[s.from2[at]])
				}
				slices.Reverse(walk)
				return append([]dep{g.deps[e]}, walk...), true
			}
			s.queue = append(s.queue, next)
		}
		if s.steps > maxSteps {
			return nil, false
		}
	}
	return nil, true
}

// longFork is a long fork through rw edge e (T1 rw→ W2), when there is one:
// W2 wr→ T2 rw→ W1 wr→ T1, four transactions, no rw edge among those skip
// marks.
func (c *checker) longFork(s *search, e int32, skip []bool) []dep {
	g := c.g
	d := g.deps[e]
	t1, w2 := d.from, d.to
	for _, f := range g.edges(w2) {
		toT2 := g.deps[f]
		if toT2.kind != wr || toT2.to == t1 {
			continue
		}
		for _, h := range g.edges(toT2.to) {
			toW1 := g.deps[h]
			if toW1.kind != rw || skip[h] || toW1.to == w2 || toW1.to == t1 {
				continue
			}
			for _, k := range g.edges(toW1.to) {
				s.steps++
				if back := g.deps[k]; back.kind == wr && back.to == t1 {
					return []dep{d, toT2, toW1, back}
				}
			}
		}
	}
	return nil
}

// explainFork says a long fork in words.
func (c *checker) explainFork(cyc []dep) string {
	for len(cyc) == 4 && cyc[0].kind != rw {
		cyc = append(cyc[1:], cyc[0])
	}
	t1, w2, t2, w1 := c.txns[cyc[0].from], c.txns[cyc[1].from], c.txns[cyc[2].from], c.txns[cyc[3].from]
	return fmt.Sprintf("%s and %s saw %s's and %s's writes in opposite orders: %s saw %s's but not %s's, %s saw %s's but not %s's (%s; %s; %s; %s)",
		describe(t1), describe(t2), name(w1), name(w2), name(t1), name(w1), name(w2), name(t2), name(w2), name(w1),
		c.why(cyc[0]), c.why(cyc[1]), c.why(cyc[2]), c.why(cyc[3]))
}
