package disk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"bazil.org/fuse"
	"bazil.org/fuse/fs"
	"golang.org/x/sys/unix"
)

// Device is a file the daemon serves: one volume's block device, the
// volume's disks striped in chunks of Stripe bytes when it has several
// (RAID 0: chunk k lives on disk k mod N, as md does it).
type Device struct {
	Name   string `json:"name"`
	Stripe int64  `json:"stripe,omitempty"`
	Disks  []Disk `json:"disks"`
	// Machine caps every disk of the host the volume is on, together.
	Machine *MachineCaps `json:"machine,omitempty"`
}

// MachineCaps are a host's caps over all its disks (a cloud VM's uncached
// disk limit): every IO a disk of the host takes (its own request, counted
// in operations as the disk counts them) also books the host's time, so the
// disks together never do more than these, however many there are.
type MachineCaps struct {
	Host string  `json:"host"`
	IOPS float64 `json:"iops,omitempty"`
	Bps  float64 `json:"bps,omitempty"`
}

// Disk is one emulated cloud disk: its backing file (sparse, Size bytes),
// its pace and its host caching policy.
type Disk struct {
	Name      string        `json:"name"`
	Image     string        `json:"image"`
	Size      int64         `json:"size"`
	IOPS      float64       `json:"iops"`
	Bps       float64       `json:"bps"`
	Unit      int64         `json:"unit"`
	Latency   time.Duration `json:"latency"`
	BurstIOPS float64       `json:"burst_iops,omitempty"`
	BurstBps  float64       `json:"burst_bps,omitempty"`
	BurstFor  time.Duration `json:"burst_for,omitempty"`
	WarmIdle  time.Duration `json:"warm_idle,omitempty"`
	WarmFor   time.Duration `json:"warm_for,omitempty"`
	WarmSpeed float64       `json:"warm_speed,omitempty"`
	Caching   string        `json:"caching,omitempty"` // none | read | readwrite
	Window    time.Duration `json:"window,omitempty"`  // the caps hold over this window (Pace.Window)
}

// Host caching, as clouds offer it on a disk: reads of data the host has
// seen (read or written) come from its cache; with readwrite, writes are
// acknowledged from it too and reach the disk behind (a flush waits until
// they have, at most writebackWindow of the disk's time behind).
const (
	cacheChunk      = 64 << 10
	cacheLatency    = 100 * time.Microsecond // held; the kernel's path adds about as much again
	writebackWindow = 2 * time.Second
)

// StatsFile is the daemon's file of counters (JSON: Stats by disk name).
const StatsFile = ".stats"

// Stats are what a disk did since the daemon started.
type Stats struct {
	Reads      int64 `json:"reads"`
	Writes     int64 `json:"writes"`
	Flushes    int64 `json:"flushes"`
	ReadBytes  int64 `json:"read_bytes"`
	WriteBytes int64 `json:"write_bytes"`
	CacheHits  int64 `json:"cache_hits"`
	WaitNanos  int64 `json:"wait_ns"` // summed over IOs: arrival to completion
	BusyNanos  int64 `json:"busy_ns"` // time with at least one IO in flight
}

type member struct {
	spec Disk
	pace *Pace
	host *Pace // the host machine's caps over all its disks (nil: none)
	file *os.File

	mu        sync.Mutex
	cached    []uint64 // a bit per cacheChunk the host cache holds
	stats     Stats
	busyUntil time.Time
	runs      []sequential
}

// sequential is a run of adjacent IOs a disk has queued: an IO that
// touches the span a run covers (ends where it starts, starts where it
// ends, or overlaps it), while its IOs are still queued or in flight, is
// merged with them (as the block layer merges adjacent requests; several
// streams may be interleaved): the run is one request, costing
// the disk its whole span's operations or transfer time (the longer), and
// completing when the span has been transferred.
type sequential struct {
	start, end int64     // the span on the disk
	began      time.Time // when the request started on the disk
	done       time.Time // when it completes
}

const (
	maxRuns = 16
)

