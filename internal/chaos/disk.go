package chaos

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/infra/disk"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/server"
	"github.com/hadrill/hadrill/internal/spec"
)

// Disk is `hadrill fault disk NODE …`: what goes wrong on a node's
// emulated volumes (all of them, or those named), through the disk daemon
// every IO of them crosses.
type Disk struct {
	Node    string
	Volumes []string
	// EIO: these IOs fail with EIO (read, write, fsync), Rate of them (0:
	// all); Share is --rate as given ("1%" or "0.01"), which Resolve reads
	// into Rate.
	EIO   []string
	Rate  float64
	Share string
	// Full takes every free byte of the volumes' file systems: writes that
	// need a new block fail with ENOSPC (28).
	Full bool
	// Stall: every IO waits until this long from now.
	Stall time.Duration
	// Slow: every IO takes this many times as long.
	Slow float64
	// LoseUnsynced arms a power cut: at the node's next kill or crash, the
	// writes its disks had not flushed are dropped.
	LoseUnsynced bool
}

// diskFaults are the fault kinds of this file and their heal (families lists them in heal order).
var diskFaults = family{heal: healDisks, kinds: []Kind{{
	Name: fault.Disk, Use: "disk NODE [--eio read,write,fsync] [--rate P] [--full] [--stall D] [--slow F] [--lose-unsynced] [--volume NAME]",
	Short: "Make a node's emulated disks fail: IO errors, a full file system, a stall, a slowdown, or a power cut at its next crash that drops what was not flushed",
	Long: `The faults act on the node's emulated volumes (a spec's storage volumes), through the disk
daemon every IO of them crosses, and add to those already there; heal (and down) undoes them.
  --eio read,write,fsync   those IOs fail with EIO (--rate: a share of them, e.g. 1%)
  --full                   the volumes' file systems are filled: writes needing a block fail
                           with ENOSPC, as on a disk that filled up
  --stall D                every IO waits until D from now (a disk that stops answering)
  --slow F                 every IO takes F times as long
  --lose-unsynced          armed for the node's next kill or crash: its disks lose power then,
                           and every write they had not flushed is gone (as a power cut loses
                           what a disk's cache and the kernel still held)`,
	MinArgs: 1, MaxArgs: 1, ArgsWhat: "one node",
	Parse: func(fs *pflag.FlagSet) func([]string) (Fault, error) {
		var f Disk
		fs.StringSliceVar(&f.EIO, "eio", nil, "IOs that fail with EIO: read, write, fsync")
		fs.StringVar(&f.Share, "rate", "", "the share of those IOs that fail (e.g. 1% or 0.01; default all)")
		fs.BoolVar(&f.Full, "full", false, "fill the volumes' file systems (writes fail with ENOSPC)")
		fs.DurationVar(&f.Stall, "stall", 0, "every IO waits until this long from now")
		fs.Float64Var(&f.Slow, "slow", 0, "every IO takes this many times as long")
		fs.BoolVar(&f.LoseUnsynced, "lose-unsynced", false, "at the node's next kill or crash, drop what its disks had not flushed")
		fs.StringSliceVar(&f.Volumes, "volume", nil, "only these volumes of the node (default: all)")
		return func(a []string) (Fault, error) {
			f.Node = a[0]
			return f, nil
		}
	},
}, fileKind}}

// MaxStall bounds a disk stall: a longer one is an outage, not a stall.
const MaxStall = time.Hour

// Resolve checks the fault against the plan and names every problem at
// once; it returns the volumes the fault is on.
func (f *Disk) Resolve(p *plan.Plan) ([]plan.Volume, error) {
	var problems []string
	if f.Share != "" {
		r, err := parseShare(f.Share)
		if err != nil {
			problems = append(problems, "--rate: "+err.Error())
		}
		f.Rate = r
	}
	n, ok := p.Node(f.Node)
	switch {
	case !ok:
		problems = append(problems, fmt.Sprintf("NODE: %q is not a node of lab %s (nodes: %s)", f.Node, p.Lab, strings.Join(nodeNames(p), ", ")))
	case p.Disks == nil || len(n.Volumes) == 0:
		why := "its data is on this computer's own disk"
		if p.Mode == plan.ModeSSH {
			why = "a remote host's disks are its own"
		}
		problems = append(problems, fmt.Sprintf("NODE: %s has no emulated volume (%s): give its cluster storage volumes in the spec (as preset cloud3 does)", f.Node, why))
	}
	var vols []plan.Volume
	if n != nil {
		for _, name := range f.Volumes {
			if !slices.ContainsFunc(n.Volumes, func(v plan.Volume) bool { return v.Name == name }) {
				var have []string
				for _, v := range n.Volumes {
					have = append(have, v.Name)
				}
				problems = append(problems, fmt.Sprintf("--volume: %s has no volume %q (volumes: %s)", f.Node, name, strings.Join(have, ", ")))
			}
		}
		for _, v := range n.Volumes {
			if len(f.Volumes) == 0 || slices.Contains(f.Volumes, v.Name) {
				vols = append(vols, v)
			}
		}
	}
	if len(f.EIO) == 0 && !f.Full && f.Stall == 0 && f.Slow == 0 && !f.LoseUnsynced {
		problems = append(problems, "give at least one of --eio, --full, --stall, --slow, --lose-unsynced")
	}
	if f.Rate != 0 && len(f.EIO) == 0 {
		problems = append(problems, "--rate: the share of IOs --eio fails; give --eio too")
	}
	if f.Stall < 0 || f.Stall > MaxStall {
		problems = append(problems, fmt.Sprintf("--stall: expected a duration from 1ms to %v, got %v", MaxStall, f.Stall))
	}
	problems = append(problems, disk.Faults{EIO: f.EIO, Rate: f.Rate, Slow: f.Slow}.Check()...)
	if err := hderr.Users(problems); err != nil {
		return nil, err
	}
	return vols, nil
}

