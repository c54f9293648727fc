package consistency

import (
	"fmt"
	"sort"
	"strings"
)

// maxStarts bounds the transactions of one strongly connected component a
// cycle is searched from (each search is a breadth-first walk of the
// component): a large component still yields its anomaly types, from its
// first transactions.
const maxStarts = 64

// cycles finds the dependency graph's strongly connected components and,
// in each, the shortest cycle of every type it holds, named by its edges:
// no rw edge is G0 (only ww) or G1c (a wr too); one rw edge G-single; two
// or more G2-item; with a real-time edge the type ends in -realtime, else
// with a process edge in -process.
func (c *checker) cycles() {
	for _, comp := range c.components() {
		if len(comp) < 2 {
			continue
		}
		in := map[int]bool{}
		for _, n := range comp {
			in[n] = true
		}
		best := map[string][]edge{}
		starts := comp
		if len(starts) > maxStarts {
			starts = starts[:maxStarts]
		}
		for _, s := range starts {
			for kind, cyc := range c.shortestCycles(s, in) {
				if b, ok := best[kind]; !ok || len(cyc) < len(b) {
					best[kind] = cyc
				}
			}
		}
		for kind, cyc := range best {
			c.add(kind, c.explain(cyc), len(cyc))
		}
	}
}

// classify names a cycle by its edges.
func classify(edges []edge) string {
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

// state is where a walk stands: a transaction and what kinds of edges it
// has crossed (rw counted up to 2).
type state struct {
	node         int
	rws          int
	wr, proc, rt bool
}

func (s state) after(e edge) state {
	n := state{node: e.to, rws: s.rws, wr: s.wr, proc: s.proc, rt: s.rt}
	switch e.kind {
	case rw:
		n.rws = min(n.rws+1, 2)
	case wr:
		n.wr = true
	case process:
		n.proc = true
	case realtime:
		n.rt = true
	}
	return n
}

// shortestCycles walks the component breadth-first from s, over states
// that remember the edge kinds crossed, and returns for every type of
// cycle through s the shortest one.
func (c *checker) shortestCycles(s int, in map[int]bool) map[string][]edge {
	type step struct {
		prev state
		e    edge
	}
	start := state{node: s}
	from := map[state]step{}
	seen := map[state]bool{start: true}
	queue := []state{start}
	out := map[string][]edge{}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, e := range c.graph[cur.node] {
			if !in[e.to] {
				continue
			}
			next := cur.after(e)
			if e.to == s {
				var path []edge
				for st := cur; st != start; st = from[st].prev {
					path = append(path, from[st].e)
				}
				for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
					path[i], path[j] = path[j], path[i]
				}
				path = append(path, e)
				kind := classify(path)
				if b, ok := out[kind]; !ok || len(path) < len(b) {
					out[kind] = path
				}
				continue
			}
			if !seen[next] {
				seen[next] = true
				from[next] = step{prev: cur, e: e}
				queue = append(queue, next)
			}
		}
	}
	return out
}

// explain says a cycle in words, edge by edge.
func (c *checker) explain(cyc []edge) string {
	var parts []string
	for _, e := range cyc {
		parts = append(parts, fmt.Sprintf("%s (%s)", e.why(), kindName[e.kind]))
	}
	var who []string
	for _, e := range cyc {
		who = append(who, describe(c.txns[e.to]))
	}
	return fmt.Sprintf("a cycle of %d transactions: %s; so each must come before itself (%s)", len(cyc), strings.Join(parts, "; "), strings.Join(who, ", "))
}

// components are the graph's strongly connected components (Tarjan's
// algorithm, iterative: a long history makes deep graphs).
func (c *checker) components() [][]int {
	index := map[int]int{}
	low := map[int]int{}
	onStack := map[int]bool{}
	var stack []int
	var out [][]int
	next := 0
	var nodes []int
	for id := range c.nodeOf {
		nodes = append(nodes, id)
	}
	sort.Ints(nodes)
	type frame struct {
		node, edge int
	}
	for _, root := range nodes {
		if _, done := index[root]; done {
			continue
		}
		work := []frame{{root, 0}}
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(work) > 0 {
			f := &work[len(work)-1]
			edges := c.graph[f.node]
			if f.edge < len(edges) {
				to := edges[f.edge].to
				f.edge++
				if _, seen := index[to]; !seen {
					index[to], low[to] = next, next
					next++
					stack = append(stack, to)
					onStack[to] = true
					work = append(work, frame{to, 0})
				} else if onStack[to] {
					low[f.node] = min(low[f.node], index[to])
				}
				continue
			}
			n := f.node
			work = work[:len(work)-1]
			if len(work) > 0 {
				p := work[len(work)-1].node
				low[p] = min(low[p], low[n])
			}
			if low[n] == index[n] {
				var comp []int
				for {
					x := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[x] = false
					comp = append(comp, x)
					if x == n {
						break
					}
				}
				sort.Ints(comp)
				out = append(out, comp)
			}
		}
	}
	return out
}
