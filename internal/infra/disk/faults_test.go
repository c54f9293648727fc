package disk

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"bazil.org/fuse"
)

// fileDevice is a device of one fast disk backed by a file, for IOs.
func fileDevice(t *testing.T) *device {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(t.TempDir(), "img"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := f.Truncate(1 << 20); err != nil {
		t.Fatal(err)
	}
	m := &member{spec: Disk{Name: "d", Size: 1 << 20}, file: f, pace: &Pace{}}
	return &device{name: "v", stripe: 4096, members: []*member{m}, size: 1 << 20, faults: faultState{saved: map[*member]map[int64][]byte{}}}
}

func write(t *testing.T, d *device, off int64, b byte, n int) error {
	t.Helper()
	return d.Write(context.Background(), &fuse.WriteRequest{Offset: off, Data: bytes.Repeat([]byte{b}, n)}, &fuse.WriteResponse{})
}

func readAt(t *testing.T, d *device, off int64, n int) []byte {
	t.Helper()
	resp := &fuse.ReadResponse{}
	if err := d.Read(context.Background(), &fuse.ReadRequest{Offset: off, Size: n}, resp); err != nil {
		t.Fatal(err)
	}
	return resp.Data
}

func TestIOErrors(t *testing.T) {
	d := fileDevice(t)
	ctx := context.Background()
	if err := d.faults.set(Faults{EIO: []string{IOFsync}}); err != nil {
		t.Fatal(err)
	}
	if err := write(t, d, 0, 1, 4096); err != nil {
		t.Errorf("a write failed under --eio fsync: %v", err)
	}
	if err := d.Fsync(ctx, &fuse.FsyncRequest{}); !errors.Is(err, syscall.EIO) {
		t.Errorf("fsync under --eio fsync: %v, want EIO", err)
	}
	_ = d.faults.set(Faults{EIO: []string{IORead, IOWrite}})
	if err := write(t, d, 0, 1, 4096); !errors.Is(err, syscall.EIO) {
		t.Errorf("write under --eio write: %v, want EIO", err)
	}
	if err := d.Read(ctx, &fuse.ReadRequest{Offset: 0, Size: 4096}, &fuse.ReadResponse{}); !errors.Is(err, syscall.EIO) {
		t.Errorf("read under --eio read: %v, want EIO", err)
	}
	if err := d.Fsync(ctx, &fuse.FsyncRequest{}); err != nil {
		t.Errorf("fsync failed without --eio fsync: %v", err)
	}
	_ = d.faults.set(Faults{EIO: []string{IOWrite}, Rate: 0.25})
	failed := 0
	for i := 0; i < 2000; i++ {
		if write(t, d, 0, 2, 512) != nil {
			failed++
		}
	}
	if failed < 400 || failed > 600 {
		t.Errorf("%d of 2000 writes failed at --rate 25%%", failed)
	}
	_ = d.faults.set(Faults{})
	if err := write(t, d, 0, 3, 4096); err != nil || !d.faults.get().IsZero() {
		t.Errorf("a healed device: %v %+v", err, d.faults.get())
	}
}

// TestPowerCut: with lose-unsynced armed, a power cut undoes every write
// since the last flush, keeps what a flush made durable, and drops what
// arrives while the power is off.
func TestPowerCut(t *testing.T) {
	d := fileDevice(t)
	ctx := context.Background()
	_ = d.faults.set(Faults{LoseUnsynced: true})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(write(t, d, 0, 'a', 8192))
	must(d.Fsync(ctx, &fuse.FsyncRequest{}))
	must(write(t, d, 512, 'b', 1024))    // within block 0, after the flush
	must(write(t, d, 64<<10, 'c', 4096)) // a block never written before
	if got := d.faults.unsynced(); got != 2*unsyncedBlock {
		t.Errorf("kept %d bytes aside, want two blocks", got)
	}
	must(d.faults.set(Faults{LoseUnsynced: true, PowerCut: true}))
	must(write(t, d, 4096, 'z', 4096)) // acknowledged and dropped
	must(d.Fsync(ctx, &fuse.FsyncRequest{}))
	if err := d.Read(ctx, &fuse.ReadRequest{Offset: 0, Size: 4096}, &fuse.ReadResponse{}); !errors.Is(err, syscall.EIO) {
		t.Errorf("a read with the power off: %v, want EIO", err)
	}
	must(d.faults.set(Faults{}))
	if got := readAt(t, d, 0, 8192); !bytes.Equal(got, bytes.Repeat([]byte{'a'}, 8192)) {
		t.Errorf("after the power cut the flushed blocks read %q…, want the flushed 'a's", got[:600])
	}
	if got := readAt(t, d, 64<<10, 4096); !bytes.Equal(got, make([]byte, 4096)) {
		t.Errorf("an unsynced write to a new block survived the power cut: %q…", got[:8])
	}
	// not armed: a power cut drops nothing already written
	must(write(t, d, 64<<10, 'c', 4096))
	must(d.faults.set(Faults{PowerCut: true}))
	must(d.faults.set(Faults{}))
	if got := readAt(t, d, 64<<10, 1); got[0] != 'c' {
		t.Errorf("a power cut without lose-unsynced dropped a write")
	}
}

func TestStallAndSlow(t *testing.T) {
	var s faultState
	_ = s.set(Faults{Slow: 4})
	if got := s.held(t0, t0.Add(time.Millisecond)).Sub(t0); got != 4*time.Millisecond {
		t.Errorf("slow 4: an IO of 1ms took %v", got)
	}
	_ = s.set(Faults{StallUntil: t0.Add(time.Second)})
	if got := s.held(t0, t0.Add(time.Millisecond)).Sub(t0); got != time.Second {
		t.Errorf("an IO arriving in a stall completed after %v, want its end", got)
	}
	if got := s.held(t0.Add(2*time.Second), t0.Add(2*time.Second+time.Millisecond)).Sub(t0.Add(2 * time.Second)); got != time.Millisecond {
		t.Errorf("an IO after the stall took %v", got)
	}
	bad := Faults{EIO: []string{"trim"}, Rate: 2, Slow: 0.5}.Check()
	want := []string{`--eio: expected read, write or fsync, got "trim"`, "--rate: expected a share", "--slow: expected a factor from 1 to 1000, got 0.5"}
	if len(bad) != len(want) {
		t.Fatalf("problems %q", bad)
	}
	for i, w := range want {
		if !strings.Contains(bad[i], w) {
			t.Errorf("problem %q, want %q", bad[i], w)
		}
	}
}

// TestFlipsAndDrops: a bit flipped at rest is read flipped until a write
// stores that byte anew, and heal gives the true byte back; an armed drop
// keeps the range's earlier content past its Keep bytes for the one write
// that reaches its end (a torn write; Keep 0: a lost one), and the writes
// after it are whole.
func TestFlipsAndDrops(t *testing.T) {
	d := fileDevice(t)
	if err := write(t, d, 0, 0xaa, 16384); err != nil {
		t.Fatal(err)
	}
	_ = d.faults.set(Faults{Flips: []Flip{{Off: 5000, Mask: 0x04}}})
	if b := readAt(t, d, 4096, 4096); b[5000-4096] != 0xae || b[0] != 0xaa {
		t.Errorf("flipped byte read %#x, its neighbour %#x", b[5000-4096], b[0])
	}
	_ = d.faults.set(Faults{})
	if b := readAt(t, d, 4096, 4096); b[5000-4096] != 0xaa {
		t.Errorf("after heal the byte reads %#x", b[5000-4096])
	}
	_ = d.faults.set(Faults{Flips: []Flip{{Off: 5000, Mask: 0x04}, {Off: 9000, Mask: 1}}})
	if err := write(t, d, 4096, 0xbb, 4096); err != nil { // rewrites byte 5000, not 9000
		t.Fatal(err)
	}
	if b := readAt(t, d, 4096, 8192); b[5000-4096] != 0xbb || b[9000-4096] != 0xab {
		t.Errorf("after a rewrite: %#x (want 0xbb), untouched flip %#x (want 0xab)", b[5000-4096], b[9000-4096])
	}
	if f := d.faults.get(); len(f.Flips) != 1 || f.Flips[0].Off != 9000 {
		t.Errorf("flips left: %+v", f.Flips)
	}

	// a torn write: of a 16K page written whole, its first 4K stored
	_ = d.faults.set(Faults{Drops: []Drop{{Off: 16384, N: 16384, Keep: 4096}}})
	_ = write(t, d, 16384, 0x11, 16384)
	if b := readAt(t, d, 16384, 16384); b[0] != 0x11 || b[4095] != 0x11 || b[4096] != 0 || b[16383] != 0 {
		t.Errorf("torn write: bytes %#x %#x %#x %#x, want 0x11 0x11 0 0", b[0], b[4095], b[4096], b[16383])
	}
	// a lost write, the page arriving as four 4K writes: none of them stored
	_ = d.faults.set(Faults{Drops: []Drop{{Off: 16384, N: 16384}}})
	for off := int64(16384); off < 32768; off += 4096 {
		if err := write(t, d, off, 0x22, 4096); err != nil {
			t.Fatal(err)
		}
	}
	if b := readAt(t, d, 16384, 16384); b[0] != 0x11 || b[4096] != 0 || b[12288] != 0 {
		t.Errorf("lost write stored something: %#x %#x %#x", b[0], b[4096], b[12288])
	}
	f := d.faults.get()
	if len(f.Drops) != 1 || f.Drops[0].Hit.IsZero() {
		t.Errorf("a spent drop: %+v", f.Drops)
	}
	_ = write(t, d, 16384, 0x44, 16384)
	if b := readAt(t, d, 16384, 16384); b[0] != 0x44 || b[16383] != 0x44 {
		t.Errorf("a write after the drop was spent: %#x %#x", b[0], b[16383])
	}
	if p := (Faults{Flips: []Flip{{Off: -1}}, Drops: []Drop{{Off: 0, N: 10, Keep: 10}}}).Check(); len(p) != 2 {
		t.Errorf("bad flips and drops: %q", p)
	}
}

// TestPowerCutAmidWrites: writes racing a power cut either land before it
// (and are undone with every unsynced write) or after (and go nowhere):
// none lands between, its earlier contents put back before it is stored,
// outliving the cut.
func TestPowerCutAmidWrites(t *testing.T) {
	ctx := context.Background()
	for round := 0; round < 20; round++ {
		d := fileDevice(t)
		if err := d.faults.set(Faults{LoseUnsynced: true}); err != nil {
			t.Fatal(err)
		}
		if err := d.Fsync(ctx, &fuse.FsyncRequest{}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					off := int64((w*64+i%64)%256) * 4096
					_ = d.Write(ctx, &fuse.WriteRequest{Offset: off, Data: bytes.Repeat([]byte{'x'}, 4096)}, &fuse.WriteResponse{})
				}
			}(w)
		}
		time.Sleep(time.Millisecond)
		if err := d.faults.set(Faults{LoseUnsynced: true, PowerCut: true}); err != nil {
			t.Fatal(err)
		}
		close(stop)
		wg.Wait()
		if err := d.faults.set(Faults{}); err != nil {
			t.Fatal(err)
		}
		if got := readAt(t, d, 0, 1<<20); bytes.IndexByte(got, 'x') >= 0 {
			t.Fatalf("round %d: an unsynced write outlived the power cut at byte %d", round, bytes.IndexByte(got, 'x'))
		}
	}
}
