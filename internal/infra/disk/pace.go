// Package disk emulates a lab's cloud disks: each IO paced to its class
// (IOPS, throughput, latency), served as a file by the `hadrill disk` FUSE
// daemon, attached as a loop device, and the nodes' volumes (file systems
// on one or several striped disks) mounted and torn down.
package disk

import (
	"sync"
	"time"
)

// Pace decides when each IO of one disk may start and complete: at most
// IOPS operations and Bps bytes per second (a cloud disk's caps; an IO
// larger than Unit counts as several operations, as clouds count them), a
// bucket of Burst operations that an idle disk may spend at once, and a
// fixed Latency added to every IO. Pure apart from its clock.
type Pace struct {
	IOPS    float64
	Bps     float64
	Unit    int64 // bytes one counted operation covers (0: any size is one)
	Burst   float64
	Latency time.Duration

	mu  sync.Mutex
	tat time.Time // the theoretical arrival time of the next IO (GCRA)
}

// Reserve books an IO of n bytes arriving at now and returns when it
// completes: it starts at its place in the disk's schedule (IOs are spaced
// by the IOPS and throughput caps; an idle disk's bucket lets Burst go at
// once), then takes the latency, or its transfer time at the throughput cap
// when that is longer.
func (p *Pace) Reserve(now time.Time, n int64) time.Time {
	cost, transfer := time.Duration(0), time.Duration(0)
	ops := 1.0
	if p.Unit > 0 && n > p.Unit {
		ops = float64((n + p.Unit - 1) / p.Unit)
	}
	if p.IOPS > 0 {
		cost = time.Duration(ops / p.IOPS * float64(time.Second))
	}
	if p.Bps > 0 {
		transfer = time.Duration(float64(n) / p.Bps * float64(time.Second))
		cost = max(cost, transfer)
	}
	tolerance := time.Duration(0)
	if p.IOPS > 0 && p.Burst > 1 {
		tolerance = time.Duration((p.Burst - 1) / p.IOPS * float64(time.Second))
	}
	p.mu.Lock()
	start := now
	if earliest := p.tat.Add(-tolerance); earliest.After(start) {
		start = earliest
	}
	if p.tat.Before(now) {
		p.tat = now
	}
	p.tat = p.tat.Add(cost)
	p.mu.Unlock()
	return start.Add(max(p.Latency, transfer))
}
