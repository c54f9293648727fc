package consistency

import (
	"math/rand/v2"
	"testing"
	"time"
)

// simulate runs n list-append transactions of 1 to 4 micro-operations over
// keys from procs clients against a model database that applies each
// transaction at once at a moment inside its invocation and completion
// (strictly serializable); with stale, a read sometimes returns the list as
// it was one append earlier (a stale replica).
func simulate(n, procs, keys int, stale bool, seed uint64) []Op {
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
					mops = append(mops, ap(k, next[k]))
					inv = append(inv, ap(k, next[k]))
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
			pd.done.Value[j] = rd(m.Key, l...)
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

func TestSimulatedHistories(t *testing.T) {
	ops := simulate(2000, 8, 10, false, 1)
	if r, err := Check(ops, "strict-serializable"); err != nil || !r.Valid || len(r.Anomalies) != 0 {
		t.Fatalf("a strictly serializable history: %v %+v", err, r)
	}
	r, err := Check(simulate(2000, 8, 10, true, 2), "strict-serializable")
	if err != nil || r.Valid {
		t.Fatalf("stale reads went unnoticed: %v %+v", err, r)
	}
	t.Logf("stale reads found as: %s", types(r))
}

// TestLargeHistory: 100,000 operations check in seconds (the figure make
// bench keeps is measured apart; this bound only catches a quadratic).
func TestLargeHistory(t *testing.T) {
	ops := simulate(50000, 10, 100, false, 3)
	t0 := time.Now()
	r, err := Check(ops, "strict-serializable")
	if err != nil || !r.Valid {
		t.Fatalf("%v %+v", err, r)
	}
	if d := time.Since(t0); d > 30*time.Second {
		t.Errorf("%d operations took %v", len(ops), d)
	}
	t.Logf("%d operations checked in %v", len(ops), time.Since(t0))
}
