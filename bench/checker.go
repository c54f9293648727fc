package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/consistency"
)

// checker: `hadrill check` of histories of 1,000,000 operations (500,000
// list-append transactions against a simulated strictly serializable
// database, keys retired after 100 appends as the workload's are), the
// whole command timed and its peak memory read: valid from 10 clients,
// one read in twenty stale (the shape the checker exists for: before, its
// time grew faster than the history), and valid from 200 clients (wide).
// Targets: each ≤ 5 s and ≤ 1 GB, the stale one within 2× the valid one.
// Last, a set history of 100,000 elements (Jepsen's set-full shape):
// under 10 s.
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
	// timed: each run's seconds and peak resident memory (MB), read from
	// the child's VmHWM as it runs (its rusage would count this process's
	// own peak, which it shared until it ran hadrill)
	timed := func(file string) (secs, mb []float64) {
		for i := 0; i < runs; i++ {
			c := exec.Command(bin, "check", file)
			t0 := time.Now()
			check(c.Start())
			done, peak := make(chan struct{}), make(chan float64, 1)
			go func() {
				hwm := 0.0
				for {
					if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.Process.Pid)); err == nil {
						for _, l := range strings.Split(string(b), "\n") {
							if kb, ok := strings.CutPrefix(l, "VmHWM:"); ok {
								v, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(kb), "kB")), 64)
								hwm = max(hwm, v/1024)
							}
						}
					}
					select {
					case <-done:
						peak <- hwm
						return
					case <-time.After(20 * time.Millisecond):
					}
				}
			}()
			err := c.Wait()
			close(done)
			var x *exec.ExitError
			if err != nil && (!errors.As(err, &x) || x.ExitCode() != 5) { // 5: anomalies found, a result
				fail("hadrill check %s: %v", file, err)
			}
			secs, mb = append(secs, time.Since(t0).Seconds()), append(mb, <-peak)
		}
		return secs, mb
	}
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "MISSED"
	}
	const n = 1_000_000
	fmt.Printf("checker: hadrill check of %d operations (500,000 transactions, keys retired after 100 appends), %d runs each\n", n, runs)
	fmt.Printf("  %-34s %9s %9s %12s %9s  %s\n", "history", "median s", "max s", "ops/s", "peak MB", "target ≤ 5 s, ≤ 1 GB")
	var valid float64
	cases := []struct {
		name, file string
		procs      int
		stale      bool
	}{{"valid, 10 clients", "valid.jsonl", 10, false}, {"one read in twenty stale", "stale.jsonl", 10, true}, {"valid, 200 clients (wide)", "wide.jsonl", 200, false}}
	for _, c := range cases {
		write(c.file, consistency.SimulateKeys(n/2, c.procs, 100, 100, c.stale, 1))
	}
	for _, c := range cases {
		secs, mb := timed(filepath.Join(dir, c.file))
		m := median(secs)
		fmt.Printf("  %-34s %9.2f %9.2f %12.0f %9.0f  %s\n", c.name, m, maxf(secs), n/m, maxf(mb), verdict(m <= 5 && maxf(mb) <= 1024))
		switch {
		case !c.stale && c.procs == 10:
			valid = m
		case c.stale:
			fmt.Printf("  %-34s %.2f× the valid history; target ≤ 2×: %s\n", "", m/valid, verdict(m/valid <= 2))
		}
	}
	fmt.Println("  before (2026-11-27, as a new user tried it): 1,000,000 operations in 16.8 s and 1.5 GB; Elle checks 100,000-160,000 transactions a second")
	// a set history (bench consistency --workload set): 100,000 elements,
	// 100 reads of the whole set, each missing the last 5 acknowledged
	set, _ := timed(write("set.jsonl", consistency.SimulateSet(100_000, 10, 100, 5)))
	fmt.Printf("checker: a set history of 100,000 elements and 100 whole-set reads (5 elements behind each), 5.1 million elements read\n")
	fmt.Printf("  median %.2f s (min %.2f, max %.2f) over %d runs: %.0f elements read a second; target < 10 s: %s\n", median(set), minf(set), maxf(set), runs,
		5.1e6/median(set), verdict(median(set) < 10))
}
