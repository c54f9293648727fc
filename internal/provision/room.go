package provision

import (
	"fmt"
	"io"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/infra/disk"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
)

// NodeRoom is about what a node's files take once made: its redo log and
// Galera cache (64M each) and the system tables, with room to start.
const NodeRoom = 256 << 20

// CheckRoom refuses a lab whose nodes' files or disks' images would not fit
// the file system that holds them (bad input: nothing is made), and says
// so when the images may fill it.
func CheckRoom(p *plan.Plan, home string, log io.Writer) error {
	free, err := disk.Free(home)
	if err != nil {
		return fmt.Errorf("free space in %s: %w", home, err)
	}
	if need := int64(len(p.Nodes)+1) * NodeRoom; p.Disks == nil && free < need {
		return hderr.User("--home: %s free on the file system holding %s; a lab of %d node(s) needs about %s (each node's redo log, Galera cache and "+
			"system tables): free some space or give another --home", spec.FormatSize(free), home, len(p.Nodes), spec.FormatSize(need))
	}
	if p.Disks == nil {
		return nil
	}
	if free, err = disk.Free(p.Disks.Images); err != nil {
		return fmt.Errorf("free space for the disks' images: %w", err)
	}
	refuse, warn := disk.Room(p, free)
	if refuse != "" {
		return hderr.User("storage (the disks' sizes): %s", refuse)
	}
	if warn != "" && log != nil {
		fmt.Fprintf(log, "warning: %s\n", warn)
	}
	return nil
}