// run finds the queued run an IO of n bytes at off arriving at now joins
// (nil: none). Call with m.mu held.
func (m *member) run(now time.Time, off, n int64) *sequential {
	for i := range m.runs {
		r := &m.runs[i]
		if now.Before(r.done) && off+n >= r.start && off <= r.end {
			return r
		}
	}
	return nil
}

// newRun records a request the disk starts, replacing the oldest run when
// it tracks maxRuns. Call with m.mu held.
func (m *member) newRun(r sequential) {
	if len(m.runs) < maxRuns {
		m.runs = append(m.runs, r)
		return
	}
	oldest := 0
	for i := range m.runs {
		if m.runs[i].done.Before(m.runs[oldest].done) {
			oldest = i
		}
	}
	m.runs[oldest] = r
}

// reserve books an IO of the disk (its bytes n starting at off).
func (m *member) reserve(now time.Time, off, n int64) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r := m.run(now, off, n); r != nil {
		before := m.pace.Cost(r.end - r.start)
		hostBefore := m.hostCost(r.end - r.start)
		r.start, r.end = min(r.start, off), max(r.end, off+n)
		after := m.pace.Cost(r.end - r.start)
		m.pace.Extend(after - before)
		if m.host != nil {
			m.host.Extend(m.hostCost(r.end-r.start) - hostBefore)
		}
		r.done = latest(r.done, r.began.Add(max(m.pace.Latency, m.pace.TransferTime(r.end-r.start))))
		return r.done
	}
	began, done := m.pace.reserve(now, n, m.pace.Ops(n))
	if m.host != nil { // the machine's caps over all its disks
		done = latest(done, m.host.ReserveOps(now, n, m.pace.Ops(n)))
	}
	m.newRun(sequential{start: off, end: off + n, began: began, done: done})
	return done
}

// hostCost is a request's time at the host's caps (0 without them).
func (m *member) hostCost(n int64) time.Duration {
	if m.host == nil {
		return 0
	}
	c, _ := cost(n, m.pace.Ops(n), m.host.IOPS, m.host.Bps)
	return c
}

// first is where an IO's bytes on m start.
func first(segs []segment, m *member) int64 {
	for _, s := range segs {
		if s.m == m {
			return s.moff
		}
	}
	return 0
}

type device struct {
	name    string
	stripe  int64
	members []*member
	size    int64
	faults  faultState
}

type filesystem struct{ devices map[string]*device }

func (f *filesystem) Root() (fs.Node, error) { return root{f}, nil }

type root struct{ f *filesystem }

func (root) Attr(_ context.Context, a *fuse.Attr) error {
	a.Inode, a.Mode = 1, os.ModeDir|0o755
	return nil
}

func (r root) Lookup(_ context.Context, name string) (fs.Node, error) {
	switch name {
	case StatsFile:
		return statsFile(r), nil
	case FaultsFile:
		return faultsFile(r), nil
	}
	if d, ok := r.f.devices[name]; ok {
		return d, nil
	}
	return nil, syscall.ENOENT
}

func (r root) ReadDirAll(context.Context) ([]fuse.Dirent, error) {
	out := []fuse.Dirent{{Name: StatsFile, Type: fuse.DT_File}, {Name: FaultsFile, Type: fuse.DT_File}}
	for name := range r.f.devices {
		out = append(out, fuse.Dirent{Name: name, Type: fuse.DT_File})
	}
	return out, nil
}

// statsFile is read fresh at every open.
type statsFile struct{ f *filesystem }

func (statsFile) Attr(_ context.Context, a *fuse.Attr) error {
	a.Mode, a.Size = 0o400, 1<<20
	return nil
}

func (s statsFile) Open(_ context.Context, _ *fuse.OpenRequest, resp *fuse.OpenResponse) (fs.Handle, error) {
	resp.Flags |= fuse.OpenDirectIO
	return s, nil
}

