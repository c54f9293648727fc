package workload

import (
	"fmt"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/results"
)

// TestCosts: a point's CPU and IOs per transaction come from the seconds
// inside its measured windows only, every host's but the load
// generator's.
func TestCosts(t *testing.T) {
	start := time.Unix(1000, 0)
	r := &results.Run{ID: "r", Started: start, Topology: map[string]any{"Client": map[string]any{"Name": "gen"}}}
	ns := func(s float64) string { return fmt.Sprint(start.UnixNano() + int64(s*1e9)) }
	steps := [][]string{{"1", "1", ns(0), ns(10)}, {"8", "1", ns(12), ns(22)}}
	var hosts, disks [][]string
	for s := 1; s <= 22; s++ {
		cpu := "0.5" // 1 thread
		if s > 12 {
			cpu = "1.5" // 8 threads
		}
		hosts = append(hosts, []string{fmt.Sprint(s), "db1", cpu}, []string{fmt.Sprint(s), "gen", "9"})
		// 100 IOs a second, 40 of them reads a host cache answered
		disks = append(disks, []string{fmt.Sprint(s), "db1", "db1-data1", "data", "100", "500", "1", "2", "0.2", "60"})
	}
	pts := map[int]int64{1: 1000, 8: 5000}
	got := costs(r, pts, steps, hosts, disks)
	// 1 thread: 10 s × 0.5 cores = 5 CPU-s over 1000 tx = 5 ms; 10 s × 100 IOs = 1 IO a transaction
	if c := got[1]; !c.Known || c.CPUms != 5 || c.IOs != 1 || c.StorageIOs != 0.6 || !c.Disks {
		t.Errorf("1 thread: %+v, want 5 ms, 1 IO and 0.6 storage IOs per transaction", c)
	}
	// 8 threads: 10 s × 1.5 = 15 CPU-s over 5000 tx = 3 ms; 1000 IOs / 5000 = 0.2
	if c := got[8]; !c.Known || c.CPUms != 3 || c.IOs != 0.2 {
		t.Errorf("8 threads: %+v, want 3 ms and 0.2 IOs per transaction", c)
	}
	// a run stored before the storage column: its storage IOs are its IOs
	var old [][]string
	for _, row := range disks {
		old = append(old, row[:5])
	}
	if c := costs(r, pts, steps, hosts, old)[1]; c.StorageIOs != 1 {
		t.Errorf("without the storage column: %+v", c)
	}
	if c := costs(r, pts, steps, nil, nil); len(c) != 0 {
		t.Errorf("no samples, no costs: %+v", c)
	}
}
