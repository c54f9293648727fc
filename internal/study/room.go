package study

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/facts"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/infra/disk"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/provision"
	"github.com/hadrill/hadrill/internal/spec"
	"github.com/hadrill/hadrill/internal/words"
)

// What a sysbench row takes, measured here (sysbench 1.0.20's oltp
// tables on MariaDB 10.11, 200,000 rows a table): 250 bytes in InnoDB's
// pages (data and index) and 315 in the table's file; in the binary log
// (row format, full images), 393: a file of seed000-openlife's full-scale
// load (10 tables of 2,000,000 rows, 2026-12-01) held 43,758 rows in
// 17.2 MB (235, measured before on 200,000-row tables, filled the 8G
// volume of that study's binary logs unforeseen).
const (
	rowMemory = 250
	rowFile   = 315
	rowBinlog = 393
)

// need is what a study's labs take on this computer at once: memory (each
// node's buffer pool filled with the data set, or the data set when it is
// smaller, and a server's own), and the files of the data set.
type need struct {
	labs, nodes     int
	data            dataset // each node's
	memory, files   int64
	memoryAvailable int64
	freeDisk        int64
	maxMemory       int64     // --max-memory (0: 90 % of what is available)
	each            []labNeed // each lab's, in the order of its first variant
}

// labNeed is what one lab takes: the variants it serves (variants with
// the same set-up share it), its nodes, memory and files.
type labNeed struct {
	variants      []string
	nodes         int
	memory, files int64
}

// serverMemory is what a server takes besides its buffer pool (its log
// buffer, caches, threads), a round figure.
const serverMemory = 256 << 20

// checkRoom refuses, before any lab is made, a study whose labs would not
// fit this computer at once (labs on remote hosts run one at a time, on
// machines of their own): the memory they would use once their data sets
// are loaded, and their files.
func (p *placement) checkRoom(sc Scale) error {
	p.groups = [][]string{p.res.Variants}
	n, err := p.room(sc)
	if err != nil || p.remote {
		return err
	}
	groups, err := n.groups(p.s.Name, p.o.Scale, pairsOf(p.s))
	if err != nil {
		return err
	}
	if len(groups) > 1 && p.o.Keep {
		return hderr.User("--keep: at %s scale study %s's labs take turns in %d groups (this computer holds no more at once), so only the last group's would be left up; leave out --keep, or run fewer --variants",
			p.o.Scale, p.s.Name, len(groups))
	}
	for _, name := range p.res.Variants { // a server outside any lab takes no room: with the first group
		if !slices.ContainsFunc(groups, func(g []string) bool { return slices.Contains(g, name) }) {
			groups[0] = append(groups[0], name)
		}
	}
	p.groups = groups
	if len(groups) > 1 {
		p.res.Groups = groups
	}
	return nil
}

// room adds up what the study's labs need on this computer at once.
func (p *placement) room(sc Scale) (need, error) {
	n := need{data: p.dataset(sc), memoryAvailable: facts.MemAvailable(), maxMemory: p.o.MaxMemory}
	if p.remote {
		return n, nil
	}
	seen := map[string]bool{}
	var tooFull []string
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
		var ln labNeed
		for _, other := range p.res.Variants {
			if p.setup[other] == p.setup[name] {
				ln.variants = append(ln.variants, other)
			}
		}
		binlog := map[string]bool{}
		for _, c := range pl.Clusters {
			binlog[c.Name] = !c.NoBinlog
		}
		var full []string
		for i := range pl.Nodes {
			full = append(full, volumesOver(&pl.Nodes[i], n.data, binlog[pl.Nodes[i].Cluster])...)
		}
		if len(full) > 0 { // every variant's, at once
			tooFull = append(tooFull, fmt.Sprintf("--scale %s: study %s's variant %s: %s. Give the volume more disks or larger ones (a disk class's size), or run --scale quick",
				p.o.Scale, p.s.Name, name, words.And(full)))
			continue
		}
		for _, nd := range pl.Nodes {
			ln.nodes++
			ln.memory += min(nd.BufferPool(), n.data.pages) + serverMemory
			if pl.Disks == nil { // an emulated disk's image is checked against its own size when the lab comes up
				ln.files += n.data.files + provision.NodeRoom
				if binlog[nd.Cluster] {
					ln.files += n.data.binlog
				}
			}
		}
		n.nodes += ln.nodes
		n.memory += ln.memory
		n.files += ln.files
		n.each = append(n.each, ln)
	}
	if len(tooFull) > 0 {
		return n, hderr.Users(tooFull)
	}
	free, err := disk.Free(p.o.Home)
	if err != nil {
		return n, err
	}
	n.freeDisk = free
	return n, nil
}

