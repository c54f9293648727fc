package lab

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/infra/disk"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/server"
	"github.com/hadrill/hadrill/internal/spec"
)

// DiskFault makes a node's emulated volumes fail (see fault.DiskFault):
// the disk daemon takes the IO faults at once, a full volume has its free
// space taken, and lose-unsynced is armed for the node's next kill or
// crash.
func (l *Lab) DiskFault(ctx context.Context, f fault.DiskFault) error {
	vols, err := f.Resolve(l.p)
	if err != nil {
		return err
	}
	if why := l.disksLost(); why != "" {
		return fmt.Errorf("%s: `hadrill start --all` serves them again", why)
	}
	if fault.IsDry(ctx) {
		return nil
	}
	at := time.Now().UTC()
	now, err := disk.ReadFaults(l.p)
	if err != nil {
		return err
	}
	set := map[string]disk.Faults{}
	for _, v := range vols {
		set[v.Device] = f.Apply(now[v.Device].Faults, at)
	}
	if err := disk.SetFaults(l.p, set); err != nil {
		return err
	}
	if f.Full {
		for _, v := range vols {
			n, err := disk.Fill(v)
			if err != nil {
				return fmt.Errorf("%s %s volume: %w", f.Node, v.Name, err)
			}
			l.logf("%s: %s volume full (%s taken)", f.Node, v.Name, spec.FormatSize(n))
		}
	}
	l.logf("%s: disk fault %s", f.Node, f)
	return l.RecordFault(fault.Record{Fault: fault.Disk, Targets: []string{f.Node}, Value: f.String(), At: at})
}

// powerCuts takes down, as a power cut would, the volumes of the nodes
// named whose disks were armed with lose-unsynced (their servers already
// dead): what they had not flushed is gone. It returns the nodes cut.
func (l *Lab) powerCuts(ctx context.Context, names []string) ([]string, error) {
	if l.p.Disks == nil || l.disksLost() != "" {
		return nil, nil
	}
	now, err := disk.ReadFaults(l.p)
	if err != nil {
		return nil, err
	}
	var cut []string
	var errs []error
	for _, name := range names {
		n, ok := l.p.Node(name)
		if !ok || !slices.ContainsFunc(n.Volumes, func(v plan.Volume) bool { return now[v.Device].LoseUnsynced }) {
			continue
		}
		if err := disk.PowerOff(ctx, l.p, n); err != nil {
			errs = append(errs, fmt.Errorf("%s: power cut of its disks: %w", name, err))
			continue
		}
		l.logf("%s: its disks lost power: what they had not flushed is gone", name)
		cut = append(cut, name)
	}
	return cut, errors.Join(errs...)
}

// healDisks clears every disk fault: the daemon's faults, full volumes'
// space given back, and a volume whose file system stopped on an IO error
// (ext4 read-only, XFS shut down) unmounted, its node's server stopped, so
// that the start that follows mounts it again (its journal replayed) and
// starts the server on it.
func (l *Lab) healDisks(ctx context.Context) error {
	if l.p.Disks == nil || l.disksLost() != "" {
		return nil
	}
	clearAll := map[string]disk.Faults{}
	for _, nv := range l.p.AllVolumes() {
		clearAll[nv.Volume.Device] = disk.Faults{}
	}
	if err := disk.SetFaults(l.p, clearAll); err != nil {
		return err
	}
	var errs []error
	for _, n := range l.Nodes(nil) {
		var broken []string
		for _, v := range n.Volumes {
			if disk.Filled(v) > 0 {
				errs = append(errs, disk.Unfill(v))
				l.logf("%s: %s volume has its space back", n.Name, v.Name)
			}
			if err := disk.Writable(v); err != nil {
				broken = append(broken, fmt.Sprintf("%s (%v)", v.Name, err))
			}
		}
		if len(broken) == 0 {
			continue
		}
		l.logf("%s: file system stopped after an IO error on %s: the server stopped, the volumes mounted again", n.Name, strings.Join(broken, ", "))
		if l.alive(n) {
			errs = append(errs, l.Prov.Host(n.Host).Kill(ctx, server.Daemon(n)))
		}
		for _, v := range n.Volumes {
			errs = append(errs, disk.Unmount(ctx, l.p, v))
		}
	}
	return errors.Join(errs...)
}

// DiskFaults are the disk faults in force on a node's volumes (volume →
// what), "" for none.
func (l *Lab) DiskFaults(n *plan.Node, now map[string]disk.FaultStatus) map[string]string {
	out := map[string]string{}
	for _, v := range n.Volumes {
		var parts []string
		f := now[v.Device]
		if len(f.EIO) > 0 {
			parts = append(parts, fault.EIOLabel(f.EIO, f.Rate))
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
		if f.LoseUnsynced {
			parts = append(parts, fmt.Sprintf("lose-unsynced armed (%s unflushed)", spec.FormatSize(f.UnsyncedBytes)))
		}
		if len(parts) > 0 {
			out[v.Name] = strings.Join(parts, ", ")
		}
	}
	return out
}

// stoppedBecause reads why a server that is down stopped on its own, from
// the end of its error log ("" when it said nothing: a kill, a clean stop).
func (l *Lab) stoppedBecause(ctx context.Context, n *plan.Node) string {
	b, err := l.Prov.Host(n.Host).ReadFile(ctx, n.LogFile)
	if err != nil {
		return ""
	}
	if len(b) > 256<<10 {
		b = b[len(b)-256<<10:]
	}
	return mariadb.StoppedBecause(string(b))
}
