package disk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/supervise"
)

// Specs are the disks the daemon serves for a plan: every disk of every
// node's volumes, paced to its class.
func Specs(p *plan.Plan) []Spec {
	var out []Spec
	for _, nv := range p.AllVolumes() {
		c := nv.Volume.Class
		for _, d := range nv.Volume.Disks {
			out = append(out, Spec{Name: d, Image: p.Disks.Image(d), Size: c.SizeBytes(), IOPS: float64(c.IOPS),
				Bps: float64(c.ThroughputBytes()), Unit: 256 << 10, Latency: c.LatencyDuration()})
		}
	}
	return out
}

// Daemon is the lab's disk daemon under supervision.
func Daemon(p *plan.Plan, exe string) supervise.Daemon {
	d := p.Disks
	return supervise.Daemon{Name: "disks", Argv: []string{exe, "disk", "--config", d.Config, "--mount", d.Fuse, "--ready-file", d.ReadyFile},
		Dir: d.Daemon.Dir, LogFile: d.Daemon.LogFile, PidFile: d.Daemon.PidFile, Marker: d.Daemon.Marker}
}

// Setup serves the lab's disks and mounts every node's volumes: the daemon
// (unless it runs), a loop device per disk (direct IO, so every IO reaches
// the daemon), a file system made once (kept across stop and start), and
// the mount. It is idempotent.
func Setup(ctx context.Context, p *plan.Plan, exe string) error {
	d := p.Disks
	if d == nil {
		return nil
	}
	for _, dir := range []string{d.Images, d.Fuse, d.Mounts} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	if err := sharedMount(ctx, d.Mounts); err != nil {
		return err
	}
	if err := startDaemon(ctx, p, exe); err != nil {
		return err
	}
	for _, nv := range p.AllVolumes() {
		if err := mountVolume(ctx, d, nv.Volume); err != nil {
			return fmt.Errorf("%s %s volume: %w", nv.Node.Name, nv.Volume.Name, err)
		}
	}
	return nil
}

// sharedMount makes dir a mount point of its own in a shared peer group:
// the mount namespaces `ip netns exec` makes for each host process copy it
// as a slave, so a volume unmounted here leaves their copies too (a private
// copy would pin the loop devices and the daemon until those processes end).
func sharedMount(ctx context.Context, dir string) error {
	if mounted(dir) {
		return nil
	}
	return run(ctx, [][]string{{"mount", "--bind", dir, dir}, {"mount", "--make-private", dir}, {"mount", "--make-shared", dir}})
}

func startDaemon(ctx context.Context, p *plan.Plan, exe string) error {
	d := p.Disks
	dm := Daemon(p, exe)
	if dm.Running() && mounted(d.Fuse) {
		return nil
	}
	b, err := json.MarshalIndent(Specs(p), "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(d.Config, b, 0o644); err != nil {
		return err
	}
	_ = os.Remove(d.ReadyFile)
	proc, err := dm.Start()
	if err != nil {
		return err
	}
	return proc.WaitReady(ctx, 10*time.Second, 20*time.Millisecond, func(context.Context) error {
		if _, err := os.Stat(d.ReadyFile); err != nil || !mounted(d.Fuse) {
			return errors.New("disk daemon not mounted yet")
		}
		return nil
	})
}

