package workload

import (
	"math/rand/v2"
	"slices"
	"sync"
)

// AppendsPerKey is how many values the list-append workload appends to a
// key before it retires the key for a new one (as Elle's list-append
// does): the keys' lists, and so every read of them, stay short, and a
// history grows with its transactions, not with their square (ten fixed
// keys for 120 s made a 600 MB history whose check took 6 GB).
const AppendsPerKey = 100

// keyspace is the list-append workload's keys: a fixed number active at
// once, each retired for the next unused one once it was given
// AppendsPerKey values; every value unique to its key.
type keyspace struct {
	mu     sync.Mutex
	active []int
	next   int         // the next unused key
	count  map[int]int // key -> values given so far
	max    int
}

func newKeyspace(active, max int) *keyspace {
	ks := &keyspace{count: map[int]int{}, max: max}
	for ks.next < active {
		ks.active = append(ks.active, ks.next)
		ks.next++
	}
	return ks
}

// pick is an active key, at random.
func (ks *keyspace) pick(r *rand.Rand) int {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	return ks.active[r.IntN(len(ks.active))]
}

// value is the next value to append to key k (1, 2, …); the key's last
// one retires it (a transaction that picked it before still appends its
// next values).
func (ks *keyspace) value(k int) int {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	ks.count[k]++
	v := ks.count[k]
	if i := slices.Index(ks.active, k); i >= 0 && v >= ks.max {
		ks.active[i] = ks.next
		ks.next++
	}
	return v
}

// all is every key used so far, in order (what the final reads read).
func (ks *keyspace) all() []int {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	out := make([]int, ks.next)
	for k := range out {
		out[k] = k
	}
	return out
}
