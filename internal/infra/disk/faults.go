package disk

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"syscall"
	"time"

	"bazil.org/fuse"
	"bazil.org/fuse/fs"
)

// FaultsFile is the daemon's control file of disk faults. Reading it gives
// the faults in force (JSON: Faults by device name); writing it a JSON
// object of the same shape replaces the faults of the devices it names
// (an empty Faults heals a device).
const FaultsFile = ".faults"

// The IOs a fault can make fail.
const (
	IORead  = "read"
	IOWrite = "write"
	IOFsync = "fsync"
)

// IOKinds are the IOs --eio takes.
var IOKinds = []string{IORead, IOWrite, IOFsync}

// Faults are what a device does wrong, as the disk under a cloud VM fails:
// IOs that fail (EIO), a stall, a slowdown, and a power cut that drops
// what was written since the last flush.
type Faults struct {
	// EIO: these IOs fail with EIO (Rate of them; 0 means every one).
	EIO  []string `json:"eio,omitempty"`
	Rate float64  `json:"rate,omitempty"`
	// StallUntil: every IO arriving before then waits until then.
	StallUntil time.Time `json:"stall_until,omitzero"`
	// Slow: every IO takes this many times as long on the disk (0 or 1:
	// as its class says).
	Slow float64 `json:"slow,omitempty"`
	// LoseUnsynced keeps, from now on, the earlier contents of every block
	// written since the device's last flush, so that a power cut can drop
	// those writes as a machine losing power drops what its disk had not
	// made durable.
	LoseUnsynced bool `json:"lose_unsynced,omitempty"`
	// PowerCut: the power is off. Setting it undoes every write since the
	// last flush (when LoseUnsynced was armed) and, while it holds, writes
	// are acknowledged and dropped (what the kernel still had to write
	// never arrives) and reads fail.
	PowerCut bool `json:"power_cut,omitempty"`
	// Flips are bits flipped at rest: what a disk returns damaged without
	// saying so.
	Flips []Flip `json:"flips,omitempty"`
	// Drops are writes the device will acknowledge without making them
	// whole: a lost write, a torn one.
	Drops []Drop `json:"drops,omitempty"`
}

// Flip is a bit flipped at rest: every read of the device's byte Off
// returns it with the bits of Mask inverted, until a write stores that
// byte anew (the disk rewrote the sector).
type Flip struct {
	Off  int64  `json:"off"`
	Mask byte   `json:"mask"`
	What string `json:"what,omitempty"` // the file and place, as status shows it
}

// Drop arms a write the device acknowledges and does not make whole: the
// next write that reaches the end of bytes [Off, Off+N) stores only the
// first Keep bytes of that range; the rest keep their earlier content (Keep
// 0: a lost write, the range rolled back; a sector: a torn write). Hit is
// when that write came (zero: still armed); a dropped write stays lost.
type Drop struct {
	Off  int64     `json:"off"`
	N    int64     `json:"n"`
	Keep int64     `json:"keep,omitempty"`
	What string    `json:"what,omitempty"`
	Hit  time.Time `json:"hit,omitzero"`
}

// Check says what is wrong with a device's faults, every problem at once.
func (f Faults) Check() []string {
	var out []string
	for _, k := range f.EIO {
		if !slices.Contains(IOKinds, k) {
			out = append(out, fmt.Sprintf("--eio: expected read, write or fsync, got %q", k))
		}
	}
	if f.Rate < 0 || f.Rate > 1 {
		out = append(out, fmt.Sprintf("--rate: expected a share of the IOs between 0 and 1 (e.g. 0.01 or 1%%), got %g", f.Rate))
	}
	if f.Slow != 0 && (f.Slow < 1 || f.Slow > 1000) {
		out = append(out, fmt.Sprintf("--slow: expected a factor from 1 to 1000, got %g", f.Slow))
	}
	for _, fl := range f.Flips {
		if fl.Off < 0 || fl.Mask == 0 {
			out = append(out, fmt.Sprintf("flip: expected an offset of 0 or more and a mask of at least one bit, got %d, %#x", fl.Off, fl.Mask))
		}
	}
	for _, d := range f.Drops {
		if d.Off < 0 || d.N <= 0 || d.Keep < 0 || d.Keep >= d.N {
			out = append(out, fmt.Sprintf("drop: expected a range of at least a byte and less of it kept, got %d+%d keeping %d", d.Off, d.N, d.Keep))
		}
	}
	return out
}

