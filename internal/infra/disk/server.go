package disk

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"bazil.org/fuse"
	"bazil.org/fuse/fs"
	"golang.org/x/sys/unix"
)

// Spec is one emulated disk the daemon serves: a file named Name in its
// mount, backed by Image (a sparse file of Size bytes), paced by Pace.
type Spec struct {
	Name    string        `json:"name"`
	Image   string        `json:"image"`
	Size    int64         `json:"size"`
	IOPS    float64       `json:"iops"`
	Bps     float64       `json:"bps"`
	Unit    int64         `json:"unit"`
	Burst   float64       `json:"burst"`
	Latency time.Duration `json:"latency"`
}

// Counters are what a served disk did.
type Counters struct {
	Reads, Writes, ReadBytes, WriteBytes, Flushes atomic.Int64
	BusyNanos                                     atomic.Int64 // sum of every IO's time from arrival to completion
}

type served struct {
	spec Spec
	pace *Pace
	file *os.File
	c    Counters
}

type filesystem struct{ disks map[string]*served }

func (f *filesystem) Root() (fs.Node, error) { return root{f}, nil }

type root struct{ f *filesystem }

func (root) Attr(_ context.Context, a *fuse.Attr) error {
	a.Inode, a.Mode = 1, os.ModeDir|0o755
	return nil
}

func (r root) Lookup(_ context.Context, name string) (fs.Node, error) {
	if d, ok := r.f.disks[name]; ok {
		return d, nil
	}
	return nil, syscall.ENOENT
}

func (r root) ReadDirAll(context.Context) ([]fuse.Dirent, error) {
	var out []fuse.Dirent
	for name := range r.f.disks {
		out = append(out, fuse.Dirent{Name: name, Type: fuse.DT_File})
	}
	return out, nil
}

func (d *served) Attr(_ context.Context, a *fuse.Attr) error {
	a.Mode, a.Size, a.BlockSize = 0o600, uint64(d.spec.Size), 4096
	return nil
}

// Open serves the disk with direct IO: no page cache between the loop
// device and the emulated disk, so every IO is paced.
func (d *served) Open(_ context.Context, _ *fuse.OpenRequest, resp *fuse.OpenResponse) (fs.Handle, error) {
	resp.Flags |= fuse.OpenDirectIO
	return d, nil
}

// wait holds an IO until the disk completes it. A nanosleep on the
// goroutine's own thread, not a Go timer: an idle Go program wakes its
// timers to the millisecond, which would add up to 1 ms to every IO.
func (d *served) wait(ctx context.Context, arrived time.Time, n int64) error {
	done := d.pace.Reserve(arrived, n)
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0) // this thread's sleeps end on time, not up to 50 µs late
	for {
		left := time.Until(done)
		if left <= 0 {
			break
		}
		if ctx.Err() != nil {
			return syscall.EINTR
		}
		ts := unix.NsecToTimespec(int64(min(left, 100*time.Millisecond)))
		_ = unix.Nanosleep(&ts, nil)
	}
	d.c.BusyNanos.Add(int64(time.Since(arrived)))
	return nil
}

func (d *served) Read(ctx context.Context, req *fuse.ReadRequest, resp *fuse.ReadResponse) error {
	arrived := time.Now()
	buf := make([]byte, req.Size)
	n, err := d.file.ReadAt(buf, req.Offset)
	if err != nil && n == 0 && req.Offset < d.spec.Size {
		return err
	}
	resp.Data = buf[:n]
	if err := d.wait(ctx, arrived, int64(req.Size)); err != nil {
		return err
	}
	d.c.Reads.Add(1)
	d.c.ReadBytes.Add(int64(n))
	return nil
}

func (d *served) Write(ctx context.Context, req *fuse.WriteRequest, resp *fuse.WriteResponse) error {
	arrived := time.Now()
	if req.Offset+int64(len(req.Data)) > d.spec.Size {
		return syscall.ENOSPC
	}
	n, err := d.file.WriteAt(req.Data, req.Offset)
	if err != nil {
		return err
	}
	resp.Size = n
	if err := d.wait(ctx, arrived, int64(n)); err != nil {
		return err
	}
	d.c.Writes.Add(1)
	d.c.WriteBytes.Add(int64(n))
	return nil
}

// Fsync is a cache flush: it costs one operation (as a cloud disk's does).
func (d *served) Fsync(ctx context.Context, _ *fuse.FsyncRequest) error {
	if err := d.wait(ctx, time.Now(), 0); err != nil {
		return err
	}
	d.c.Flushes.Add(1)
	return nil
}

func (d *served) Flush(context.Context, *fuse.FlushRequest) error { return nil }

// Serve mounts the disks at dir and serves them until ctx ends (then it
// unmounts). The backing images are created sparse when missing.
func Serve(ctx context.Context, dir string, specs []Spec, ready func()) error {
	f := &filesystem{disks: map[string]*served{}}
	for _, s := range specs {
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
		f.disks[s.Name] = &served{spec: s, file: file, pace: &Pace{IOPS: s.IOPS, Bps: s.Bps, Unit: s.Unit, Burst: s.Burst, Latency: s.Latency}}
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