// volumesOver says which of a node's emulated volumes the data set would
// fill past 90 % of its size (an emulated disk is as large as its class
// says, whatever this computer has free): its table files where the
// datadir is, its binary log (when it keeps one) and its redo log where
// they are. A server whose volume fills waits for space, and a benchmark
// on it never ends. Pure.
func volumesOver(nd *plan.Node, data dataset, binlog bool) []string {
	if len(nd.Volumes) == 0 || data.pages == 0 {
		return nil
	}
	held, parts := map[string]int64{}, map[string][]string{}
	put := func(dir string, size int64, what string) {
		for _, v := range nd.Volumes {
			if size > 0 && v.Holds(dir) {
				held[v.Name] += size
				parts[v.Name] = append(parts[v.Name], fmt.Sprintf("%s %s", what, spec.FormatSize(size)))
				return
			}
		}
	}
	put(nd.DataDir, data.files, "the tables' files")
	if binlog {
		put(nd.Binlogs(), data.binlog, "the binary log of loading them")
	}
	redo := nd.RedoDir
	if redo == "" {
		redo = nd.DataDir
	}
	put(redo, nd.RedoLog(), "the redo log")
	var out []string
	for _, v := range nd.Volumes {
		size := v.Size()
		if held[v.Name] > size*9/10 {
			out = append(out, fmt.Sprintf("%s's volume %s (%s, %s) would hold about %s of %s (%s), more than 90 %% of it",
				nd.Name, v.Name, v.String(), spec.FormatSize(size), spec.FormatSize(held[v.Name]), data.what, strings.Join(parts[v.Name], ", ")))
		}
	}
	return out
}

// dataset is what each node holds of the data sets the study's steps
// load at a scale (the largest: the steps share the lab).
func (p *placement) dataset(sc Scale) dataset {
	var out dataset
	for _, st := range p.s.Steps {
		if k := kindOf(st); k != nil && k.data != nil {
			if d := k.data(sc); d.pages > out.pages {
				out = d
			}
		}
	}
	return out
}

// dataset is a step's data on each node: in InnoDB's pages, in its files,
// in the binary log, and in words.
type dataset struct {
	pages, files, binlog int64
	what                 string
}

// rowsDataset is sysbench's tables of rows.
func rowsDataset(sc Scale) dataset {
	rows := int64(sc.Tables) * int64(sc.TableSize)
	if rows <= 0 {
		return dataset{}
	}
	return dataset{pages: rows * rowMemory, files: rows * rowFile, binlog: rows * rowBinlog,
		what: fmt.Sprintf("%s of %s rows", words.Count(sc.Tables, "table"), words.Thousands(int64(sc.TableSize)))}
}

// over says what of this computer labs needing memory and files would
// exceed (nil when they fit: at most 90 % of the memory available and of
// the free disk).
func (n need) over(memory, files int64) []string {
	var over []string
	limit, where := n.memoryAvailable*9/10, fmt.Sprintf("where %s is available", spec.FormatSize(n.memoryAvailable))
	if n.maxMemory > 0 && (n.memoryAvailable <= 0 || n.maxMemory < limit) {
		limit, where = n.maxMemory, fmt.Sprintf("where --max-memory allows %s", spec.FormatSize(n.maxMemory))
	}
	if limit > 0 && memory > limit {
		over = append(over, fmt.Sprintf("about %s of memory once the data is loaded, %s", spec.FormatSize(memory), where))
	}
	if files > n.freeDisk*9/10 {
		over = append(over, fmt.Sprintf("about %s of files, where %s is free", spec.FormatSize(files), spec.FormatSize(n.freeDisk)))
	}
	return over
}

// problem says why the labs would not fit at once (nil when they would).
func (n need) problem(study, scale string) error {
	over := n.over(n.memory, n.files)
	if len(over) == 0 {
		return nil
	}
	return hderr.User("--scale %s: study %s's labs (%s) would need %s: run --scale quick, fewer --variants at a time, or the labs on machines of their own (--inventory)",
		scale, study, n.what(), words.And(over))
}

// maxGroupLabs bounds the labs whose every split into groups is tried
// (Bell(8) = 4,140 splits); more are split in order, first fit.
const maxGroupLabs = 8