// IsZero says whether the device is healthy.
func (f Faults) IsZero() bool {
	return len(f.EIO) == 0 && f.StallUntil.IsZero() && f.Slow <= 1 && !f.LoseUnsynced && !f.PowerCut && len(f.Flips) == 0 && len(f.Drops) == 0
}

// unsyncedBlock is the granularity at which earlier contents are kept.
const unsyncedBlock = 4096

// maxUnsynced bounds what a device keeps aside for a power cut; past it the
// oldest unsynced writes can no longer be dropped (the daemon's log says so).
const maxUnsynced = 1 << 30

// faultState is a device's faults and, while LoseUnsynced is armed, the
// earlier contents of the blocks written since its last flush.
type faultState struct {
	// stores is held (read) by a write from its look at the power to its
	// bytes stored, and (write) by a change of faults: a power cut never
	// falls between, where the write's earlier contents would be put back
	// before the write itself lands and outlive the cut while writes it
	// followed were undone (an XFS log found behind its metadata).
	stores   sync.RWMutex
	mu       sync.Mutex
	f        Faults
	saved    map[*member]map[int64][]byte
	kept     int64
	overflow bool
}

func (s *faultState) get() Faults {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.f
}

// fails says whether an IO of kind k fails now.
func (s *faultState) fails(k string) bool {
	f := s.get()
	if f.PowerCut {
		return k != IOWrite && k != IOFsync // the kernel's last writes go nowhere, and say nothing
	}
	if !slices.Contains(f.EIO, k) {
		return false
	}
	return f.Rate <= 0 || f.Rate >= 1 || rand.Float64() < f.Rate
}

// held is when an IO arriving at arrived and done by the disk at done
// completes under the faults.
func (s *faultState) held(arrived, done time.Time) time.Time {
	f := s.get()
	if f.Slow > 1 {
		done = arrived.Add(time.Duration(float64(done.Sub(arrived)) * f.Slow))
	}
	if arrived.Before(f.StallUntil) {
		done = latest(done, f.StallUntil)
	}
	return done
}

// keep saves the earlier contents of the blocks a write is about to
// change, the first time each is written since the last flush.
func (s *faultState) keep(segs []segment) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.f.LoseUnsynced || s.f.PowerCut {
		return
	}
	for _, sg := range segs {
		for b := sg.moff / unsyncedBlock; b <= (sg.moff+sg.n-1)/unsyncedBlock; b++ {
			if s.saved[sg.m] == nil {
				s.saved[sg.m] = map[int64][]byte{}
			}
			if _, ok := s.saved[sg.m][b]; ok {
				continue
			}
			if s.kept >= maxUnsynced {
				if !s.overflow {
					fmt.Fprintf(os.Stderr, "disk %s: more than %d MiB written since the last flush: a power cut drops only the first of it\n", sg.m.spec.Name, maxUnsynced>>20)
					s.overflow = true
				}
				return
			}
			old := make([]byte, unsyncedBlock)
			n, _ := sg.m.file.ReadAt(old, b*unsyncedBlock)
			s.saved[sg.m][b] = old[:n]
			s.kept += int64(n)
		}
	}
}

// damage flips, in buf (the device's bytes from off), the bits flipped at
// rest.
func (s *faultState) damage(off int64, buf []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.f.Flips {
		if f.Off >= off && f.Off < off+int64(len(buf)) {
			buf[f.Off-off] ^= f.Mask
		}
	}
}

