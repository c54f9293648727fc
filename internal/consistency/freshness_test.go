package consistency

import (
	"context"
	"fmt"
	"testing"
)

// TestFreshness: a read that missed an append acknowledged before it began
// is stale by the time since that acknowledgement; one that saw every
// acknowledged append, or missed only one still in flight, is not; the
// figures are given overall and per node.
func TestFreshness(t *testing.T) {
	const s = int64(1e9)
	h := new(hist).
		txn(0, 1*s, 2*s, "ok", ap(1, 1)).     // acknowledged at 2 s
		txn(0, 3*s, 4*s, "ok", ap(1, 2)).     // at 4 s
		txn(3, 4*s, 20*s, "ok", ap(1, 3)).    // at 20 s: in flight until then
		txn(1, 5*s, 6*s, "ok", rd(1, 1, 2)).  // db1: fresh (3 was not yet acknowledged)
		txn(2, 5*s, 6*s, "ok", rd(1)).        // db2: missed 1 (acknowledged at 2 s): 3 s behind
		txn(2, 7*s, 8*s, "ok", rd(1, 1)).     // db2: missed 2 (at 4 s): 3 s behind
		txn(2, 9*s, 10*s, "ok", rd(1, 1, 2)). // db2: fresh
		txn(1, 21*s, 22*s, "ok", rd(1, 1, 2, 3))
	ops := h.sorted()
	for i := range ops {
		if ops[i].Process == 2 {
			ops[i].Node = "db2"
		} else {
			ops[i].Node = "db1"
		}
	}
	r, err := Check(context.Background(), ops, "snapshot-isolation")
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(r.Reads)
	want := "[{ 5 2 3 3 3} {db1 2 0 0 0 0} {db2 3 2 3 3 3}]"
	if got != want {
		t.Fatalf("freshness %s, want %s", got, want)
	}
	if !r.Valid {
		t.Errorf("stale reads are allowed by snapshot isolation: %v", r.Forbidden)
	}
}
