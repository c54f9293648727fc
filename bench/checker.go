package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hadrill/hadrill/internal/consistency"
)

// checker: `hadrill check` on a valid history of 100,000 operations (a
// simulated strictly serializable database, 10 clients, 100 keys), the
// whole command timed; the target is under 10 s.
func checker(bin string, runs int) {
	dir, err := os.MkdirTemp("", "hdbench-check-")
	check(err)
	atExit(func() { os.RemoveAll(dir) })
	file := filepath.Join(dir, "history.jsonl")
	f, err := os.Create(file)
	check(err)
	ops := consistency.Simulate(50000, 10, 100, false, 1)
	check(consistency.Write(f, ops))
	check(f.Close())
	var secs []float64
	for i := 0; i < runs; i++ {
		t0 := time.Now()
		run(bin, "check", file)
		secs = append(secs, time.Since(t0).Seconds())
	}
	verdict := "met"
	if median(secs) >= 10 {
		verdict = "MISSED"
	}
	fmt.Printf("checker: hadrill check of %d operations (valid, strict serializable)\n", len(ops))
	fmt.Printf("  median %.2f s (min %.2f, max %.2f) over %d runs; target < 10 s: %s\n", median(secs), minf(secs), maxf(secs), runs, verdict)
}