// Apply adds the fault to what a device has now.
func (f Disk) Apply(now disk.Faults, at time.Time) disk.Faults {
	for _, k := range f.EIO {
		if !slices.Contains(now.EIO, k) {
			now.EIO = append(now.EIO, k)
		}
	}
	if len(f.EIO) > 0 {
		now.Rate = f.Rate
	}
	if f.Stall > 0 {
		now.StallUntil = at.Add(f.Stall)
	}
	if f.Slow > 0 {
		now.Slow = f.Slow
	}
	now.LoseUnsynced = now.LoseUnsynced || f.LoseUnsynced
	return now
}

// String is the fault as the log and the report show it.
func (f Disk) String() string {
	var parts []string
	if len(f.EIO) > 0 {
		parts = append(parts, EIOLabel(f.EIO, f.Rate))
	}
	if f.Full {
		parts = append(parts, "full")
	}
	if f.Stall > 0 {
		parts = append(parts, "stall "+f.Stall.String())
	}
	if f.Slow > 0 {
		parts = append(parts, fmt.Sprintf("slow ×%g", f.Slow))
	}
	if f.LoseUnsynced {
		parts = append(parts, "lose-unsynced")
	}
	s := strings.Join(parts, ", ")
	if len(f.Volumes) > 0 {
		s += " on " + strings.Join(f.Volumes, ",")
	}
	return s
}

func nodeNames(p *plan.Plan) []string {
	var out []string
	for _, n := range p.Nodes {
		out = append(out, n.Name)
	}
	return out
}

// parseShare reads a share as a percentage ("1%") or a fraction ("0.01").
func parseShare(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil {
		return 0, fmt.Errorf("expected a share such as 1%% or 0.01, got %q", s)
	}
	if strings.HasSuffix(s, "%") {
		v /= 100
	}
	if v <= 0 || v > 1 {
		return 0, fmt.Errorf("expected a share above 0 and at most 100%%, got %q", s)
	}
	return v, nil
}

// EIOLabel is how IO errors on a disk are shown: "eio fsync", "eio read,write 1%".
func EIOLabel(kinds []string, rate float64) string {
	s := "eio " + strings.Join(kinds, ",")
	if rate > 0 && rate < 1 {
		s += fmt.Sprintf(" %g%%", rate*100)
	}
	return s
}

// Inject makes the node's emulated volumes fail: the disk daemon takes
// the IO faults at once, a full volume has its free space taken, and
// lose-unsynced is armed for the node's next kill or crash.
func (f Disk) Inject(ctx context.Context, l Lab) error {
	vols, err := f.Resolve(l.Plan())
	if err != nil {
		return err
	}
	if dry, err := disksReady(ctx, l); dry || err != nil {
		return err
	}
	at := time.Now().UTC()
	p := l.Plan()
	now, err := disk.ReadFaults(p)
	if err != nil {
		return err
	}
	set := map[string]disk.Faults{}
	for _, v := range vols {
		set[v.Device] = f.Apply(now[v.Device].Faults, at)
	}
	if err := disk.SetFaults(p, set); err != nil {
		return err
	}
	if f.Full {
		for _, v := range vols {
			n, err := disk.Fill(v)
			if err != nil {
				return fmt.Errorf("%s %s volume: %w", f.Node, v.Name, err)
			}
			l.Logf("%s: %s volume full (%s taken)", f.Node, v.Name, spec.FormatSize(n))
		}
	}
	l.Logf("%s: disk fault %s", f.Node, f)
	return l.Record(fault.Record{Fault: fault.Disk, Targets: []string{f.Node}, Value: f.String(), At: at})
}

// disksReady says whether a disk or file fault, checked, stops here: the
// disk daemon does not serve the lab's volumes (an error), or the run is
// dry.
func disksReady(ctx context.Context, l Lab) (dry bool, err error) {
	if why := l.DisksLost(); why != "" {
		return false, fmt.Errorf("%s: `hadrill start --all` serves them again", why)
	}
	return fault.IsDry(ctx), nil
}

