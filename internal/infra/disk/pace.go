// Package disk emulates a lab's cloud disks: each IO paced to its class
// (IOPS, throughput, latency, burst credits, warm-up, host cache), served
// as a file per volume by the `hadrill disk` FUSE daemon (striping several
// disks into one when the volume has them), attached as a loop device;
// and the nodes' volumes mounted, measured and torn down.
package disk

import (
	"sync"
	"time"
)

// Pace decides when each IO of one disk may start and complete. Pure apart
// from its clock.
//
//   - Caps: at most IOPS operations and Bps bytes per second, as a cloud
//     disk's provisioned figures (an IO larger than Unit counts as several
//     operations, as clouds count them). IOs are spaced by the generic cell
//     rate algorithm: each books its cost at the caps on the disk's
//     schedule.
//   - Burst credits: with BurstIOPS (or BurstBps) above the caps, the disk
//     runs at the burst caps while it has credits. A full bucket lasts
//     BurstFor at the burst rate; running below the caps refills it by
//     the unused share, as clouds' credit-based bursting does. A new disk's
//     bucket is full.
//   - Warm-up: a disk idle for WarmIdle or longer then runs at WarmSpeed
//     (a fraction) of its caps for WarmFor (document 000's observation of
//     a cloud disk "warming up").
//   - Window: the caps hold over any Window of time, not IO by IO: a disk
//     idle a moment may take the IOs it missed at once (as a cloud disk's
//     throttle counts over a window). Without it, IOs spread at random
//     over striped disks would leave each idle whenever its own queue
//     empties, which a cloud disk's window absorbs.
//   - Latency: every IO completes Latency after it starts, or after its
//     transfer time at the throughput cap when that is longer.
type Pace struct {
	IOPS    float64
	Bps     float64
	Unit    int64 // bytes one counted operation covers (0: any size is one)
	Latency time.Duration
	Window  time.Duration

	BurstIOPS float64
	BurstBps  float64
	BurstFor  time.Duration

	WarmIdle  time.Duration
	WarmFor   time.Duration
	WarmSpeed float64

	mu        sync.Mutex
	tat       time.Time // theoretical arrival time of the next IO at the caps (GCRA)
	peak      time.Time // the same at the burst caps
	last      time.Time // the last IO's arrival
	warmUntil time.Time
	drained   time.Time // when every booked IO has completed
}

// cost is how long an IO of n bytes counted as ops operations occupies a
// disk with these caps.
func cost(n int64, ops, iops, bps float64) (total, transfer time.Duration) {
	if iops > 0 {
		total = time.Duration(ops / iops * float64(time.Second))
	}
	if bps > 0 {
		transfer = time.Duration(float64(n) / bps * float64(time.Second))
		total = max(total, transfer)
	}
	return total, transfer
}

// bursts is whether the disk has burst caps above its caps, and the ratio.
func (p *Pace) bursts() (float64, bool) {
	if p.BurstFor <= 0 {
		return 0, false
	}
	switch {
	case p.BurstIOPS > p.IOPS && p.IOPS > 0:
		return p.BurstIOPS / p.IOPS, true
	case p.BurstBps > p.Bps && p.Bps > 0:
		return p.BurstBps / p.Bps, true
	}
	return 0, false
}

// Reserve books an IO of n bytes arriving at now and returns when it
// completes.
func (p *Pace) Reserve(now time.Time, n int64) time.Time {
	return p.ReserveOps(now, n, p.Ops(n))
}

// Ops is how many operations an IO of n bytes counts as.
func (p *Pace) Ops(n int64) float64 {
	if p.Unit > 0 && n > p.Unit {
		return float64((n + p.Unit - 1) / p.Unit)
	}
	return 1
}

// ReserveOps books an IO of n bytes counted as ops operations (fewer than
// Ops(n), even none, when it continues a sequential IO still queued: the
// block layer merges them into one request).
func (p *Pace) ReserveOps(now time.Time, n int64, ops float64) time.Time {
	_, done := p.reserve(now, n, ops)
	return done
}

// reserve books an IO and returns when it starts and completes.
func (p *Pace) reserve(now time.Time, n int64, ops float64) (time.Time, time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	slow := 1.0
	if p.WarmIdle > 0 && p.WarmSpeed > 0 && p.WarmSpeed < 1 {
		if !p.last.IsZero() && now.Sub(p.last) >= p.WarmIdle {
			p.warmUntil = now.Add(p.WarmFor)
		}
		if now.Before(p.warmUntil) {
			slow = 1 / p.WarmSpeed
		}
	}
	if now.After(p.last) {
		p.last = now
	}
	base, transfer := cost(n, ops, p.IOPS, p.Bps)
	base, transfer = time.Duration(float64(base)*slow), time.Duration(float64(transfer)*slow)
	start := now
	ratio, bursting := p.bursts()
	if !bursting {
		start = latest(start, p.tat.Add(-p.Window))
		p.tat = latest(p.tat, start).Add(base)
	} else {
		peakCost, peakTransfer := cost(n, ops, max(p.BurstIOPS, p.IOPS), max(p.BurstBps, p.Bps))
		peakCost, peakTransfer = time.Duration(float64(peakCost)*slow), time.Duration(float64(peakTransfer)*slow)
		credit := time.Duration(float64(p.BurstFor) * (ratio - 1)) // the baseline schedule may run this far ahead
		start = latest(start, p.tat.Add(-credit-p.Window), p.peak.Add(-p.Window))
		p.tat = latest(p.tat, start).Add(base)
		p.peak = latest(p.peak, start).Add(peakCost)
		transfer = peakTransfer
	}
	done := start.Add(max(p.Latency, transfer))
	p.drained = latest(p.drained, done)
	return start, done
}

// Cost is how long an IO of n bytes occupies the disk at its caps: its
// operations at the IOPS cap or its bytes at the throughput cap, the longer.
func (p *Pace) Cost(n int64) time.Duration {
	c, _ := cost(n, p.Ops(n), p.IOPS, p.Bps)
	return c
}

// TransferTime is n bytes' time at the throughput cap (0 without one).
func (p *Pace) TransferTime(n int64) time.Duration {
	_, t := cost(n, 0, 0, p.Bps)
	return t
}

// Extend books d more of the disk's time for bytes merged into an IO
// already booked (the grown request's Cost less what it had booked).
func (p *Pace) Extend(d time.Duration) {
	if d <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tat = p.tat.Add(d)
	p.drained = p.drained.Add(d)
}

// Drained is when every IO booked so far has completed (what a cache
// flush of a write-back cache waits for).
func (p *Pace) Drained() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.drained
}

func latest(t time.Time, more ...time.Time) time.Time {
	for _, m := range more {
		if m.After(t) {
			t = m
		}
	}
	return t
}