// groups splits the labs, when they do not fit this computer at once,
// into groups that each do, to run one group after another: the fewest
// groups, then the fewest compared pairs of variants (pairs: a check's
// variant and the one it is compared with) split across groups, whose
// rounds then run apart rather than interleaved. Labs that fit at once
// are one group; a lab that does not fit even alone is refused, with its
// figures and what the labs need at once. Pure.
func (n need) groups(study, scale string, pairs [][2]string) ([][]string, error) {
	if n.problem(study, scale) == nil {
		var all []string
		for _, ln := range n.each {
			all = append(all, ln.variants...)
		}
		return [][]string{all}, nil
	}
	var alone []string
	for _, ln := range n.each {
		if over := n.over(ln.memory, ln.files); len(over) > 0 {
			alone = append(alone, fmt.Sprintf("the lab of %s alone would need %s", words.And(ln.variants), words.And(over)))
		}
	}
	if len(alone) > 0 {
		return nil, hderr.User("%v; %s, so no group of labs at a time fits either", n.problem(study, scale), strings.Join(alone, "; "))
	}
	fits := func(block []int) bool {
		var m, f int64
		for _, i := range block {
			m, f = m+n.each[i].memory, f+n.each[i].files
		}
		return len(n.over(m, f)) == 0
	}
	names := func(blocks [][]int) [][]string {
		var out [][]string
		for _, block := range blocks {
			var vs []string
			for _, i := range block {
				vs = append(vs, n.each[i].variants...)
			}
			out = append(out, vs)
		}
		return out
	}
	var best [][]int
	bestApart := 0
	consider := func(blocks [][]int) {
		for _, b := range blocks {
			if !fits(b) {
				return
			}
		}
		if apart := len(apartPairs(names(blocks), pairs)); best == nil || len(blocks) < len(best) || (len(blocks) == len(best) && apart < bestApart) {
			best, bestApart = cloneBlocks(blocks), apart
		}
	}
	if len(n.each) <= maxGroupLabs {
		var walk func(i int, blocks [][]int)
		walk = func(i int, blocks [][]int) { // every set partition, each lab into an earlier block or a new one
			if i == len(n.each) {
				consider(blocks)
				return
			}
			for b := range blocks {
				blocks[b] = append(blocks[b], i)
				walk(i+1, blocks)
				blocks[b] = blocks[b][:len(blocks[b])-1]
			}
			walk(i+1, append(blocks, []int{i}))
		}
		walk(0, nil)
	} else {
		var blocks [][]int
		for i := range n.each {
			placed := false
			for b := range blocks {
				if fits(append(slices.Clone(blocks[b]), i)) {
					blocks[b], placed = append(blocks[b], i), true
					break
				}
			}
			if !placed {
				blocks = append(blocks, []int{i})
			}
		}
		consider(blocks)
	}
	return names(best), nil
}

// groupFigures says what each group of labs needs ("group 1 about 7.5G of
// memory and 60G of files; group 2 …").
func (n need) groupFigures(groups [][]string) string {
	var said []string
	for g, names := range groups {
		var m, f int64
		for _, ln := range n.each {
			if slices.Contains(names, ln.variants[0]) {
				m, f = m+ln.memory, f+ln.files
			}
		}
		said = append(said, fmt.Sprintf("group %d about %s of memory and %s of files", g+1, spec.FormatSize(m), spec.FormatSize(f)))
	}
	return strings.Join(said, "; ")
}

// apartPairs are the compared pairs whose variants are in different
// groups (a variant in none is not counted).
func apartPairs(groups [][]string, pairs [][2]string) [][2]string {
	in := map[string]int{}
	for g, names := range groups {
		for _, v := range names {
			in[v] = g
		}
	}
	var apart [][2]string
	for _, pr := range pairs {
		a, okA := in[pr[0]]
		b, okB := in[pr[1]]
		if okA && okB && a != b {
			apart = append(apart, pr)
		}
	}
	return apart
}

func cloneBlocks(blocks [][]int) [][]int {
	out := make([][]int, len(blocks))
	for i, b := range blocks {
		out[i] = slices.Clone(b)
	}
	return out
}

// pairsOf are the pairs of variants a study's checks compare.
func pairsOf(s *Study) [][2]string {
	var out [][2]string
	for _, e := range s.Expect {
		if e.Than != "" {
			out = append(out, [2]string{e.Variant, e.Than})
		}
	}
	return out
}

// groupsSaid says labs run in groups: which, one after another, and the
// compared pairs split across them ("" for one group).
func groupsSaid(groups [][]string, pairs [][2]string, title func(string) string) string {
	if len(groups) < 2 {
		return ""
	}
	var said []string
	for _, names := range groups {
		var titles []string
		for _, v := range names {
			titles = append(titles, title(v))
		}
		said = append(said, words.And(titles))
	}
	out := fmt.Sprintf("the labs in %d groups, one after another, as this computer holds no more at once: %s", len(groups), strings.Join(said, "; then "))
	var apart []string
	for _, pr := range apartPairs(groups, pairs) {
		apart = append(apart, title(pr[0])+" ÷ "+title(pr[1]))
	}
	if len(apart) > 0 {
		out += fmt.Sprintf(" (%s compare%s rounds run apart, not interleaved)", words.And(apart), map[bool]string{true: "s", false: ""}[len(apart) == 1])
	}
	return out
}