func (s statsFile) ReadAll(context.Context) ([]byte, error) {
	out := map[string]Stats{}
	now := time.Now()
	for _, d := range s.f.devices {
		for _, m := range d.members {
			m.mu.Lock()
			st := m.stats
			if ahead := m.busyUntil.Sub(now); ahead > 0 { // busy booked beyond now
				st.BusyNanos -= int64(ahead)
			}
			m.mu.Unlock()
			out[m.spec.Name] = st
		}
	}
	return json.Marshal(out)
}

func (d *device) Attr(_ context.Context, a *fuse.Attr) error {
	a.Mode, a.Size, a.BlockSize = 0o600, uint64(d.size), 4096
	return nil
}

// Open serves the device with direct IO: no page cache between the loop
// device and the emulated disks, so every IO is paced.
func (d *device) Open(_ context.Context, _ *fuse.OpenRequest, resp *fuse.OpenResponse) (fs.Handle, error) {
	resp.Flags |= fuse.OpenDirectIO
	return d, nil
}

// segment is the part of an IO on one disk: bytes [off, off+n) of the
// device are bytes [moff, moff+n) of member m.
type segment struct {
	m       *member
	off, n  int64
	moff    int64
	devSpan int64 // offset of the segment in the IO's buffer
}

// split maps an IO of the device onto its disks' chunks.
func (d *device) split(off, n int64) []segment {
	if len(d.members) == 1 {
		return []segment{{m: d.members[0], off: off, n: n, moff: off}}
	}
	var out []segment
	k := int64(len(d.members))
	for pos := off; pos < off+n; {
		chunk := pos / d.stripe
		within := pos % d.stripe
		size := min(d.stripe-within, off+n-pos)
		out = append(out, segment{m: d.members[chunk%k], off: pos, n: size, moff: (chunk/k)*d.stripe + within, devSpan: pos - off})
		pos += size
	}
	return out
}

// perMember sums an IO's bytes on each disk (the chunks of one IO on one
// disk are contiguous there: the disk sees one request, as md merges them).
func perMember(segs []segment) map[*member]int64 {
	out := map[*member]int64{}
	for _, s := range segs {
		out[s.m] += s.n
	}
	return out
}

func (d *device) Read(ctx context.Context, req *fuse.ReadRequest, resp *fuse.ReadResponse) error {
	arrived := time.Now()
	if d.faults.fails(IORead) {
		return syscall.EIO
	}
	size := min(int64(req.Size), max(d.size-req.Offset, 0))
	buf := make([]byte, size)
	if err := d.readAt(req.Offset, buf); err != nil {
		return err
	}
	segs := d.split(req.Offset, size)
	done := arrived
	for m, n := range perMember(segs) {
		done = latest(done, m.read(arrived, segs, n))
	}
	d.faults.damage(req.Offset, buf)
	resp.Data = buf
	return d.hold(ctx, arrived, done)
}

// readAt reads the device's bytes at off into b, as its disks hold them.
func (d *device) readAt(off int64, b []byte) error {
	for _, s := range d.split(off, int64(len(b))) {
		if _, err := s.m.file.ReadAt(b[s.devSpan:s.devSpan+s.n], s.moff); err != nil && !isEOF(err) {
			return err
		}
	}
	return nil
}

func (d *device) Write(ctx context.Context, req *fuse.WriteRequest, resp *fuse.WriteResponse) error {
	arrived := time.Now()
	n := int64(len(req.Data))
	if req.Offset+n > d.size {
		return syscall.ENOSPC
	}
	segs, err := d.store(req.Offset, req.Data, arrived)
	if err != nil || segs == nil {
		if err == nil { // the power is off: acknowledged, and gone
			resp.Size = int(n)
		}
		return err
	}
	done := arrived
	for m, bytes := range perMember(segs) {
		done = latest(done, m.write(arrived, segs, bytes))
	}
	resp.Size = int(n)
	return d.hold(ctx, arrived, done)
}

