package workload

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
)

// DatasetFit says why a dataset of bytes a node cannot be loaded into a
// lab ("" when it can): every database node keeps a copy; a node whose
// datadir is on an emulated volume has that volume's size, the others
// share free (the bytes free where the lab's files are). Remote hosts are
// not judged (their disks are theirs). what names the flag and the
// dataset ("--warehouses: 500 warehouses").
func DatasetFit(p *plan.Plan, what string, bytes, free int64) string {
	if p.Mode == plan.ModeSSH {
		return ""
	}
	var shared int
	var over []string
	for _, n := range p.Nodes {
		v, ok := datadirVolume(n)
		if !ok {
			shared++
			continue
		}
		size, err := spec.ParseSize(v.Class.Size)
		if err != nil {
			continue
		}
		if size *= int64(len(v.Disks)); bytes > size {
			over = append(over, fmt.Sprintf("%s's datadir volume %s holds %s", n.Name, v.Name, spec.FormatSize(size)))
		}
	}
	switch {
	case len(over) > 0:
		return fmt.Sprintf("%s are about %s a node, more than %s", what, spec.FormatSize(bytes), strings.Join(over, ", "))
	case shared > 0 && int64(shared)*bytes > free:
		return fmt.Sprintf("%s are about %s a node, %s for the lab's %d nodes on this computer's disk, which has %s free",
			what, spec.FormatSize(bytes), spec.FormatSize(int64(shared)*bytes), shared, spec.FormatSize(free))
	}
	return ""
}

// datadirVolume is the emulated volume a node's datadir is on.
func datadirVolume(n plan.Node) (plan.Volume, bool) {
	for _, v := range n.Volumes {
		if rel, err := filepath.Rel(v.Mount, n.DataDir); err == nil && !strings.HasPrefix(rel, "..") {
			return v, true
		}
	}
	return plan.Volume{}, false
}
