package disk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sys/unix"

	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
	"github.com/hadrill/hadrill/internal/supervise"
)

// Devices are what the daemon serves for a plan: every node's volumes,
// each of its disks paced to its class, and all of a host's disks together
// to its machine's disk caps when it has them.
func Devices(p *plan.Plan) []Device {
	var out []Device
	for _, nv := range p.AllVolumes() {
		v := nv.Volume
		dv := Device{Name: v.Device, Stripe: v.Stripe}
		if h, ok := p.Host(nv.Node.Host); ok && h.Machine != nil && (h.Machine.DiskIOPS > 0 || h.Machine.DiskBps > 0) {
			dv.Machine = &MachineCaps{Host: h.Name, IOPS: float64(h.Machine.DiskIOPS), Bps: float64(h.Machine.DiskBps)}
		}
		for _, d := range v.Disks {
			dv.Disks = append(dv.Disks, diskOf(d, p.Disks.Image(d), v.Class))
		}
		out = append(out, dv)
	}
	return out
}

// Window is how long every emulated disk's caps are counted over.
const Window = 20 * time.Millisecond

// StackLatency is what the path from a volume to the daemon (the loop
// device and FUSE, there and back) adds to every IO, measured here at about
// 0.1 ms: the daemon holds each IO that much less than its class's latency,
// so that the latency a program on the volume sees is the class's (the
// volume check at up measures it).
const StackLatency = 100 * time.Microsecond

func diskOf(name, image string, c spec.DiskClass) Disk {
	d := Disk{Name: name, Image: image, Size: c.SizeBytes(), IOPS: float64(c.IOPS), Bps: float64(c.ThroughputBytes()),
		Unit: 256 << 10, Latency: max(c.LatencyDuration()-StackLatency, 0), Caching: c.CachingPolicy(), Window: Window}
	if b := c.Burst; b != nil {
		d.BurstIOPS = float64(b.IOPS)
		t, _ := spec.ParseSize(b.Throughput)
		d.BurstBps = float64(t)
		d.BurstFor, _ = time.ParseDuration(b.Duration)
	}
	if w := c.WarmUp; w != nil {
		d.WarmIdle, _ = time.ParseDuration(w.AfterIdle)
		d.WarmFor, _ = time.ParseDuration(w.Lasts)
		d.WarmSpeed = w.Speed
	}
	return d
}