func mountVolume(ctx context.Context, d *plan.Disks, v *plan.Volume) error {
	if mounted(v.Mount) {
		return nil
	}
	var loops []string
	for _, disk := range v.Disks {
		loop, err := attach(ctx, d.Device(disk))
		if err != nil {
			return fmt.Errorf("disk %s: %w", disk, err)
		}
		loops = append(loops, loop)
	}
	if fsType(ctx, loops[0]) == "" {
		if err := mkfs(ctx, v.FS, loops); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(v.Mount, 0o755); err != nil {
		return err
	}
	argv := []string{"mount", "-t", v.FS, "-o", "noatime"}
	if v.FS == "btrfs" {
		// no copy-on-write for data: a database's files are overwritten in
		// place, and btrfs serialises direct writes that must allocate (a
		// stripe of four then writes no faster than one disk)
		argv[4] += ",nodatacow"
	}
	if v.FS == "btrfs" && len(loops) > 1 {
		var devs []string
		for _, l := range loops {
			devs = append(devs, "device="+l)
		}
		argv[4] += "," + strings.Join(devs, ",")
	}
	return run(ctx, [][]string{append(argv, loops[0], v.Mount)})
}

// attach gives a disk its loop device (the one it has, or a new one).
func attach(ctx context.Context, device string) (string, error) {
	if loops := loopsOf(device); len(loops) > 0 {
		return loops[0], nil
	}
	out, err := exec.CommandContext(ctx, "losetup", "--find", "--show", "--direct-io=on", device).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("losetup %s: %v: %s", device, err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

func mkfs(ctx context.Context, fs string, loops []string) error {
	var argv []string
	switch fs {
	case "ext4":
		argv = []string{"mkfs.ext4", "-q", "-F", "-E", "nodiscard,lazy_itable_init=1,lazy_journal_init=1", loops[0]}
	case "xfs":
		argv = []string{"mkfs.xfs", "-q", "-f", "-K", loops[0]}
	case "btrfs":
		argv = append([]string{"mkfs.btrfs", "-q", "-f", "-K", "-d", "raid0", "-m", "raid0"}, loops...)
		if len(loops) == 1 {
			argv = []string{"mkfs.btrfs", "-q", "-f", "-K", loops[0]}
		}
	default:
		return fmt.Errorf("file system %q", fs)
	}
	return run(ctx, [][]string{argv})
}

func fsType(ctx context.Context, dev string) string {
	out, _ := exec.CommandContext(ctx, "blkid", "-p", "-o", "value", "-s", "TYPE", dev).Output()
	return strings.TrimSpace(string(out))
}

// Teardown unmounts every volume, detaches every loop device, stops the
// daemon and removes its mount and the shared mount; it finds them from
// the kernel's tables (a half-made lab, a killed daemon), not from a
// record. Idempotent. Images stay (the lab's directory holds them).
func Teardown(ctx context.Context, p *plan.Plan, exe string) error {
	d := p.Disks
	if d == nil {
		return nil
	}
	var errs []error
	for _, m := range mountsUnder(d.Mounts) { // deepest first
		if m != d.Mounts {
			errs = append(errs, unmount(ctx, m))
		}
	}
	for _, loop := range loopsUnder(d.Fuse) {
		if out, err := exec.CommandContext(ctx, "losetup", "-d", loop).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("losetup -d %s: %v: %s", loop, err, strings.TrimSpace(string(out))))
		}
	}
	errs = append(errs, Daemon(p, exe).Stop(5*time.Second))
	if mounted(d.Fuse) {
		errs = append(errs, unmount(ctx, d.Fuse))
	}
	if mounted(d.Mounts) {
		errs = append(errs, unmount(ctx, d.Mounts))
	}
	return errors.Join(errs...)
}

// unmount unmounts dir, lazily when something still holds it.
func unmount(ctx context.Context, dir string) error {
	if err := run(ctx, [][]string{{"umount", dir}}); err == nil {
		return nil
	}
	return run(ctx, [][]string{{"umount", "-l", dir}})
}

func run(ctx context.Context, cmds [][]string) error {
	for _, c := range cmds {
		if out, err := exec.CommandContext(ctx, c[0], c[1:]...).CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %v: %s", strings.Join(c, " "), err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// mountPoints lists this mount namespace's mount points.
func mountPoints() []string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 {
			out = append(out, unescape(f[4]))
		}
	}
	return out
}

func unescape(s string) string {
	return strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`).Replace(s)
}

func mounted(dir string) bool {
	for _, m := range mountPoints() {
		if m == dir {
			return true
		}
	}
	return false
}

// mountsUnder lists the mount points at or below dir, deepest first.
func mountsUnder(dir string) []string {
	var out []string
	for _, m := range mountPoints() {
		if m == dir || strings.HasPrefix(m, dir+"/") {
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// loopsOf lists the loop devices backed by file; loopsUnder those backed
// by any file below dir (read from sysfs: a dead daemon's files cannot be
// stat'ed, their names still can be read).
func loopsOf(file string) []string {
	var out []string
	for dev, back := range loopBacking() {
		if back == file {
			out = append(out, dev)
		}
	}
	sort.Strings(out)
	return out
}

func loopsUnder(dir string) []string {
	var out []string
	for dev, back := range loopBacking() {
		if strings.HasPrefix(back, dir+"/") {
			out = append(out, dev)
		}
	}
	sort.Strings(out)
	return out
}

func loopBacking() map[string]string {
	out := map[string]string{}
	files, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		back := strings.TrimSuffix(strings.TrimSpace(string(b)), " (deleted)")
		out["/dev/"+filepath.Base(filepath.Dir(filepath.Dir(f)))] = back
	}
	return out
}

// IO are a disk's counters as its loop device counts them.
type IO struct {
	Name, Volume           string
	Reads, Writes, Flushes uint64
	ReadBytes, WriteBytes  uint64
	TicksMs, BusyMs        uint64 // time IOs spent (summed), time the disk was busy
}

// Read reads the counters of a node's disks (none without volumes).
func Read(p *plan.Plan, n *plan.Node) []IO {
	if p.Disks == nil {
		return nil
	}
	var out []IO
	for _, v := range n.Volumes {
		for _, d := range v.Disks {
			loops := loopsOf(p.Disks.Device(d))
			if len(loops) == 0 {
				continue
			}
			b, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(loops[0]), "stat"))
			if err != nil {
				continue
			}
			if io, ok := parseStat(string(b)); ok {
				io.Name, io.Volume = d, v.Name
				out = append(out, io)
			}
		}
	}
	return out
}

// parseStat reads /sys/block/DEV/stat (see the kernel's iostats.rst).
func parseStat(s string) (IO, bool) {
	f := strings.Fields(s)
	if len(f) < 11 {
		return IO{}, false
	}
	v := make([]uint64, len(f))
	for i := range f {
		v[i], _ = strconv.ParseUint(f[i], 10, 64)
	}
	io := IO{Reads: v[0], ReadBytes: v[2] * 512, Writes: v[4], WriteBytes: v[6] * 512, TicksMs: v[3] + v[7], BusyMs: v[9]}
	if len(f) >= 17 {
		io.Flushes, io.TicksMs = v[15], io.TicksMs+v[16]
	}
	return io, true
}