// store stores a write as the faults have it (nil segments, no error: the
// power is off, and it is gone), holding off a change of faults meanwhile.
func (d *device) store(off int64, data []byte, arrived time.Time) ([]segment, error) {
	d.faults.stores.RLock()
	defer d.faults.stores.RUnlock()
	if d.faults.get().PowerCut {
		return nil, nil
	}
	if d.faults.fails(IOWrite) {
		return nil, syscall.EIO
	}
	n := int64(len(data))
	segs := d.split(off, n)
	d.faults.keep(segs)
	if n > 0 {
		var err error
		if data, err = d.faults.strike(off, data, d.readAt, arrived); err != nil {
			return nil, err
		}
	}
	for _, s := range segs {
		if _, err := s.m.file.WriteAt(data[s.devSpan:s.devSpan+s.n], s.moff); err != nil {
			return nil, err
		}
	}
	return segs, nil
}

// Fsync is a cache flush: one operation on every disk (as a cloud disk
// counts it), which on a write-back cached disk also waits for the writes
// the cache holds.
func (d *device) Fsync(ctx context.Context, _ *fuse.FsyncRequest) error {
	arrived := time.Now()
	if d.faults.get().PowerCut {
		return nil
	}
	if d.faults.fails(IOFsync) {
		return syscall.EIO
	}
	d.faults.synced()
	done := arrived
	for _, m := range d.members {
		done = latest(done, m.flush(arrived))
	}
	return d.hold(ctx, arrived, done)
}

func (d *device) Flush(context.Context, *fuse.FlushRequest) error { return nil }

func (m *member) read(arrived time.Time, segs []segment, n int64) time.Time {
	hit := m.spec.Caching == "read" || m.spec.Caching == "readwrite"
	if hit {
		m.mu.Lock()
		for _, s := range segs {
			hit = hit && (s.m != m || m.holds(s.moff, s.n))
		}
		m.mu.Unlock()
	}
	var done time.Time
	if hit {
		done = arrived.Add(cacheLatency)
	} else {
		done = m.reserve(arrived, first(segs, m), n)
	}
	m.account(arrived, done, func(st *Stats) {
		st.Reads++
		st.ReadBytes += n
		if hit {
			st.CacheHits++
		}
	}, segs)
	return done
}

func (m *member) write(arrived time.Time, segs []segment, n int64) time.Time {
	done := m.reserve(arrived, first(segs, m), n)
	acked := done
	if m.spec.Caching == "readwrite" { // acknowledged from the host's cache
		acked = latest(arrived.Add(cacheLatency), done.Add(-writebackWindow))
	}
	m.account(arrived, done, func(st *Stats) { st.Writes++; st.WriteBytes += n }, segs)
	return acked
}

func (m *member) flush(arrived time.Time) time.Time {
	done := m.pace.Reserve(arrived, 0)
	if m.host != nil {
		done = latest(done, m.host.Reserve(arrived, 0))
	}
	if m.spec.Caching == "readwrite" {
		done = latest(done, m.pace.Drained())
	}
	m.account(arrived, done, func(st *Stats) { st.Flushes++ }, nil)
	return done
}

// account counts an IO of the disk (arriving, completing at done) and,
// for a cached disk, marks its chunks held.
func (m *member) account(arrived, done time.Time, count func(*Stats), segs []segment) {
	m.mu.Lock()
	defer m.mu.Unlock()
	count(&m.stats)
	m.stats.WaitNanos += int64(done.Sub(arrived))
	switch {
	case !arrived.Before(m.busyUntil):
		m.stats.BusyNanos += int64(done.Sub(arrived))
		m.busyUntil = done
	case done.After(m.busyUntil):
		m.stats.BusyNanos += int64(done.Sub(m.busyUntil))
		m.busyUntil = done
	}
	if m.cached != nil {
		for _, s := range segs {
			if s.m == m {
				m.hold(s.moff, s.n)
			}
		}
	}
}

func (m *member) holds(off, n int64) bool {
	for c := off / cacheChunk; c <= (off+n-1)/cacheChunk; c++ {
		if m.cached[c/64]&(1<<(c%64)) == 0 {
			return false
		}
	}
	return true
}

func (m *member) hold(off, n int64) {
	for c := off / cacheChunk; c <= (off+n-1)/cacheChunk; c++ {
		m.cached[c/64] |= 1 << (c % 64)
	}
}