// powerCuts takes down, as a power cut would, the volumes of the nodes
// named whose disks were armed with lose-unsynced (their servers already
// dead): what they had not flushed is gone. It returns the nodes cut.
func powerCuts(ctx context.Context, l Lab, names []string) ([]string, error) {
	p := l.Plan()
	if p.Disks == nil || l.DisksLost() != "" {
		return nil, nil
	}
	now, err := disk.ReadFaults(p)
	if err != nil {
		return nil, err
	}
	var cut []string
	var errs []error
	for _, name := range names {
		n, ok := p.Node(name)
		if !ok || !slices.ContainsFunc(n.Volumes, func(v plan.Volume) bool { return now[v.Device].LoseUnsynced }) {
			continue
		}
		if err := disk.PowerOff(ctx, p, n); err != nil {
			errs = append(errs, fmt.Errorf("%s: power cut of its disks: %w", name, err))
			continue
		}
		l.Logf("%s: its disks lost power: what they had not flushed is gone", name)
		cut = append(cut, name)
	}
	return cut, errors.Join(errs...)
}

// healDisks clears every disk fault: the daemon's faults (flipped bits
// read true again; a write dropped stays lost, and is said), cut files
// given their tails back, full volumes' space given back, and a volume
// whose file system stopped on an IO error (ext4 read-only, XFS shut
// down) unmounted, its node's server stopped, so
// that the start that follows mounts it again (its journal replayed) and
// starts the server on it.
func healDisks(ctx context.Context, l Lab) error {
	p := l.Plan()
	if p.Disks == nil || l.DisksLost() != "" {
		return nil
	}
	if err := disk.PowerOn(ctx, p); err != nil { // a disk without power is given it back only once unmounted
		return err
	}
	if now, err := disk.ReadFaults(p); err == nil {
		for _, nv := range p.AllVolumes() {
			for _, d := range now[nv.Volume.Device].Drops {
				if !d.Hit.IsZero() {
					l.Logf("%s: the write of %s dropped at %s stays so: heal does not bring it back", nv.Node.Name, d.What, d.Hit.UTC().Format("15:04:05"))
				}
			}
		}
	}
	clearAll := map[string]disk.Faults{}
	for _, nv := range p.AllVolumes() {
		clearAll[nv.Volume.Device] = disk.Faults{}
	}
	if err := disk.SetFaults(p, clearAll); err != nil {
		return err
	}
	said, err := disk.Uncut(p) // cut files given their tails back, on their volumes still mounted
	for _, s := range said {
		l.Logf("%s", s)
	}
	errs := []error{err}
	for i := range p.Nodes {
		n := &p.Nodes[i]
		var broken []string
		for _, v := range n.Volumes {
			if disk.Filled(v) > 0 {
				errs = append(errs, disk.Unfill(v))
				l.Logf("%s: %s volume has its space back", n.Name, v.Name)
			}
			if err := disk.Writable(v); err != nil {
				broken = append(broken, fmt.Sprintf("%s (%v)", v.Name, err))
			}
		}
		if len(broken) == 0 {
			continue
		}
		l.Logf("%s: file system stopped after an IO error on %s: the server stopped, the volumes mounted again", n.Name, strings.Join(broken, ", "))
		if alive(l, n) {
			errs = append(errs, l.Host(n.Host).Kill(ctx, server.Daemon(n)))
		}
		for _, v := range n.Volumes {
			errs = append(errs, disk.Unmount(ctx, p, v))
		}
	}
	return errors.Join(errs...)
}

// DiskFaults are the disk and file faults in force on a node's volumes
// (volume → what), as the daemon reports them (now) with the files cut
// and not given back (cuts), none for none.
func DiskFaults(n *plan.Node, now map[string]disk.FaultStatus, cuts []disk.Cut) map[string]string {
	out := map[string]string{}
	for _, v := range n.Volumes {
		var parts []string
		f := now[v.Device]
		if len(f.EIO) > 0 {
			parts = append(parts, EIOLabel(f.EIO, f.Rate))
		}
		if disk.Filled(v) > 0 {
			parts = append(parts, "full")
		}
		if left := time.Until(f.StallUntil); left > 0 {
			parts = append(parts, "stalled "+left.Round(time.Second).String()+" more")
		}
		if f.Slow > 1 {
			parts = append(parts, fmt.Sprintf("slow ×%g", f.Slow))
		}
		switch {
		case f.PowerCut:
			parts = append(parts, "without power until its volume is unmounted")
		case f.LoseUnsynced:
			parts = append(parts, fmt.Sprintf("lose-unsynced armed (%s unflushed)", spec.FormatSize(f.UnsyncedBytes)))
		}
		parts = append(parts, fileFaults(f)...)
		for _, c := range cuts {
			if c.Node == n.Name && v.Holds(c.Path) {
				parts = append(parts, fmt.Sprintf("%s cut from %d to %d bytes (heal gives them back)", c.File, c.From, c.To))
			}
		}
		if len(parts) > 0 {
			out[v.Name] = strings.Join(parts, ", ")
		}
	}
	return out
}

// alive says whether a node's server runs.
func alive(l Lab, n *plan.Node) bool {
	p, _ := l.Servers().Process(n)
	return p.Pid != 0
}