// what says the labs: how many, their nodes and each node's data.
func (n need) what() string {
	what := fmt.Sprintf("%s at once, %s", words.Count(n.labs, "lab"), words.Count(n.nodes, "node"))
	if n.data.what != "" {
		what += fmt.Sprintf(", each node holding %s (about %s in InnoDB's pages)", n.data.what, spec.FormatSize(n.data.pages))
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
	avail := spec.FormatSize(n.memoryAvailable) + " available"
	if n.maxMemory > 0 {
		avail += ", --max-memory " + spec.FormatSize(n.maxMemory)
	}
	return fmt.Sprintf("%s: about %s of memory once the data is loaded (%s), %s; emulated disks' images are checked against their own sizes when a lab comes up)",
		what, spec.FormatSize(n.memory), avail, files)
}

// Least is the least time a study's rounds take at a scale, from what the
// scale fixes (each sysbench point's warm-up and measured time, each
// disk test's time), for every variant and round; the rest (preparing
// data, commits, drills, labs coming up) comes on top.
func Least(s *Study, sc Scale, variants int) time.Duration {
	return leastRound(s, sc) * time.Duration(variants*sc.Runs)
}

// leastRound is what the scale fixes of one variant's round.
func leastRound(s *Study, sc Scale) time.Duration {
	var per time.Duration
	for _, st := range s.Steps {
		if k := kindOf(st); k != nil && k.least != nil {
			per += k.least(st, sc)
		}
	}
	return per
}

// leastSaid says the least time the rounds a run has left take: every
// variant's rounds of the scale, or, resuming, those the stopped run did
// not keep (to its design's rounds once it had one).
func leastSaid(s *Study, sc Scale, variants []string, resume *Stored, groups [][]string) string {
	per := leastRound(s, sc)
	if resume == nil {
		if per == 0 {
			return "its steps have no time the scale fixes (commits, rows, drills: they take what they take)"
		}
		return fmt.Sprintf("its rounds take at least %s (%s × %s of the scale's measured and warm-up time; preparing data, commits, drills and labs coming up come on top)",
			(per * time.Duration(len(variants)*sc.Runs)).Round(time.Second), words.Count(len(variants), "variant"), words.Count(sc.Runs, "round"))
	}
	rounds := sc.Runs
	if d := resume.Result.Design; d != nil {
		rounds = d.Rounds
	}
	kept := keptRounds(resume.Result, groups)
	var left int
	var said []string
	for _, v := range variants {
		left += max(rounds-kept[v], 0)
		said = append(said, fmt.Sprintf("%s %d", v, kept[v]))
	}
	out := fmt.Sprintf("run %s keeps %s of %d (%s); %s left", resume.ID, words.Count(len(variants)*rounds-left, "variant round"),
		len(variants)*rounds, words.And(said), words.Count(left, "variant round"))
	if per == 0 {
		return out + ", whose steps have no time the scale fixes"
	}
	return fmt.Sprintf("%s, taking at least %s of the scale's measured and warm-up time (making the data anew, commits, drills and labs coming up come on top)",
		out, (per * time.Duration(left)).Round(time.Second))
}

// DryRun checks a study run as Run would, makes nothing, and says what
// its labs would need against this computer and the least time its rounds
// take; a study that would not fit is refused as Run refuses it.
func DryRun(s *Study, o Options) (string, error) {
	res, pl, err := prepare(s, o)
	if err != nil {
		return "", err
	}
	sc, variants := res.Protocol, res.Variants
	if pl.remote {
		return fmt.Sprintf("study %s at %s scale: its labs run one at a time on the machines of %s; %s.", s.Name, o.Scale, o.Inventory.File,
			leastSaid(s, sc, variants, o.Resume, [][]string{variants})), nil
	}
	n, err := pl.room(sc)
	if err != nil {
		return "", err
	}
	groups, err := n.groups(s.Name, o.Scale, pairsOf(s))
	if err != nil {
		return "", err
	}
	least := leastSaid(s, sc, variants, o.Resume, groups)
	if len(groups) > 1 {
		if o.Keep {
			return "", hderr.User("--keep: at %s scale study %s's labs take turns in %d groups (this computer holds no more at once), so only the last group's would be left up; leave out --keep, or run fewer --variants", o.Scale, s.Name, len(groups))
		}
		title := func(v string) string { return variant(s, v).Title() }
		return fmt.Sprintf("study %s at %s scale does not fit this computer at once (%s); it runs %s: %s; %s.", s.Name, o.Scale, n,
			groupsSaid(groups, pairsOf(s), title), n.groupFigures(groups), least), nil
	}
	return fmt.Sprintf("study %s at %s scale fits this computer: %s; %s.", s.Name, o.Scale, n, least), nil
}
