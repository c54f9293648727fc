package disk

import (
	"testing"
	"time"
)

func testDevice(n int, stripe int64, caching string) *device {
	d := &device{stripe: stripe}
	for i := 0; i < n; i++ {
		m := &member{spec: Disk{Size: 8 << 30, Caching: caching}, pace: &Pace{IOPS: 100, Latency: time.Millisecond}}
		if caching != "none" {
			m.cached = make([]uint64, (8<<30)/cacheChunk/64+1)
		}
		d.members = append(d.members, m)
	}
	return d
}

func TestSplitStripes(t *testing.T) {
	d := testDevice(3, 64<<10, "none")
	// 200K from 60K: 4K of chunk 0 (disk 0), chunks 1 to 3 (disks 1, 2, and
	// 0's second chunk), then 4K of chunk 4 (disk 1's second)
	segs := d.split(60<<10, 200<<10)
	want := []struct {
		disk          int
		moff, n, span int64
	}{{0, 60 << 10, 4 << 10, 0}, {1, 0, 64 << 10, 4 << 10}, {2, 0, 64 << 10, 68 << 10}, {0, 64 << 10, 64 << 10, 132 << 10}, {1, 64 << 10, 4 << 10, 196 << 10}}
	if len(segs) != len(want) {
		t.Fatalf("%d segments, want %d: %+v", len(segs), len(want), segs)
	}
	for i, w := range want {
		s := segs[i]
		if s.m != d.members[w.disk] || s.moff != w.moff || s.n != w.n || s.devSpan != w.span {
			t.Errorf("segment %d: disk %v at %d, %d bytes, buffer %d; want disk %d at %d, %d bytes, buffer %d",
				i, s.m == d.members[w.disk], s.moff, s.n, s.devSpan, w.disk, w.moff, w.n, w.span)
		}
	}
	per := perMember(segs)
	if per[d.members[0]] != 68<<10 || per[d.members[1]] != 68<<10 || per[d.members[2]] != 64<<10 {
		t.Errorf("bytes per disk: %v", per)
	}
	if one := testDevice(1, 0, "none").split(5, 100); len(one) != 1 || one[0].moff != 5 || one[0].n != 100 {
		t.Errorf("one disk is not split: %+v", one)
	}
}

func TestReadCache(t *testing.T) {
	d := testDevice(1, 0, "read")
	m := d.members[0]
	segs := d.split(0, 16<<10)
	if done := m.read(t0, segs, 16<<10); done.Sub(t0) != time.Millisecond {
		t.Errorf("a first read took %v, want the disk's latency", done.Sub(t0))
	}
	if done := m.read(t0.Add(time.Second), segs, 16<<10); done.Sub(t0.Add(time.Second)) != cacheLatency {
		t.Errorf("a read of data the host has seen took %v, want the cache's %v", done.Sub(t0.Add(time.Second)), cacheLatency)
	}
	w := d.split(1<<20, 4096)
	m.write(t0.Add(2*time.Second), w, 4096) // a write-through cache holds what it wrote
	if done := m.read(t0.Add(3*time.Second), w, 4096); done.Sub(t0.Add(3*time.Second)) != cacheLatency {
		t.Errorf("a read of written data missed the cache: %v", done.Sub(t0.Add(3*time.Second)))
	}
	if m.stats.CacheHits != 2 || m.stats.Reads != 3 || m.stats.Writes != 1 {
		t.Errorf("counted %+v", m.stats)
	}
}

func TestWriteBack(t *testing.T) {
	d := testDevice(1, 0, "readwrite")
	m := d.members[0]
	var acked time.Time
	for i := 0; i < 50; i++ { // 0.5 s of the disk's time, acknowledged from the cache
		acked = m.write(t0, d.split(int64(i)<<24, 4096), 4096)
	}
	if acked.Sub(t0) != cacheLatency {
		t.Errorf("write-back writes acknowledged after %v, want %v", acked.Sub(t0), cacheLatency)
	}
	if done := m.flush(t0); done.Sub(t0) < 500*time.Millisecond {
		t.Errorf("a flush returned after %v, before the cached writes reached the disk (0.5 s)", done.Sub(t0))
	}
	for i := 0; i < 300; i++ { // 3 s more: at most 2 s may wait in the cache
		acked = m.write(t0, d.split(int64(i)<<24, 4096), 4096)
	}
	if lag := acked.Sub(t0); lag < 1400*time.Millisecond {
		t.Errorf("the cache took 3.5 s of writes and acknowledged at %v: it holds at most %v", lag, writebackWindow)
	}
	if d := testDevice(1, 0, "none"); d.members[0].write(t0, d.split(0, 4096), 4096).Sub(t0) != time.Millisecond {
		t.Error("an uncached write is acknowledged before the disk completes it")
	}
}

