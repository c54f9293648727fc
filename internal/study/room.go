package study

import (
	"fmt"

	"github.com/hadrill/hadrill/internal/facts"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/infra/disk"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/provision"
	"github.com/hadrill/hadrill/internal/spec"
)

// What a sysbench row takes, measured here (sysbench 1.0.20's oltp
// tables on MariaDB 10.11, 200,000 rows a table): 250 bytes in InnoDB's
// pages (data and index), 315 in the table's file, and about as much again
// in the binary log.
const (
	rowMemory = 250
	rowDisk   = 550
)

// need is what a study's labs take on this computer at once: memory (each
// node's buffer pool filled with the data set, or the data set when it is
// smaller, and a server's own), and the files of the data set.
type need struct {
	labs, nodes     int
	rows            int64  // each node's, of the sysbench data set
	dataset         string // it in words
	memory, files   int64
	memoryAvailable int64
	freeDisk        int64
}

// serverMemory is what a server takes besides its buffer pool (its log
// buffer, caches, threads), a round figure.
const serverMemory = 256 << 20

// checkRoom refuses, before any lab is made, a study whose labs would not
// fit this computer at once (labs on remote hosts run one at a time, on
// machines of their own): the memory they would use once their data sets
// are loaded, and their files.
func (p *placement) checkRoom(sc Scale) error {
	if p.remote {
		return nil
	}
	n := need{rows: p.datasetRows(sc), memoryAvailable: facts.MemAvailable()}
	if n.rows > 0 {
		n.dataset = fmt.Sprintf("%s tables of %s rows", thousands(int64(sc.Tables)), thousands(int64(sc.TableSize)))
	}
	seen := map[string]bool{}
	f := facts.Machine()
	for _, name := range p.res.Variants {
		sp := p.specs[name]
		if sp == nil || seen[p.setup[name]] {
			continue
		}
		seen[p.setup[name]] = true
		pl, err := plan.Build(sp, LabName(p.s.Name, name), p.o.Home, f)
		if err != nil {
			return err // said again, with its variant, when the lab comes up
		}
		n.labs++
		for _, nd := range pl.Nodes {
			n.nodes++
			n.memory += min(nd.BufferPool(), n.rows*rowMemory) + serverMemory
			if pl.Disks == nil { // an emulated disk's image is checked against its own size when the lab comes up
				n.files += n.rows*rowDisk + provision.NodeRoom
			}
		}
	}
	free, err := disk.Free(p.o.Home)
	if err != nil {
		return err
	}
	n.freeDisk = free
	return n.problem(p.s.Name, p.o.Scale)
}

// datasetRows is each node's sysbench data set at a scale (0 without a
// sysbench step).
func (p *placement) datasetRows(sc Scale) int64 {
	for _, st := range p.s.Steps {
		if st.Kind == "sysbench" {
			return int64(sc.Tables) * int64(sc.TableSize)
		}
	}
	return 0
}

// problem says why the labs would not fit ("" error when they would).
func (n need) problem(study, scale string) error {
	var over []string
	if n.memoryAvailable > 0 && n.memory > n.memoryAvailable*9/10 {
		over = append(over, fmt.Sprintf("about %s of memory once their data is loaded, where %s is available", spec.FormatSize(n.memory), spec.FormatSize(n.memoryAvailable)))
	}
	if n.files > n.freeDisk*9/10 {
		over = append(over, fmt.Sprintf("about %s of files, where %s is free", spec.FormatSize(n.files), spec.FormatSize(n.freeDisk)))
	}
	if len(over) == 0 {
		return nil
	}
	what := fmt.Sprintf("%d labs at once, %d nodes", n.labs, n.nodes)
	if n.dataset != "" {
		what += fmt.Sprintf(", each holding %s (about %s in InnoDB's pages)", n.dataset, spec.FormatSize(n.rows*rowMemory))
	}
	return hderr.User("--scale %s: study %s's labs (%s) would need %s: run --scale quick, fewer --variants at a time, or the labs on machines of their own (--inventory)",
		scale, study, what, joinAnd(over))
}

// thousands writes n with thousands separated ("1,000,000").
func thousands(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func joinAnd(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	return s[0] + " and " + joinAnd(s[1:])
}