// strike is what a write of data at off stores: the bytes an armed drop
// takes replaced by what the device holds there now (old reads them), the
// drop then spent once the write reaches the end of its range. Every flip
// the write stores anew is gone.
func (s *faultState) strike(off int64, data []byte, old func(off int64, b []byte) error, now time.Time) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	end := off + int64(len(data))
	out := data
	var kept [][2]int64 // ranges not stored
	for i := range s.f.Drops {
		d := &s.f.Drops[i]
		if !d.Hit.IsZero() || end <= d.Off || off >= d.Off+d.N {
			continue
		}
		a, b := max(off, d.Off+d.Keep), min(end, d.Off+d.N)
		if a < b {
			if &out[0] == &data[0] {
				out = slices.Clone(data)
			}
			if err := old(a, out[a-off:b-off]); err != nil {
				return nil, err
			}
			kept = append(kept, [2]int64{a, b})
		}
		if end >= d.Off+d.N {
			d.Hit = now
		}
	}
	s.f.Flips = slices.DeleteFunc(s.f.Flips, func(f Flip) bool {
		if f.Off < off || f.Off >= end {
			return false
		}
		return !slices.ContainsFunc(kept, func(r [2]int64) bool { return f.Off >= r[0] && f.Off < r[1] })
	})
	return out, nil
}

// synced forgets what was kept: a flush made every earlier write durable.
func (s *faultState) synced() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.saved)
	s.kept, s.overflow = 0, false
}

// set replaces the faults; cutting the power drops the unsynced writes.
func (s *faultState) set(f Faults) error {
	s.stores.Lock()
	defer s.stores.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.PowerCut && !s.f.PowerCut {
		for m, blocks := range s.saved {
			for b, old := range blocks {
				if _, err := m.file.WriteAt(old, b*unsyncedBlock); err != nil {
					return fmt.Errorf("disk %s: dropping the writes since the last flush: %w", m.spec.Name, err)
				}
			}
		}
		clear(s.saved)
		s.kept = 0
	}
	if !f.LoseUnsynced {
		clear(s.saved)
		s.kept = 0
	}
	s.f = f
	return nil
}

// unsynced is how many bytes a power cut would drop now.
func (s *faultState) unsynced() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.kept
}

// FaultStatus is a device's faults as the control file reports them.
type FaultStatus struct {
	Faults
	UnsyncedBytes int64 `json:"unsynced_bytes,omitempty"`
}

// faultsFile is the control file: read fresh at every open, written whole.
type faultsFile struct{ f *filesystem }

func (faultsFile) Attr(_ context.Context, a *fuse.Attr) error {
	a.Mode, a.Size = 0o600, 1<<20
	return nil
}

func (c faultsFile) Open(_ context.Context, _ *fuse.OpenRequest, resp *fuse.OpenResponse) (fs.Handle, error) {
	resp.Flags |= fuse.OpenDirectIO
	return c, nil
}

// Setattr accepts the truncation an open for writing asks.
func (faultsFile) Setattr(context.Context, *fuse.SetattrRequest, *fuse.SetattrResponse) error {
	return nil
}

func (c faultsFile) ReadAll(context.Context) ([]byte, error) {
	out := map[string]FaultStatus{}
	for name, d := range c.f.devices {
		out[name] = FaultStatus{Faults: d.faults.get(), UnsyncedBytes: d.faults.unsynced()}
	}
	return json.Marshal(out)
}

// Write takes the whole request in one write (as os.WriteFile makes it).
func (c faultsFile) Write(_ context.Context, req *fuse.WriteRequest, resp *fuse.WriteResponse) error {
	var in map[string]Faults
	if req.Offset != 0 {
		return syscall.EINVAL
	}
	if err := json.Unmarshal(req.Data, &in); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", FaultsFile, err)
		return syscall.EINVAL
	}
	for name, f := range in {
		if _, ok := c.f.devices[name]; !ok || len(f.Check()) > 0 {
			fmt.Fprintf(os.Stderr, "%s: device %q: unknown or bad faults %v\n", FaultsFile, name, f.Check())
			return syscall.EINVAL
		}
	}
	for name, f := range in {
		if err := c.f.devices[name].faults.set(f); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", FaultsFile, err)
			return syscall.EIO
		}
	}
	resp.Size = len(req.Data)
	return nil
}
