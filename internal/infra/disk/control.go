package disk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hadrill/hadrill/internal/plan"
)

// ReadFaults reads the faults the daemon holds now, by device.
func ReadFaults(p *plan.Plan) (map[string]FaultStatus, error) {
	if p.Disks == nil {
		return nil, nil
	}
	b, err := os.ReadFile(filepath.Join(p.Disks.Fuse, FaultsFile))
	if err != nil {
		return nil, err
	}
	out := map[string]FaultStatus{}
	return out, json.Unmarshal(b, &out)
}

// SetFaults replaces the faults of the devices named (the others keep
// theirs).
func SetFaults(p *plan.Plan, f map[string]Faults) error {
	if p.Disks == nil {
		return errors.New("the lab emulates no disks")
	}
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(p.Disks.Fuse, FaultsFile), b, 0o600); err != nil {
		return fmt.Errorf("the disk daemon refused the faults (its log, %s, says why): %w", p.Disks.Daemon.LogFile, err)
	}
	return nil
}

// FillFile is the file that takes a full volume's free space.
const FillFile = ".hadrill-full"

// Fill takes every free byte of a volume's file system (root's reserve
// too): from now on a write that needs a new block fails with ENOSPC, as
// on a disk that filled up. It returns the bytes taken.
func Fill(v plan.Volume) (int64, error) {
	f, err := os.OpenFile(filepath.Join(v.Mount, FillFile), os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, _ := f.Stat()
	size := st.Size()
	// allocate what is free, then what is left (metadata the allocation
	// itself needed, a file system's rounding), until nothing is
	for chunk := int64(1 << 40); chunk >= 4096; {
		var fs unix.Statfs_t
		if err := unix.Fstatfs(int(f.Fd()), &fs); err != nil {
			return size, err
		}
		free := int64(fs.Bfree) * fs.Bsize
		if free < 4096 {
			break
		}
		n := min(free, chunk)
		if err := unix.Fallocate(int(f.Fd()), 0, size, n); err != nil {
			if errors.Is(err, unix.ENOSPC) {
				chunk = n / 2
				continue
			}
			return size, fmt.Errorf("filling %s: %w", v.Mount, err)
		}
		size += n
	}
	return size, f.Sync()
}

// Filled is how much a volume's fill file takes (0: not full).
func Filled(v plan.Volume) int64 {
	st, err := os.Stat(filepath.Join(v.Mount, FillFile))
	if err != nil {
		return 0
	}
	return st.Size()
}

// Unfill gives a full volume its space back.
func Unfill(v plan.Volume) error {
	if err := os.Remove(filepath.Join(v.Mount, FillFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Writable says whether a volume's file system takes a write and a flush
// now (a file system that met an IO error may have stopped: ext4 remounts
// itself read-only, XFS shuts down).
func Writable(v plan.Volume) error {
	if !mounted(v.Mount) {
		return nil // mounted again, and checked by its journal, at the next start
	}
	name := filepath.Join(v.Mount, ".hadrill-probe")
	f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err == nil {
		_, err = f.Write([]byte("probe"))
		if serr := f.Sync(); err == nil {
			err = serr
		}
		f.Close()
		_ = os.Remove(name)
	}
	return err
}

// PowerOff takes a node's volumes down as a machine losing power would
// (its server must be dead already): the writes since each device's last
// flush are undone when lose-unsynced was armed, the file system is
// unmounted with every write it still makes dropped (what a kernel had in
// its page cache never reaches the disk), and the loop device's buffers
// are forgotten. The power is then back on (the other faults stay; the
// arming is spent) and the volumes are mounted again, replaying their
// journals, by the next start. A volume that cannot be unmounted (a
// process still holds it) keeps its device without power: a file system
// still mounted must never see its disk go back in time under it (it
// would write from what it remembers onto what the disk forgot). The
// power comes back when it is unmounted (PowerOn).
func PowerOff(ctx context.Context, p *plan.Plan, n *plan.Node) error {
	if p.Disks == nil || len(n.Volumes) == 0 {
		return nil
	}
	now, err := ReadFaults(p)
	if err != nil {
		return err
	}
	off := map[string]Faults{}
	for _, v := range n.Volumes {
		f := now[v.Device].Faults
		f.PowerCut = true
		off[v.Device] = f
	}
	if err := SetFaults(p, off); err != nil {
		return err
	}
	var errs []error
	for _, v := range n.Volumes {
		errs = append(errs, Unmount(ctx, p, v))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w (its disks stay without power until it is unmounted)", err)
	}
	return powerOn(ctx, p, func(dev string) bool {
		return slices.ContainsFunc(n.Volumes, func(v plan.Volume) bool { return v.Device == dev })
	})
}

// PowerOn gives the power back to every device a power cut left off (the
// cut's second step, or hadrill killed between the two), each once its
// volume is unmounted: a volume still mounted is unmounted first (its
// writes still go nowhere), and one that cannot be stays without power,
// an error naming what holds it.
func PowerOn(ctx context.Context, p *plan.Plan) error {
	return powerOn(ctx, p, func(string) bool { return true })
}

// powerOn is PowerOn for the devices of which says so.
func powerOn(ctx context.Context, p *plan.Plan, which func(dev string) bool) error {
	now, err := ReadFaults(p)
	if err != nil {
		return err
	}
	on := map[string]Faults{}
	var errs []error
	for dev, st := range now {
		if !st.PowerCut || !which(dev) {
			continue
		}
		if v, ok := volumeOn(p, dev); ok && mounted(v.Mount) {
			if err := Unmount(ctx, p, v); err != nil {
				errs = append(errs, fmt.Errorf("%s stays without power: %w", dev, err))
				continue
			}
		}
		f := st.Faults
		f.PowerCut, f.LoseUnsynced = false, false
		on[dev] = f
	}
	if len(on) > 0 {
		errs = append(errs, SetFaults(p, on))
	}
	return errors.Join(errs...)
}

// volumeOn is the volume made on device dev.
func volumeOn(p *plan.Plan, dev string) (plan.Volume, bool) {
	for _, nv := range p.AllVolumes() {
		if nv.Volume.Device == dev {
			return *nv.Volume, true
		}
	}
	return plan.Volume{}, false
}

// Unmount unmounts a volume (waiting a little for a killed server's files
// to close) and forgets its loop device's buffers, so that the next mount
// reads the disk as it is.
func Unmount(ctx context.Context, p *plan.Plan, v plan.Volume) error {
	var err error
	for end := time.Now().Add(5 * time.Second); mounted(v.Mount); time.Sleep(100 * time.Millisecond) {
		if err = run(ctx, [][]string{{"umount", v.Mount}}); err == nil || time.Now().After(end) {
			break
		}
	}
	if mounted(v.Mount) {
		held := "something still holds it"
		if hs := holders(v.Mount); len(hs) > 0 {
			held = "held by " + strings.Join(hs, ", ")
		}
		return fmt.Errorf("unmounting %s: %w (%s)", v.Mount, err, held)
	}
	loops := loopsOf(p.Disks.Device(v.Device))
	// unmounted here is not gone: a copy of the mount in another mount
	// namespace keeps the file system alive, and it would go on writing
	// from what it remembers onto a disk that forgot (a log behind its
	// metadata at the next mount)
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		held := heldElsewhere(loops)
		if len(held) == 0 {
			break
		}
		if time.Now().After(end) {
			return fmt.Errorf("unmounting %s: its file system is still mounted in another mount namespace (%s)", v.Mount, strings.Join(held, ", "))
		}
	}
	for _, loop := range loops {
		if out, err := exec.CommandContext(ctx, "blockdev", "--flushbufs", loop).CombinedOutput(); err != nil {
			return fmt.Errorf("blockdev --flushbufs %s: %v: %s", loop, err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}