// Daemon is the lab's disk daemon under supervision.
func Daemon(p *plan.Plan, exe string) supervise.Daemon {
	d := p.Disks
	return d.Daemon.Named("disks", []string{exe, "disk", "--config", d.Config, "--mount", d.Fuse, "--ready-file", d.ReadyFile})
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
	if Serving(p, exe) != "" && stale(d) { // a daemon that died or hangs: what it served goes, the images stay and are served again
		if err := release(ctx, p, exe); err != nil {
			return fmt.Errorf("the disk daemon stopped serving; releasing what it left: %w", err)
		}
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
	if err := PowerOn(ctx, p); err != nil {
		return err
	}
	// loop devices one at a time (losetup --find picks the first free
	// one), then every volume's file system made and mounted at once: a
	// journal replayed at a slow disk's IOPS takes seconds, each machine's
	// its own
	g, gctx := errgroup.WithContext(ctx)
	for _, nv := range p.AllVolumes() {
		if mounted(nv.Volume.Mount) {
			continue
		}
		loop, err := attach(ctx, d.Device(nv.Volume.Device))
		if err != nil {
			return fmt.Errorf("%s %s volume: %w", nv.Node.Name, nv.Volume.Name, err)
		}
		g.Go(func() error {
			if err := mountVolume(gctx, nv.Volume, loop); err != nil {
				return fmt.Errorf("%s %s volume: %w", nv.Node.Name, nv.Volume.Name, err)
			}
			return nil
		})
	}
	return g.Wait()
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

// Serving says whether the lab's disk daemon serves its volumes now ("" when
// it does, or the lab has no emulated disks), else why not. A daemon that is
// gone leaves its mount and the loop devices over it behind: every IO of a
// volume then fails (EIO), while the servers on them run on until they
// next write.
func Serving(p *plan.Plan, exe string) string {
	d := p.Disks
	if d == nil {
		return ""
	}
	switch {
	case !Daemon(p, exe).Running():
		return "the disk daemon is not running: every IO of the lab's volumes fails (EIO)"
	case !mounted(d.Fuse):
		return "the disk daemon runs but its file system is not mounted: the lab's volumes cannot be read"
	}
	if _, err := readStats(d); err != nil {
		return "the disk daemon does not answer (" + err.Error() + "): every IO of the lab's volumes waits or fails"
	}
	for _, nv := range p.AllVolumes() {
		dev := d.Device(nv.Volume.Device)
		for _, loop := range loopsOf(dev) {
			if !reads(loop, dev) {
				return fmt.Sprintf("%s's %s volume is on %s, which reads a file of a disk daemon that is gone: every IO of it fails (EIO)",
					nv.Node.Name, nv.Volume.Name, loop)
			}
		}
	}
	return ""
}

// stale says whether a dead daemon left anything behind: its mount, loop
// devices over its files, volumes mounted from them.
func stale(d *plan.Disks) bool {
	return mounted(d.Fuse) || len(loopsUnder(d.Fuse)) > 0 || len(mountsUnder(d.Mounts)) > 1
}

func startDaemon(ctx context.Context, p *plan.Plan, exe string) error {
	d := p.Disks
	dm := Daemon(p, exe)
	if Serving(p, exe) == "" {
		return nil
	}
	b, err := json.MarshalIndent(Devices(p), "", "  ")
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

// mountVolume mounts a volume from its loop device, making its file system
// first when the device holds none (a new volume).
func mountVolume(ctx context.Context, v *plan.Volume, loop string) error {
	if fsType(ctx, loop) == "" {
		if err := blank(loop); err != nil { // never a new file system over data that could not be read
			return err
		}
		if err := run(ctx, [][]string{mkfs(v, loop)}); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(v.Mount, 0o755); err != nil {
		return err
	}
	opts := "noatime"
	if v.FS == "btrfs" {
		// no copy-on-write for data: a database's files are overwritten in
		// place, and btrfs serialises direct writes that must allocate
		opts += ",nodatacow"
	}
	if err := run(ctx, [][]string{{"mount", "-t", v.FS, "-o", opts, loop, v.Mount}}); err != nil {
		if said := kernelSays(ctx, loop); said != "" {
			return fmt.Errorf("%w; the kernel said: %s", err, said)
		}
		return err
	}
	return nil
}

// kernelSays is the kernel's last messages about a device (a file system
// refusing to mount says why there: its log's recovery failed, a
// corruption found), joined on one line.
func kernelSays(ctx context.Context, dev string) string {
	out, err := exec.CommandContext(ctx, "dmesg").Output()
	if err != nil {
		return ""
	}
	tag := "(" + filepath.Base(dev) + ")"
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if i := strings.Index(l, tag); i >= 0 {
			lines = append(lines, strings.TrimSpace(l[i+len(tag):]))
		}
	}
	return strings.Join(lines[max(len(lines)-4, 0):], " / ")
}

// attach gives a volume's device its loop device (the one it has, or a new
// one).
func attach(ctx context.Context, device string) (string, error) {
	for _, loop := range loopsOf(device) {
		if reads(loop, device) {
			return loop, nil
		}
	}
	out, err := exec.CommandContext(ctx, "losetup", "--find", "--show", "--direct-io=on", device).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("losetup %s: %v: %s", device, err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

// mkfs is the command that makes a volume's file system: its allocation
// unit (XFS block size, ext4 bigalloc cluster) and, when striped, aligned
// to the stripe (XFS su/sw, ext4 stride/stripe width, as on md).
func mkfs(v *plan.Volume, dev string) []string {
	n := int64(len(v.Disks))
	switch v.FS {
	case "ext4":
		ext := "nodiscard,lazy_itable_init=1,lazy_journal_init=1"
		if v.Stripe > 0 {
			ext += fmt.Sprintf(",stride=%d,stripe_width=%d", v.Stripe/4096, v.Stripe/4096*n)
		}
		argv := []string{"mkfs.ext4", "-q", "-F", "-E", ext}
		if v.AllocationUnit > 4096 {
			argv = append(argv, "-O", "bigalloc", "-C", strconv.FormatInt(v.AllocationUnit, 10))
		}
		return append(argv, dev)
	case "btrfs":
		return []string{"mkfs.btrfs", "-q", "-f", "-K", dev}
	}
	argv := []string{"mkfs.xfs", "-q", "-f", "-K"}
	if v.AllocationUnit > 4096 {
		argv = append(argv, "-b", "size="+strconv.FormatInt(v.AllocationUnit, 10))
	}
	if v.Stripe > 0 {
		argv = append(argv, "-d", fmt.Sprintf("su=%d,sw=%d", v.Stripe, n))
	}
	return append(argv, dev)
}

// blank checks that a volume with no file system is new: its first MiB
// (where every file system keeps its superblock) reads, and reads as zeros.
// A volume that cannot be read, or holds data blkid does not recognise, is
// never formatted.
func blank(dev string) error {
	f, err := os.Open(dev)
	if err != nil {
		return err
	}
	defer f.Close()
	b := make([]byte, 1<<20)
	if _, err := io.ReadFull(f, b); err != nil {
		return fmt.Errorf("%s: reading it to check it is new: %w (no file system is made over what could not be read)", dev, err)
	}
	for _, c := range b {
		if c != 0 {
			return fmt.Errorf("%s holds data but no file system blkid recognises: not formatted (its image is kept)", dev)
		}
	}
	return nil
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
	errs := []error{release(ctx, p, exe)}
	if mounted(d.Mounts) {
		errs = append(errs, unmount(ctx, d.Mounts))
	}
	return errors.Join(errs...)
}

// release unmounts every volume, detaches their loop devices, stops the
// daemon and unmounts its file system: what Setup serves, the images and
// the shared mount aside.
func release(ctx context.Context, p *plan.Plan, exe string) error {
	d := p.Disks
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
	for i := 0; i < 4 && mounted(d.Fuse); i++ { // a daemon started over a dead one's mount stacks another on it
		if err := unmount(ctx, d.Fuse); err != nil {
			errs = append(errs, err)
			break
		}
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

// reads says whether a loop device reads the file now: the same device and
// inode (asked of the loop device itself), not a file of the same name on a
// mount that has gone (a dead daemon's, with another served at its path).
func reads(loop, file string) bool {
	var st unix.Stat_t
	if err := unix.Stat(file, &st); err != nil {
		return false
	}
	fd, err := unix.Open(loop, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	info, err := unix.IoctlLoopGetStatus64(fd)
	return err == nil && info.Device == st.Dev && info.Inode == st.Ino
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

// IO are a disk's counters as the daemon counts them.
type IO struct {
	Name, Volume           string
	Reads, Writes, Flushes uint64
	ReadBytes, WriteBytes  uint64
	CacheHits              uint64
	TicksMs, BusyMs        uint64 // time IOs spent (summed), time the disk was busy
}

// Read reads the counters of a node's disks (none without volumes, or
// when the daemon does not answer).
func Read(p *plan.Plan, n *plan.Node) []IO {
	if p.Disks == nil || len(n.Volumes) == 0 {
		return nil
	}
	stats, err := readStats(p.Disks)
	if err != nil {
		return nil
	}
	var out []IO
	for _, v := range n.Volumes {
		for _, d := range v.Disks {
			if st, ok := stats[d]; ok {
				out = append(out, ioOf(d, v.Name, st))
			}
		}
	}
	return out
}

// readStats reads the daemon's counters; a daemon that does not answer
// within a second (stopped) reads as none rather than holding the caller.
func readStats(d *plan.Disks) (map[string]Stats, error) {
	type result struct {
		b   []byte
		err error
	}
	ch := make(chan result, 1)
	go func() {
		b, err := os.ReadFile(filepath.Join(d.Fuse, StatsFile))
		ch <- result{b, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, r.err
		}
		var stats map[string]Stats
		return stats, json.Unmarshal(r.b, &stats)
	case <-time.After(time.Second):
		return nil, errors.New("the disk daemon does not answer")
	}
}

func ioOf(name, volume string, st Stats) IO {
	u := func(v int64) uint64 { return uint64(max(v, 0)) }
	return IO{Name: name, Volume: volume, Reads: u(st.Reads), Writes: u(st.Writes), Flushes: u(st.Flushes),
		ReadBytes: u(st.ReadBytes), WriteBytes: u(st.WriteBytes), CacheHits: u(st.CacheHits),
		TicksMs: u(st.WaitNanos / 1e6), BusyMs: u(st.BusyNanos / 1e6)}
}

// Overcommit is how much more a lab's disks may promise than the free space
// of the file system holding their images: the images are sparse files
// that take space as data is written (as a cloud's thin-provisioned disks
// do), so a lab may promise more than the machine has, up to this factor.
// Headroom is what must stay free beyond what the images need at once.
const (
	Overcommit = 4
	Headroom   = 2 << 30
)

// Room judges a lab's disks against the free space of the file system
// their images go on: refused when they promise more than Overcommit times
// it (a run would fill the machine's disk long before the volumes) or less
// than Headroom is free; a warning when they promise more than it (a run
// that writes more than is free ends with ENOSPC on every volume).
func Room(p *plan.Plan, free int64) (refuse, warn string) {
	if p.Disks == nil {
		return "", ""
	}
	var total int64
	n := 0
	for _, dv := range Devices(p) {
		for _, d := range dv.Disks {
			total += d.Size
			n++
		}
	}
	figures := fmt.Sprintf("%d disks of %s in all, %s free on the file system holding %s", n, spec.FormatSize(total), spec.FormatSize(free), p.Disks.Images)
	switch {
	case free < Headroom:
		return fmt.Sprintf("%s: less than the %s hadrill keeps free; free some space or use another --home", figures, spec.FormatSize(Headroom)), ""
	case total > Overcommit*free:
		return fmt.Sprintf("%s: the disks' images are sparse and may promise up to %d× the free space, not %.0f×; give the disk classes a smaller size "+
			"or use another --home", figures, Overcommit, float64(total)/float64(free)), ""
	case total > free:
		return "", fmt.Sprintf("%s: the images are sparse and take space as data is written; a run that writes more than is free fails with ENOSPC on every volume", figures)
	}
	return "", ""
}

// Free is the space free for an unprivileged file of dir's file system (or
// of its nearest existing parent's).
func Free(dir string) (int64, error) {
	for ; ; dir = filepath.Dir(dir) {
		var st unix.Statfs_t
		err := unix.Statfs(dir, &st)
		if err == nil {
			return int64(st.Bavail) * st.Bsize, nil
		}
		if dir == filepath.Dir(dir) || !errors.Is(err, unix.ENOENT) {
			return 0, err
		}
	}
}

// holders names the processes that hold something under dir (their
// working directory, root, or an open file), as "pid N (command)": why
// it cannot be unmounted.
func holders(dir string) []string {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	under := func(path string) bool { return path == dir || strings.HasPrefix(path, dir+"/") }
	var out []string
	for _, proc := range procs {
		links := []string{filepath.Join(proc, "cwd"), filepath.Join(proc, "root")}
		fds, _ := filepath.Glob(filepath.Join(proc, "fd", "*"))
		for _, l := range append(links, fds...) {
			if to, err := os.Readlink(l); err == nil && under(to) {
				comm, _ := os.ReadFile(filepath.Join(proc, "comm"))
				out = append(out, fmt.Sprintf("pid %s (%s)", filepath.Base(proc), strings.TrimSpace(string(comm))))
				break
			}
		}
	}
	return out
}

// heldElsewhere names, for loop devices a file system unmounted here may
// still hold, a process of each other mount namespace where one is mounted ("pid N (comm)
// at PATH"); none when the devices are free. A device a file system holds
// refuses an exclusive open; the namespaces are found from every
// process's mount table.
func heldElsewhere(loops []string) []string {
	var busy []string // "major:minor"
	for _, loop := range loops {
		fd, err := unix.Open(loop, unix.O_RDONLY|unix.O_EXCL|unix.O_CLOEXEC, 0)
		if err == nil {
			unix.Close(fd)
			continue
		}
		var st unix.Stat_t
		if err != unix.EBUSY || unix.Stat(loop, &st) != nil {
			continue
		}
		busy = append(busy, fmt.Sprintf("%d:%d", unix.Major(st.Rdev), unix.Minor(st.Rdev)))
	}
	if len(busy) == 0 {
		return nil
	}
	var out []string
	self, _ := os.Readlink("/proc/self/ns/mnt")
	seen := map[string]bool{self: true} // unmounted here
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, proc := range procs {
		ns, err := os.Readlink(filepath.Join(proc, "ns", "mnt"))
		if err != nil || seen[ns] {
			continue
		}
		seen[ns] = true
		b, err := os.ReadFile(filepath.Join(proc, "mountinfo"))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) > 4 && slices.Contains(busy, f[2]) {
				comm, _ := os.ReadFile(filepath.Join(proc, "comm"))
				out = append(out, fmt.Sprintf("pid %s (%s) at %s", filepath.Base(proc), strings.TrimSpace(string(comm)), unescape(f[4])))
				break
			}
		}
	}
	if len(out) == 0 { // held, by no mount any process sees (a lazy unmount's file system, still busy)
		out = append(out, "by a file system unmounted lazily, still in use")
	}
	return out
}
