package consistency

import "fmt"

// edge kinds of the dependency graph (bits, so a set of kinds is a mask)
const (
	ww = 1 << iota
	wr
	rw
	process
	realtime
)

var kindName = map[uint8]string{ww: "ww", wr: "wr", rw: "rw", process: "process", realtime: "realtime"}

// dep is one edge of the dependency graph, with what its words need: the
// key and the values of a ww edge (from appended a, to then appended b),
// the read of a wr edge (to's micro-operation mop) or of an rw edge
// (from's, missing to's b).
type dep struct {
	from, to int32
	mop      int32
	kind     uint8 // after the int32s: 40 bytes an edge, not 48
	key      int
	a, b     int
}

// graph is the transactions' dependency graph: nodes are transaction ids
// (those in it marked in), edges in one slice and, once sealed, each
// node's out-edges as a range of out.
type graph struct {
	in   []bool
	deps []dep
	off  []int32 // node -> its first out-edge in out; off[n+1] its end
	out  []int32 // indices into deps, grouped by from
	// each out-edge's target and kind beside out, in its order: what a
	// search of components reads, in a few bytes an edge one after the
	// other rather than from the edges' 40 bytes each, scattered
	outTo   []int32
	outKind []uint8
}

func newGraph(n int) *graph { return &graph{in: make([]bool, n)} }

func (g *graph) add(d dep) { g.deps = append(g.deps, d) }

// seal groups the edges by their source (call once every edge is added).
func (g *graph) seal() {
	n := len(g.in)
	g.off = make([]int32, n+1)
	for _, d := range g.deps {
		g.off[d.from+1]++
	}
	for i := 0; i < n; i++ {
		g.off[i+1] += g.off[i]
	}
	next := make([]int32, n)
	copy(next, g.off[:n])
	g.out = make([]int32, len(g.deps))
	g.outTo, g.outKind = make([]int32, len(g.deps)), make([]uint8, len(g.deps))
	for i, d := range g.deps {
		at := next[d.from]
		g.out[at], g.outTo[at], g.outKind[at] = int32(i), d.to, d.kind
		next[d.from]++
	}
}

// edges are node x's out-edges.
func (g *graph) edges(x int32) []int32 { return g.out[g.off[x]:g.off[x+1]] }

// components are the strongly connected components of the graph made of
// the edges whose kind is in mask.
func (g *graph) components(mask uint8) []int32 { return g.componentsWithout(mask, nil) }

// componentsWithout are the strongly connected components of the graph
// made of the edges whose kind is in mask and that skip does not mark: comp[x] is x's component (-1 for a
// node not in the graph), numbered in the order Tarjan's algorithm closes
// them, which is a reverse topological order: an edge between two
// components always goes to the lower number. Iterative: a long history
// makes deep graphs.
func (g *graph) componentsWithout(mask uint8, skip []bool) []int32 {
	return g.tarjan(mask, skip, false)
}

// cyclic says whether components holds one of two or more nodes (every
// edge joins two transactions, never one to itself).
func (g *graph) cyclic(comp []int32) bool {
	nodes, comps := 0, int32(0)
	for x, in := range g.in {
		if in {
			nodes++
			comps = max(comps, comp[x]+1)
		}
	}
	return int(comps) < nodes
}

// alternating are the strongly connected components of the graph of
// states (x, reached by an rw edge) over the same edges: state 2x+1 is x
// reached by an rw edge, 2x by any other, and an rw edge leaves only a
// state of the second kind (no two rw edges in a row). An rw edge u→v lies
// on a closed walk whose rw edges are never next to each other exactly
// when states 2u and 2v+1 share a component: one pass for every edge.
func (g *graph) alternating(mask uint8, skip []bool) []int32 {
	return g.tarjan(mask, skip, true)
}

// tarjan is componentsWithout, over the states of alternating when alt.
func (g *graph) tarjan(mask uint8, skip []bool, alt bool) []int32 {
	n := len(g.in)
	if alt {
		n *= 2
	}
	node := func(s int32) int32 {
		if alt {
			return s / 2
		}
		return s
	}
	comp := make([]int32, n)
	index := make([]int32, n)
	low := make([]int32, n)
	onStack := make([]bool, n)
	for i := range comp {
		comp[i], index[i] = -1, -1
	}
	var stack []int32
	type frame struct {
		node int32
		edge int32
	}
	var work []frame
	next, ncomp := int32(0), int32(0)
	for root := int32(0); root < int32(n); root++ {
		if !g.in[node(root)] || index[root] >= 0 {
			continue
		}
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		work = append(work[:0], frame{root, g.off[node(root)]})
		for len(work) > 0 {
			f := &work[len(work)-1]
			if f.edge < g.off[node(f.node)+1] {
				at := f.edge
				f.edge++
				kind := g.outKind[at]
				if kind&mask == 0 || skip != nil && skip[g.out[at]] {
					continue
				}
				to := g.outTo[at]
				if alt {
					switch {
					case kind != rw:
						to = 2 * to
					case f.node%2 == 1: // reached by an rw edge: no second in a row
						continue
					default:
						to = 2*to + 1
					}
				}
				if index[to] < 0 {
					index[to], low[to] = next, next
					next++
					stack = append(stack, to)
					onStack[to] = true
					work = append(work, frame{to, g.off[node(to)]})
				} else if onStack[to] {
					low[f.node] = min(low[f.node], index[to])
				}
				continue
			}
			x := f.node
			work = work[:len(work)-1]
			if len(work) > 0 {
				p := work[len(work)-1].node
				low[p] = min(low[p], low[x])
			}
			if low[x] == index[x] {
				for {
					y := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[y] = false
					comp[y] = ncomp
					if y == x {
						break
					}
				}
				ncomp++
			}
		}
	}
	return comp
}

// why says one edge in words.
func (c *checker) why(d dep) string {
	from, to := c.txns[d.from], c.txns[d.to]
	switch d.kind {
	case ww:
		return fmt.Sprintf("%s appended %d to key %d, and %s then appended %d", name(from), d.a, d.key, name(to), d.b)
	case wr:
		l := to.Mops[d.mop].List
		return fmt.Sprintf("%s read key %d = %s, which ends in %s's %d", name(to), d.key, short(l), name(from), l[len(l)-1])
	case rw:
		return fmt.Sprintf("%s read key %d = %s, without %s's %d that follows", name(from), d.key, short(from.Mops[d.mop].List), name(to), d.b)
	case process:
		return fmt.Sprintf("%s and %s ran one after the other on process %d", name(from), name(to), to.Process)
	}
	return fmt.Sprintf("%s completed before %s began", name(from), name(to))
}
