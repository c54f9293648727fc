package consistency

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/hadrill/hadrill/internal/stats"
)

// Freshness is how stale the committed reads of some node (or of every
// node: Node empty) were. A read transaction is stale when it missed an
// append acknowledged as committed before it began; it was behind by at
// least the time since the earliest such acknowledgement (a lower bound on
// the copy's lag: the copy may have been further behind). A replica's
// reads are expected to be stale under asynchronous replication; the
// checker counts them as anomalies only under strict serializability
// (G-single-realtime).
type Freshness struct {
	Node  string `json:"node,omitempty"`
	Reads int    `json:"reads"` // committed transactions that read a key
	Stale int    `json:"stale"`
	// of the stale reads, seconds behind: median, 99th percentile, most
	BehindP50 float64 `json:"behind_p50_s"`
	BehindP99 float64 `json:"behind_p99_s"`
	BehindMax float64 `json:"behind_max_s"`
}

// freshness measures every committed read against each key's order of
// versions: overall first, then per node when the reads came from more
// than one. A read that is not a prefix of its key's order is left out
// (incompatible-order names it).
func (c *checker) freshness() []Freshness {
	// key -> for each version index i, the earliest acknowledgement of an
	// append at i or later (the versions a read of length i missed)
	acked := make(map[int][]int64, len(c.order))
	for k, l := range c.order {
		m := make([]int64, len(l)+1)
		m[len(l)] = -1
		for i := len(l) - 1; i >= 0; i-- {
			m[i] = m[i+1]
			if w := c.writerOf(k, l[i]); w != nil && w.Type == "ok" && w.Complete != nil && (m[i] < 0 || w.Complete.Time < m[i]) {
				m[i] = w.Complete.Time
			}
		}
		acked[k] = m
	}
	fresh := newFreshTally()
	for _, t := range c.txns {
		if t.Type != "ok" || t.Invoke == nil {
			continue
		}
		read, behind := false, int64(-1)
		for _, m := range t.Mops {
			if m.F != "r" || !m.Read || !prefix(m.List, c.order[m.Key]) {
				continue
			}
			read = true
			if at := acked[m.Key][len(m.List)]; at >= 0 && at < t.Invoke.Time {
				behind = max(behind, t.Invoke.Time-at)
			}
		}
		if read {
			fresh.add(t.Node, behind)
		}
	}
	return fresh.figures()
}

// freshTally gathers reads' staleness per node.
type freshTally struct {
	all  *tally
	node map[string]*tally
}

type tally struct {
	reads  int
	behind []float64 // the stale reads', in seconds
}

func newFreshTally() *freshTally { return &freshTally{all: &tally{}, node: map[string]*tally{}} }

// add counts one read on node, stale by behind ns (-1: not stale).
func (f *freshTally) add(node string, behind int64) {
	n := f.node[node]
	if n == nil {
		n = &tally{}
		f.node[node] = n
	}
	for _, x := range []*tally{f.all, n} {
		x.reads++
		if behind >= 0 {
			x.behind = append(x.behind, float64(behind)/1e9)
		}
	}
}

// figures are the tallies' figures: overall first, then per node when the
// reads came from more than one (nil: no read).
func (f *freshTally) figures() []Freshness {
	if f.all.reads == 0 {
		return nil
	}
	figure := func(node string, x *tally) Freshness {
		r := Freshness{Node: node, Reads: x.reads, Stale: len(x.behind)}
		if len(x.behind) > 0 {
			slices.Sort(x.behind)
			r.BehindP50, r.BehindP99, r.BehindMax = stats.Percentile(x.behind, 50), stats.Percentile(x.behind, 99), x.behind[len(x.behind)-1]
		}
		return r
	}
	out := []Freshness{figure("", f.all)}
	if len(f.node) > 1 {
		for node, x := range f.node {
			out = append(out, figure(cmp.Or(node, "?"), x))
		}
		slices.SortFunc(out[1:], func(a, b Freshness) int { return cmp.Compare(a.Node, b.Node) })
	}
	return out
}

// Text is the figures in words: "db2: 2 of 3 reads stale, behind by
// 3.0 s (median), 3.0 s (p99), 3.0 s at most".
func (f Freshness) Text() string {
	who := "every node"
	if f.Node != "" {
		who = f.Node
	}
	s := fmt.Sprintf("%s: %d of %d reads stale", who, f.Stale, f.Reads)
	if f.Stale > 0 {
		s += fmt.Sprintf(" (%.1f %%), behind by %s (median), %s (p99), %s at most", 100*float64(f.Stale)/float64(f.Reads), seconds(f.BehindP50), seconds(f.BehindP99), seconds(f.BehindMax))
	}
	return s
}

// seconds says a duration in seconds with the precision it needs.
func seconds(s float64) string {
	switch {
	case s > 0 && s < 0.001:
		return fmt.Sprintf("%.0f µs", 1e6*s)
	case s < 0.1:
		return fmt.Sprintf("%.1f ms", 1000*s)
	}
	return fmt.Sprintf("%.2f s", s)
}