func TestBusyTime(t *testing.T) {
	d := testDevice(1, 0, "none")
	m := d.members[0]
	m.account(t0, t0.Add(10*time.Millisecond), func(*Stats) {}, nil)
	m.account(t0.Add(5*time.Millisecond), t0.Add(12*time.Millisecond), func(*Stats) {}, nil) // overlaps
	m.account(t0.Add(20*time.Millisecond), t0.Add(21*time.Millisecond), func(*Stats) {}, nil)
	if got := time.Duration(m.stats.BusyNanos); got != 13*time.Millisecond {
		t.Errorf("busy %v, want 13ms (the union of the IOs' times)", got)
	}
	if got := time.Duration(m.stats.WaitNanos); got != 18*time.Millisecond {
		t.Errorf("wait %v, want 18ms (their sum)", got)
	}
}

func TestSequentialMerge(t *testing.T) {
	d := testDevice(1, 0, "none")
	m := d.members[0]
	m.pace.Unit = 256 << 10
	var done time.Time
	for i := int64(0); i < 8; i++ { // 1 MiB in 128K IOs queued at once: one request of 4 operations
		done = m.write(t0, d.split(i*128<<10, 128<<10), 128<<10)
	}
	if got := done.Sub(t0); got != time.Millisecond {
		t.Errorf("8 queued sequential 128K writes completed after %v, want 1ms (one request: the latency)", got)
	}
	if got := m.write(t0, d.split(64<<20, 4096), 4096).Sub(t0); got != 41*time.Millisecond {
		t.Errorf("the next IO elsewhere completed after %v, want 41ms (the 1M request counted 4 operations at 100 IOPS)", got)
	}
	d = testDevice(1, 0, "none")
	m = d.members[0]
	m.pace.Unit = 256 << 10
	now := t0
	for i := int64(0); i < 8; i++ { // one at a time: nothing queued to merge with
		now = m.write(now, d.split(i*128<<10, 128<<10), 128<<10)
	}
	if got := now.Sub(t0); got != 71*time.Millisecond {
		t.Errorf("8 sequential writes one at a time took %v, want 71ms (each its own operation, 10 ms apart)", got)
	}
	if m.stats.Writes != 8 {
		t.Errorf("counted %d writes", m.stats.Writes)
	}
}

// TestMachineCaps: two volumes of one host, each a 100-IOPS disk, under a
// machine capped at 120 IOPS: together they complete no more than the
// machine's 120 a second; without the cap, 200.
func TestMachineCaps(t *testing.T) {
	for _, c := range []struct {
		name string
		cap  float64
		want float64 // IOs a second over both volumes
	}{{"machine capped at 120 IOPS", 120, 120}, {"no machine cap", 0, 200}} {
		var host *Pace
		if c.cap > 0 {
			host = &Pace{IOPS: c.cap}
		}
		vols := []*device{testDevice(1, 0, "none"), testDevice(1, 0, "none")}
		for _, v := range vols {
			v.members[0].host = host
		}
		// 400 random 4K reads arriving at once, alternating volumes
		var last time.Time
		for i := 0; i < 400; i++ {
			v := vols[i%2]
			off := int64(i) * (1 << 20)
			done := v.members[0].read(t0, v.split(off, 4096), 4096)
			last = latest(last, done)
		}
		rate := 400 / last.Sub(t0).Seconds()
		if rate < c.want*0.97 || rate > c.want*1.03 {
			t.Errorf("%s: %.0f IOs a second, want %.0f", c.name, rate, c.want)
		}
	}
}
