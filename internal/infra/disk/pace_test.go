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

func TestPaceBurst(t *testing.T) {
	p := &Pace{IOPS: 100, Burst: 10}
	for i := 0; i < 10; i++ { // an idle disk's bucket: 10 at once
		if d := p.Reserve(t0, 4096).Sub(t0); d > time.Microsecond {
			t.Fatalf("IO %d of the burst waited %v", i, d)
		}
	}
	if d := p.Reserve(t0, 4096).Sub(t0); d < 9*time.Millisecond {
		t.Errorf("the 11th IO did not wait for the bucket: %v", d)
	}
}
