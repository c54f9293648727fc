package workload

import (
	"fmt"
	"math"
	"testing"

	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
	"github.com/hadrill/hadrill/internal/workload/fio"
)

func TestDiskTargets(t *testing.T) {
	std, _ := (&spec.Spec{}).DiskNamed("standard") // 500 IOPS, 60M, 2 ms
	two := &plan.Volume{Class: std, Disks: []string{"a", "b"}}
	slow := &plan.Volume{Class: spec.DiskClass{IOPS: 100, Throughput: "60M", Latency: "5ms"}, Disks: []string{"a"}}
	d1 := &plan.Machine{DiskIOPS: 3200, DiskBps: 32 << 20} // a DS1's caps over all its disks
	sixteen := &plan.Volume{Class: std, Disks: make([]string, 16)}
	for _, c := range []struct {
		v                    *plan.Volume
		m                    *plan.Machine
		test                 string
		iops, mbps, ms, secs float64
	}{
		{two, nil, "randwrite", 1000, 0, 0, 0},
		{two, nil, "latency", 0, 0, 2, 0},
		{two, nil, "seqwrite", 0, 125.83, 0, 0},
		{two, nil, "fsync", 0, 0, 0, 0},
		{two, nil, "file1g", 0, 0, 0, 8.53},
		{slow, nil, "seqread", 0, 26.21, 0, 0},    // 100 operations of 256K a second bind before 60M
		{two, d1, "randwrite", 1000, 0, 0, 0},     // under the machine's caps
		{sixteen, d1, "randwrite", 2048, 0, 0, 0}, // 16K IOs: the machine's 32M binds before its 3,200 IOPS
		{sixteen, d1, "seqwrite", 0, 33.55, 0, 0},
		{sixteen, d1, "file1g", 0, 0, 0, 32},
	} {
		test, _ := fio.Named(c.test)
		iops, mbps, ms, secs := DiskTargets(c.v, c.m, test)
		near := func(a, b float64) bool { return math.Abs(a-b) < 0.01 }
		if !near(iops, c.iops) || !near(mbps, c.mbps) || !near(ms, c.ms) || !near(secs, c.secs) {
			t.Errorf("%s on %d×%d IOPS: %.2f IOPS %.2f MB/s %.2f ms %.2f s; want %.2f %.2f %.2f %.2f", c.test, len(c.v.Disks), c.v.Class.IOPS, iops, mbps, ms, secs, c.iops, c.mbps, c.ms, c.secs)
		}
	}
}

// TestDiskPromise: a figure against its class's promise, each way: fewer
// IOPS or MB/s fall short, so does a slower IO or file; beating it by more
// than the tolerance is beyond; no promise is neither.
func TestDiskPromise(t *testing.T) {
	for _, c := range []struct {
		r             DiskResult
		text          string
		short, beyond bool
	}{
		{DiskResult{Result: fio.Result{IOPS: 2600}, TargetIOPS: 3000}, "2600 IOPS against 3000 IOPS (0.87×)", true, false},
		{DiskResult{Result: fio.Result{IOPS: 2800}, TargetIOPS: 3000}, "2800 IOPS against 3000 IOPS (0.93×)", false, false},
		{DiskResult{Result: fio.Result{IOPS: 9000}, TargetIOPS: 3000}, "9000 IOPS against 3000 IOPS (3.00×)", false, true},
		{DiskResult{Result: fio.Result{MBps: 120}, TargetMBps: 250}, "120.0 MB/s against 250 MB/s (0.48×)", true, false},
		{DiskResult{Result: fio.Result{P50Ms: 2.5}, TargetMs: 2}, "2.50 ms against 2.00 ms (1.25×)", true, false},
		{DiskResult{Result: fio.Result{P50Ms: 0.2}, TargetMs: 2}, "0.20 ms against 2.00 ms (0.10×)", false, true},
		{DiskResult{Result: fio.Result{Seconds: 4.4}, TargetSecs: 4}, "4.4 s against 4.0 s (1.10×)", false, false},
		{DiskResult{Result: fio.Result{Seconds: 5}, TargetSecs: 4}, "5.0 s against 4.0 s (1.25×)", true, false},
		{DiskResult{Result: fio.Result{IOPS: 800}}, " against  (0.00×)", false, false},
	} {
		p := c.r.Promise()
		if got := fmt.Sprintf("%s against %s (%.2f×)", p.Measured, p.Promised, p.Ratio); got != c.text {
			t.Errorf("got %q, want %q", got, c.text)
		}
		if p.Short(0.1) != c.short || p.Beyond(0.1) != c.beyond {
			t.Errorf("%s: short %v beyond %v, want %v %v", c.text, p.Short(0.1), p.Beyond(0.1), c.short, c.beyond)
		}
	}
}
