package fault

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/infra/disk"
	"github.com/hadrill/hadrill/internal/plan"
)

// DiskFault is `hadrill fault disk NODE …`: what goes wrong on a node's
// emulated volumes (all of them, or those named).
type DiskFault struct {
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

// MaxStall bounds a disk stall: a longer one is an outage, not a stall.
const MaxStall = time.Hour

// Resolve checks the fault against the plan and names every problem at
// once; it returns the volumes the fault is on.
func (f *DiskFault) Resolve(p *plan.Plan) ([]plan.Volume, error) {
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
func (f DiskFault) Apply(now disk.Faults, at time.Time) disk.Faults {
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
func (f DiskFault) String() string {
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
