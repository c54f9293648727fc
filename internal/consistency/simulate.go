package consistency

import (
	"math/rand/v2"
	"sort"
)

// Simulate makes a history for tests and benchmarks: n list-append
// transactions of 1 to 4 micro-operations over keys, from procs clients,
// against a model database that applies each transaction at once at a
// moment between its invocation and its completion (strictly
// serializable); with stale, a read sometimes returns the list as it was
// one append earlier (a stale replica).
func Simulate(n, procs, keys int, stale bool, seed uint64) []Op {
	return SimulateKeys(n, procs, keys, 0, stale, seed)
}

// SimulateKeys is Simulate with each key retired once perKey appends were
// made to it (0: never), a fresh key taking its place, as the list-append
// workload's keys are: lists stay short however long the history.
func SimulateKeys(n, procs, keys, perKey int, stale bool, seed uint64) []Op {
	r := rand.New(rand.NewPCG(seed, 1))
	slot := make([]int, keys) // the key each slot holds now
	for i := range slot {
		slot[i] = i
	}
	fresh := keys
	db := map[int][]int{}
	next := map[int]int{}
	var ops []Op
	now := int64(0)
	busy := make([]bool, procs)
	type pending struct {
		proc int
		inv  Op
		done Op
	}
	var open []pending
	for made := 0; made < n || len(open) > 0; {
		now += int64(r.IntN(1000) + 1)
		if made < n && r.IntN(2) == 0 {
			p := r.IntN(procs)
			if busy[p] {
				continue
			}
			busy[p] = true
			made++
			var mops, inv []Mop
			for j := 0; j <= r.IntN(4); j++ {
				s := r.IntN(keys)
				k := slot[s]
				if r.IntN(2) == 0 {
					if next[k]++; perKey > 0 && next[k] >= perKey {
						slot[s], fresh = fresh, fresh+1
					}
					mops = append(mops, Mop{F: "append", Key: k, Value: next[k]})
					inv = append(inv, Mop{F: "append", Key: k, Value: next[k]})
				} else {
					mops = append(mops, Mop{F: "r", Key: k})
					inv = append(inv, Mop{F: "r", Key: k})
				}
			}
			op := Op{Time: now, Process: p, Type: "invoke", F: "txn", Value: inv}
			ops = append(ops, op)
			open = append(open, pending{proc: p, inv: op, done: Op{Process: p, Type: "ok", F: "txn", Value: mops}})
			continue
		}
		if len(open) == 0 {
			continue
		}
		i := r.IntN(len(open))
		pd := open[i]
		open = append(open[:i], open[i+1:]...)
		for j, m := range pd.done.Value { // applied now, atomically
			if m.F == "append" {
				db[m.Key] = append(db[m.Key], m.Value)
				continue
			}
			l := append([]int{}, db[m.Key]...)
			if stale && len(l) > 0 && r.IntN(20) == 0 {
				l = l[:len(l)-1]
			}
			pd.done.Value[j] = Mop{F: "r", Key: m.Key, List: l, Read: true}
		}
		pd.done.Time = now
		ops = append(ops, pd.done)
		busy[pd.proc] = false
	}
	for i := range ops {
		ops[i].Index = i
	}
	return ops
}

// SimulateSet makes a set history for tests and benchmarks: n elements
// added one after another by procs clients (each add acknowledged 5 µs
// after it began, the next 10 µs after that), and reads of the whole set
// by a reader of their own, evenly spread: each sees every element
// acknowledged before it began, but with lag the last few (those
// acknowledged within lag adds before it) are missed, as a replica
// behind would.
func SimulateSet(n, procs, reads, lag int) []Op {
	const step = 10_000 // ns between adds
	var ops []Op
	every := max(1, n/max(1, reads))
	reader := procs
	for i := 1; i <= n; i++ {
		start := int64(i) * step
		p := i % procs
		ops = append(ops, Op{Time: start, Process: p, Type: "invoke", F: FAdd, Node: "db1", Data: &SetOp{Elements: []int{i}}},
			Op{Time: start + step/2, Process: p, Type: "ok", F: FAdd, Node: "db1", Data: &SetOp{Elements: []int{i}}})
		if i%every == 0 || i == n {
			at := start + step/2 + 1 // after this add's acknowledgement
			seen := make([]int, 0, i)
			for v := 1; v <= i-lag; v++ {
				seen = append(seen, v)
			}
			if i == n { // the final read: everything
				seen = seen[:0]
				for v := 1; v <= n; v++ {
					seen = append(seen, v)
				}
				at += step
			}
			ops = append(ops, Op{Time: at, Process: reader, Type: "invoke", F: FReadSet, Node: "db2", Data: &SetOp{}},
				Op{Time: at + 1, Process: reader, Type: "ok", F: FReadSet, Node: "db2", Data: &SetOp{Elements: seen}})
			reader++
		}
	}
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].Time < ops[j].Time })
	for i := range ops {
		ops[i].Index = i
	}
	return ops
}