// hold holds an IO that arrived at arrived, and that its disk completes
// at done, as long as the device's faults say: a stall or a slowdown lifted
// meanwhile (by a heal) lets it go then, not when it would have ended.
func (d *device) hold(ctx context.Context, arrived, done time.Time) error {
	for {
		until := d.faults.held(arrived, done)
		if !until.After(done) {
			return sleepUntil(ctx, done)
		}
		if time.Until(until) <= 0 {
			return nil
		}
		if err := sleepUntil(ctx, earliest(until, time.Now().Add(100*time.Millisecond))); err != nil {
			return err
		}
	}
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// sleepUntil holds an IO until the disk completes it. A nanosleep on the
// goroutine's own thread, not a Go timer: an idle Go program wakes its
// timers to the millisecond, which would add up to 1 ms to every IO.
func sleepUntil(ctx context.Context, done time.Time) error {
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0) // this thread's sleeps end on time, not up to 50 µs late
	for {
		left := time.Until(done)
		if left <= 0 {
			return nil
		}
		if ctx.Err() != nil {
			return syscall.EINTR
		}
		ts := unix.NsecToTimespec(int64(min(left, 100*time.Millisecond)))
		_ = unix.Nanosleep(&ts, nil)
	}
}

func isEOF(err error) bool { return errors.Is(err, io.EOF) }

// Serve mounts the devices at dir and serves them until ctx ends (then it
// unmounts). The disks' backing images are created sparse when missing.
func Serve(ctx context.Context, dir string, devices []Device, ready func()) error {
	f := &filesystem{devices: map[string]*device{}}
	hosts := map[string]*Pace{} // a pace per host with machine caps, shared by its disks
	for _, dv := range devices {
		d := &device{name: dv.Name, stripe: max(dv.Stripe, 4096), faults: faultState{saved: map[*member]map[int64][]byte{}}}
		var host *Pace
		if mc := dv.Machine; mc != nil {
			if hosts[mc.Host] == nil {
				hosts[mc.Host] = &Pace{IOPS: mc.IOPS, Bps: mc.Bps, Window: Window}
			}
			host = hosts[mc.Host]
		}
		for _, s := range dv.Disks {
			file, err := os.OpenFile(s.Image, os.O_RDWR|os.O_CREATE, 0o600)
			if err != nil {
				return fmt.Errorf("disk %s: %w", s.Name, err)
			}
			defer file.Close()
			if st, _ := file.Stat(); st.Size() < s.Size {
				if err := file.Truncate(s.Size); err != nil {
					return fmt.Errorf("disk %s: %w", s.Name, err)
				}
			}
			m := &member{spec: s, file: file, host: host, pace: &Pace{IOPS: s.IOPS, Bps: s.Bps, Unit: s.Unit, Latency: s.Latency, Window: s.Window,
				BurstIOPS: s.BurstIOPS, BurstBps: s.BurstBps, BurstFor: s.BurstFor, WarmIdle: s.WarmIdle, WarmFor: s.WarmFor, WarmSpeed: s.WarmSpeed}}
			if s.Caching == "read" || s.Caching == "readwrite" {
				m.cached = make([]uint64, s.Size/cacheChunk/64+1)
			}
			d.members = append(d.members, m)
		}
		if len(d.members) == 0 {
			return fmt.Errorf("device %s: no disks", dv.Name)
		}
		per := d.members[0].spec.Size
		if len(d.members) > 1 {
			per -= per % d.stripe
		}
		d.size = per * int64(len(d.members))
		f.devices[dv.Name] = d
	}
	c, err := fuse.Mount(dir, fuse.FSName("hadrill-disk"), fuse.Subtype("hadrill"), fuse.MaxBackground(128), fuse.CongestionThreshold(96))
	if err != nil {
		return fmt.Errorf("mount %s: %w", dir, err)
	}
	defer c.Close()
	go func() {
		<-ctx.Done()
		_ = fuse.Unmount(dir)
	}()
	if ready != nil {
		ready()
	}
	return fs.Serve(c, f)
}
