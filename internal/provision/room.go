package provision

import (
	"fmt"
	"io"
	"strings"

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

// CheckMemory refuses a node whose buffer pool is larger than this
// computer's memory (an override such as innodb_buffer_pool_size: 999T):
// InnoDB would fail to allocate it at start, or the kernel end the server
// once it fills it. A machine's own smaller memory is the lab's to try (its
// limit kills the server, which the run reports).
func CheckMemory(p *plan.Plan, memory int64) error {
	var problems []string
	for ci, c := range p.Clusters {
		var over []string
		pool := int64(0)
		for _, name := range c.Nodes {
			if n, ok := p.Node(name); ok && memory > 0 && n.BufferPool() > memory {
				over, pool = append(over, name), n.BufferPool()
			}
		}
		if len(over) > 0 {
			problems = append(problems, fmt.Sprintf("clusters[%d].config.innodb_buffer_pool_size: %s for %s, more than this computer's memory (%s): the server could not allocate it, or would be killed once it filled it",
				ci, spec.FormatSize(pool), strings.Join(over, ", "), spec.FormatSize(memory)))
		}
	}
	return hderr.Users(problems)
}
