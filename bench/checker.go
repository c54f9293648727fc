package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/hadrill/hadrill/internal/consistency"
)

// checker: `hadrill check` on a valid history of 100,000 operations (a
// simulated strictly serializable database, 10 clients, 100 keys), the
// whole command timed; the target is under 10 s. Then a history of
// 40,000 operations from 200 clients where one read in twenty is stale,
// the shape the checker exists for (a search per component that grew with
// it took 47 s before each dependency was classified alone): the target is
// under 10 s, and its ratio to a valid history of the same shape is shown.
// Last, a set history of 100,000 elements (Jepsen's set-full shape): under
// 10 s.
func checker(bin string, runs int) {
	dir, err := os.MkdirTemp("", "hdbench-check-")
	check(err)
	atExit(func() { os.RemoveAll(dir) })
	write := func(name string, ops []consistency.Op) string {
		file := filepath.Join(dir, name)
		f, err := os.Create(file)
		check(err)
		check(consistency.Write(f, ops))
		check(f.Close())
		return file
	}
	timed := func(file string) []float64 {
		var secs []float64
		for i := 0; i < runs; i++ {
			t0 := time.Now()
			_, err := runAllowFail(bin, "check", file)
			var x *exec.ExitError
			if err != nil && (!errors.As(err, &x) || x.ExitCode() != 5) { // 5: anomalies found, a result
				fail("hadrill check %s: %v", file, err)
			}
			secs = append(secs, time.Since(t0).Seconds())
		}
		return secs
	}
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "MISSED"
	}
	ops := consistency.Simulate(50000, 10, 100, false, 1)
	secs := timed(write("history.jsonl", ops))
	fmt.Printf("checker: hadrill check of %d operations (valid, strict serializable)\n", len(ops))
	fmt.Printf("  median %.2f s (min %.2f, max %.2f) over %d runs; target < 10 s: %s\n", median(secs), minf(secs), maxf(secs), runs, verdict(median(secs) < 10))
	stale := timed(write("stale.jsonl", consistency.Simulate(20000, 200, 100, true, 1)))
	valid := timed(write("valid.jsonl", consistency.Simulate(20000, 200, 100, false, 1)))
	fmt.Printf("checker: 40,000 operations from 200 clients, one read in twenty stale (a valid history of the same shape beside it)\n")
	fmt.Printf("  median %.2f s (min %.2f, max %.2f) against %.2f s valid: %.2f×; target < 10 s: %s\n", median(stale), minf(stale), maxf(stale), median(valid),
		median(stale)/median(valid), verdict(median(stale) < 10))
	// a set history (bench consistency --workload set): 100,000 elements,
	// 100 reads of the whole set, each missing the last 5 acknowledged
	set := timed(write("set.jsonl", consistency.SimulateSet(100_000, 10, 100, 5)))
	fmt.Printf("checker: a set history of 100,000 elements and 100 whole-set reads (5 elements behind each), 5.1 million elements read\n")
	fmt.Printf("  median %.2f s (min %.2f, max %.2f) over %d runs: %.0f elements read a second; target < 10 s: %s\n", median(set), minf(set), maxf(set), runs,
		5.1e6/median(set), verdict(median(set) < 10))
}
