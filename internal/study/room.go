package study

import (
	"fmt"
	"time"

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
	rowFile   = 315
	rowBinlog = 235
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
	n, err := p.room(sc)
	if err != nil || p.remote {
		return err
	}
	return n.problem(p.s.Name, p.o.Scale)
}

// room adds up what the study's labs need on this computer at once.
func (p *placement) room(sc Scale) (need, error) {
	n := need{rows: p.datasetRows(sc), memoryAvailable: facts.MemAvailable()}
	if p.remote {
		return n, nil
	}
	if n.rows > 0 {
		n.dataset = fmt.Sprintf("%s of %s rows", plural(sc.Tables, "table"), thousands(int64(sc.TableSize)))
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
			return n, err // said again, with its variant, when the lab comes up
		}
		n.labs++
		binlog := map[string]bool{}
		for _, c := range pl.Clusters {
			binlog[c.Name] = !c.NoBinlog
		}
		for _, nd := range pl.Nodes {
			n.nodes++
			n.memory += min(nd.BufferPool(), n.rows*rowMemory) + serverMemory
			if pl.Disks == nil { // an emulated disk's image is checked against its own size when the lab comes up
				n.files += n.rows*rowFile + provision.NodeRoom
				if binlog[nd.Cluster] {
					n.files += n.rows * rowBinlog
				}
			}
		}
	}
	free, err := disk.Free(p.o.Home)
	if err != nil {
		return n, err
	}
	n.freeDisk = free
	return n, nil
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
	return hderr.User("--scale %s: study %s's labs (%s) would need %s: run --scale quick, fewer --variants at a time, or the labs on machines of their own (--inventory)",
		scale, study, n.what(), joinAnd(over))
}

// what says the labs: how many, their nodes and each node's data.
func (n need) what() string {
	what := fmt.Sprintf("%s at once, %s", plural(n.labs, "lab"), plural(n.nodes, "node"))
	if n.dataset != "" {
		what += fmt.Sprintf(", each node holding %s (about %s in InnoDB's pages)", n.dataset, spec.FormatSize(n.rows*rowMemory))
	}
	return what
}

// String says what the labs need against what this computer has.
func (n need) String() string {
	what := n.what()
	files := fmt.Sprintf("about %s of files (%s free", spec.FormatSize(n.files), spec.FormatSize(n.freeDisk))
	if n.files == 0 {
		files = fmt.Sprintf("its files on emulated disks (%s free", spec.FormatSize(n.freeDisk))
	}
	return fmt.Sprintf("%s: about %s of memory once the data is loaded (%s available), %s; emulated disks' images are checked against their own sizes when a lab comes up)",
		what, spec.FormatSize(n.memory), spec.FormatSize(n.memoryAvailable), files)
}

// Least is the least time a study's rounds take at a scale, from what the
// scale fixes (each sysbench point's warm-up and measured time, each
// disk test's time), for every variant and round; the rest (preparing
// data, commits, drills, labs coming up) comes on top.
func Least(s *Study, sc Scale, variants int) time.Duration {
	var per time.Duration
	for _, st := range s.Steps {
		if k := kindOf(st); k != nil && k.least != nil {
			per += k.least(st, sc)
		}
	}
	return per * time.Duration(variants*sc.Runs)
}

// DryRun checks a study run as Run would, makes nothing, and says what
// its labs would need against this computer and the least time its rounds
// take; a study that would not fit is refused as Run refuses it.
func DryRun(s *Study, o Options) (string, error) {
	sc, variants, cerr := Choose(s, o)
	res := &Result{Study: s, Scale: o.Scale, Protocol: sc, Variants: variants, Labs: map[string]string{}}
	pl, perr := newPlacement(s, variants, o, res)
	if err := hderr.Join([]error{cerr, perr, checkDecide(sc, o)}); err != nil {
		return "", err
	}
	least := "its steps have no time the scale fixes (commits, rows, drills: they take what they take)"
	if d := Least(s, sc, len(variants)); d > 0 {
		least = fmt.Sprintf("its rounds take at least %s (%s × %s of the scale's measured and warm-up time; preparing data, commits, drills and labs coming up come on top)",
			d.Round(time.Second), plural(len(variants), "variant"), plural(sc.Runs, "round"))
	}
	if pl.remote {
		return fmt.Sprintf("study %s at %s scale: its labs run one at a time on the machines of %s; %s.", s.Name, o.Scale, o.Inventory.File, least), nil
	}
	n, err := pl.room(sc)
	if err != nil {
		return "", err
	}
	if err := n.problem(s.Name, o.Scale); err != nil {
		return "", err
	}
	return fmt.Sprintf("study %s at %s scale fits this computer: %s; %s.", s.Name, o.Scale, n, least), nil
}

// plural is a count and its noun ("1 table", "20 tables").
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return thousands(int64(n)) + " " + noun + "s"
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
