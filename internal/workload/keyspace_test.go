package workload

import (
	"math/rand/v2"
	"testing"
)

// TestKeyspace: a key is retired once it was given its last value, the
// next unused key takes its place, values are unique per key, and every
// key used is read at the end.
func TestKeyspace(t *testing.T) {
	ks := newKeyspace(2, 3)
	r := rand.New(rand.NewPCG(1, 1))
	seen := map[[2]int]bool{}
	for i := 0; i < 60; i++ {
		k := ks.pick(r)
		v := ks.value(k)
		if seen[[2]int{k, v}] || v > 3 {
			t.Fatalf("key %d value %d: given twice, or past the key's last", k, v)
		}
		seen[[2]int{k, v}] = true
	}
	if got := len(ks.all()); got != 2+60/3 {
		t.Errorf("%d keys used for 60 values of 3 each on 2 active keys, want 22", got)
	}
	if k := ks.value(0); k != 4 { // a straggler on a retired key still gets a new value
		t.Errorf("a retired key's next value: %d", k)
	}
}
