package consistency

import (
	"context"
	"testing"
	"time"
)

func TestSimulatedHistories(t *testing.T) {
	ops := Simulate(2000, 8, 10, false, 1)
	if r, err := Check(context.Background(), ops, "strict-serializable"); err != nil || !r.Valid || len(r.Anomalies) != 0 {
		t.Fatalf("a strictly serializable history: %v %+v", err, r)
	}
	r, err := Check(context.Background(), Simulate(2000, 8, 10, true, 2), "strict-serializable")
	if err != nil || r.Valid {
		t.Fatalf("stale reads went unnoticed: %v %+v", err, r)
	}
	t.Logf("stale reads found as: %s", types(r))
}

// TestLargeHistory: 100,000 operations check in seconds (the figure make
// bench keeps is measured apart; this bound only catches a quadratic).
func TestLargeHistory(t *testing.T) {
	ops := Simulate(50000, 10, 100, false, 3)
	t0 := time.Now()
	r, err := Check(context.Background(), ops, "strict-serializable")
	if err != nil || !r.Valid {
		t.Fatalf("%v %+v", err, r)
	}
	if d := time.Since(t0); d > 30*time.Second {
		t.Errorf("%d operations took %v", len(ops), d)
	}
	t.Logf("%d operations checked in %v", len(ops), time.Since(t0))
}
