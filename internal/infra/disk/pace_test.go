package disk

import (
	"testing"
	"time"
)

var t0 = time.Unix(1000, 0)

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func TestPaceQueueDepthOne(t *testing.T) {
	p := &Pace{IOPS: 500, Bps: 60 << 20, Latency: 2 * time.Millisecond}
	now := t0
	for i := 0; i < 5; i++ {
		done := p.Reserve(now, 16<<10)
		if got := ms(done.Sub(now)); got < 1.99 || got > 2.01 {
			t.Fatalf("IO %d alone on the disk took %.3f ms, want its latency (2 ms)", i, got)
		}
		now = done
	}
}

func TestPaceCapsIOPS(t *testing.T) {
	p := &Pace{IOPS: 500, Latency: 2 * time.Millisecond}
	var last time.Time
	for i := 0; i < 1000; i++ { // 1000 IOs all queued at once (a deep queue)
		last = p.Reserve(t0, 4096)
	}
	if got := last.Sub(t0).Seconds(); got < 1.99 || got > 2.01 {
		t.Errorf("1000 IOs at 500 IOPS took %.3f s, want 2", got)
	}
}

func TestPaceThroughputAndUnit(t *testing.T) {
	p := &Pace{IOPS: 500, Bps: 1 << 20, Unit: 256 << 10}
	var last time.Time
	for i := 0; i < 4; i++ { // 4 MiB in 1 MiB IOs at 1 MiB/s: 4 s, whatever the IOPS
		last = p.Reserve(t0, 1<<20)
	}
	if got := last.Sub(t0).Seconds(); got < 3.99 || got > 4.01 {
		t.Errorf("4 MiB at 1 MiB/s took %.3f s, want 4", got)
	}
	q := &Pace{IOPS: 10, Unit: 256 << 10}
	q.Reserve(t0, 1<<20) // counts as 4 operations
	if next := q.Reserve(t0, 4096); next.Sub(t0) < 390*time.Millisecond {
		t.Errorf("a 1 MiB IO counted as one operation: the next started after %v", next.Sub(t0))
	}
}

// drive queues IOs of n bytes back to back for d (a deep queue) and
// returns how many completed by then.
func drive(p *Pace, from time.Time, d time.Duration, n int64) int {
	count := 0
	for {
		if done := p.Reserve(from, n); done.After(from.Add(d)) {
			return count
		}
		count++
	}
}

func TestPaceBurstCredits(t *testing.T) {
	// a 100-IOPS disk bursting to 400 for 10 s from a full bucket
	p := &Pace{IOPS: 100, BurstIOPS: 400, BurstFor: 10 * time.Second}
	// IOs queued at once: the burst rate for 10 s, then the caps
	var done time.Time
	for i := 0; i < 4000; i++ {
		done = p.Reserve(t0, 4096)
	}
	if got := done.Sub(t0).Seconds(); got < 9.9 || got > 10.1 {
		t.Errorf("4000 IOs at 400 IOPS took %.2f s, want 10 (the bucket lasts 10 s at the burst rate)", got)
	}
	for i := 0; i < 1000; i++ {
		done = p.Reserve(t0, 4096)
	}
	if got := done.Sub(t0).Seconds(); got < 19.9 || got > 20.1 {
		t.Errorf("1000 more IOs on an empty bucket ended at %.2f s, want 20 (back at 100 IOPS)", got)
	}
	// idle at 0 IOPS for 60 s refills 60 s of unused caps: 60*100 = 6000
	// operations of credit, 2 s at 400 IOPS beyond the caps' own 100 ... the
	// bucket holds at most 10 s at the burst rate
	later := done.Add(60 * time.Second)
	if got := drive(p, later, 2*time.Second, 4096); got < 790 || got > 810 {
		t.Errorf("after a refill, 2 s of a deep queue did %d IOs, want 800 (the burst rate)", got)
	}
}

func TestPaceBurstRefillsByUnusedShare(t *testing.T) {
	p := &Pace{IOPS: 100, BurstIOPS: 200, BurstFor: 10 * time.Second}
	now := t0
	for i := 0; i < 2000; i++ { // empty the bucket: 10 s at 200 IOPS
		now = p.Reserve(t0, 4096)
	}
	// 20 s at 50 IOPS (half the caps) earns 20*50 = 1000 operations of
	// credit: 10 s of the 100-IOPS extra at 200 is 1000 ops: full again
	for i := 0; i < 1000; i++ {
		p.Reserve(now, 4096)
		now = now.Add(20 * time.Millisecond)
	}
	if got := drive(p, now, 5*time.Second, 4096); got < 990 || got > 1010 {
		t.Errorf("5 s after refilling at half the caps did %d IOs, want 1000 (the burst rate)", got)
	}
}

func TestPaceWarmUp(t *testing.T) {
	p := &Pace{IOPS: 100, WarmIdle: time.Minute, WarmFor: 10 * time.Second, WarmSpeed: 0.5}
	p.Reserve(t0, 4096)
	if got := drive(p, t0.Add(time.Second), time.Second, 4096); got < 98 || got > 101 {
		t.Errorf("a disk in use did %d IOs a second, want 100", got)
	}
	idle := t0.Add(2 * time.Minute)
	if got := drive(p, idle, time.Second, 4096); got < 48 || got > 51 {
		t.Errorf("after 2 min idle the disk did %d IOs in its first second, want 50 (warming up)", got)
	}
	if got := drive(p, idle.Add(15*time.Second), time.Second, 4096); got < 98 || got > 101 {
		t.Errorf("after the warm-up the disk did %d IOs a second, want 100", got)
	}
}

func TestPaceDrained(t *testing.T) {
	p := &Pace{IOPS: 100, Latency: time.Millisecond}
	for i := 0; i < 10; i++ {
		p.Reserve(t0, 4096)
	}
	if got := p.Drained().Sub(t0); got != 91*time.Millisecond {
		t.Errorf("10 IOs at 100 IOPS drain at %v, want 91ms (the last starts at 90 ms, takes 1 ms)", got)
	}
}
