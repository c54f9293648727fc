package consistency

import "math/rand/v2"

// Simulate makes a history for tests and benchmarks: n list-append
// transactions of 1 to 4 micro-operations over keys, from procs clients,
// against a model database that applies each transaction at once at a
// moment between its invocation and its completion (strictly
// serializable); with stale, a read sometimes returns the list as it was
// one append earlier (a stale replica).
func Simulate(n, procs, keys int, stale bool, seed uint64) []Op {
	r := rand.New(rand.NewPCG(seed, 1))
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
				k := r.IntN(keys)
				if r.IntN(2) == 0 {
					next[k]++
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
