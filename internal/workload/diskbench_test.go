package workload

import (
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
