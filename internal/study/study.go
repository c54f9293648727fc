// Package study runs a published experiment as one command: a study file
// names the set-ups (variants of a base lab), the load (steps), how much of
// it to run (a scale), and what the document published (the reference).
// The runner brings every variant's lab up, interleaves the variants run
// after run, and summarises each figure with its spread, its change against
// the baseline and the published value beside it.
package study

import (
	"bytes"
	"cmp"
	"embed"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hadrill/hadrill/internal/catalog"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
	"github.com/hadrill/hadrill/internal/workload"
)

// Study is one experiment.
type Study struct {
	Name   string `yaml:"name" json:"name"`
	Title  string `yaml:"title" json:"title"`
	Source string `yaml:"source" json:"source"` // the document: who, where, when
	About  string `yaml:"about,omitempty" json:"about,omitempty"`
	// Needs says what hadrill lacks to run it ("" when it runs).
	Needs     string      `yaml:"needs,omitempty" json:"needs,omitempty"`
	Variants  []Variant   `yaml:"variants" json:"variants"`
	Steps     []Step      `yaml:"steps" json:"steps"`
	Scales    Scales      `yaml:"scales" json:"scales"`
	Reference []Reference `yaml:"reference,omitempty" json:"reference,omitempty"`
	// Expect are the document's claims as checks: bounds a run must meet
	// to reproduce it.
	Expect []Expect `yaml:"expect,omitempty" json:"expect,omitempty"`
	// Deviations are where this study's protocol or set-up differs from
	// the document's, and why (what this computer cannot do).
	Deviations []Deviation `yaml:"deviations,omitempty" json:"deviations,omitempty"`
	// Document is the document's own set-up (server, tools, warm-up,
	// runs): the run records each difference from what it ran itself.
	Document *Document `yaml:"document,omitempty" json:"document,omitempty"`
}

// Deviation is one way a study departs from the document: the setting or
// step, the document's value, the study's, and why. Scale names the one
// scale it applies to ("": both).
type Deviation struct {
	What     string `yaml:"what" json:"what"`
	Document string `yaml:"document" json:"document"`
	Here     string `yaml:"here" json:"here"`
	Why      string `yaml:"why,omitempty" json:"why,omitempty"`
	Scale    string `yaml:"scale,omitempty" json:"scale,omitempty"`
	// Recorded: the run found it itself (Recorded), against the study's
	// Document.
	Recorded bool `yaml:"-" json:"recorded,omitempty"`
}

// String is a deviation in one line.
func (d Deviation) String() string {
	s := fmt.Sprintf("%s: the document %s, here %s", d.What, d.Document, d.Here)
	if d.Scale != "" {
		s += " (" + d.Scale + " scale)"
	}
	if d.Why != "" {
		s += " — " + d.Why
	}
	if d.Recorded {
		s += " [recorded by the run]"
	}
	return s
}

// DeviationsAt are the deviations that apply at a scale.
func (s *Study) DeviationsAt(scale string) []Deviation {
	var out []Deviation
	for _, d := range s.Deviations {
		if d.Scale == "" || d.Scale == scale {
			out = append(out, d)
		}
	}
	return out
}

// Variant is one set-up: a preset, patched (a spec fragment merged into
// it: maps key by key, lists of named items by name, other values
// replaced).
type Variant struct {
	Name     string         `yaml:"name" json:"name"`
	Label    string         `yaml:"label,omitempty" json:"label,omitempty"` // how reports name it
	Preset   string         `yaml:"preset" json:"preset"`
	Patch    map[string]any `yaml:"patch,omitempty" json:"patch,omitempty"`
	Baseline bool           `yaml:"baseline,omitempty" json:"baseline,omitempty"`
	// Target is where this variant's steps send their load when a step
	// names none (default: lb); "nodes" gives sysbench the Galera nodes as
	// its own host list. Variants whose labs would be the same share one.
	Target string `yaml:"target,omitempty" json:"target,omitempty"`
	// ReadTarget sends a consistency step's read-only transactions apart
	// from its writes (bench consistency --read-target): replicas,
	// lb-balanced, or node and load balancer names.
	ReadTarget string `yaml:"read_target,omitempty" json:"read_target,omitempty"`
	// Endpoint is a server outside any lab (mysql://HOST:PORT, a managed
	// service's or your own) in place of a preset: load runs from this
	// computer with the user and password of the Credentials file.
	Endpoint    string `yaml:"endpoint,omitempty" json:"endpoint,omitempty"`
	Credentials string `yaml:"credentials,omitempty" json:"credentials,omitempty"`
	// Price is what the set-up costs an hour (default: its machines'
	// prices); sysbench throughput is then also given per unit of it.
	Price float64 `yaml:"price,omitempty" json:"price,omitempty"`
	// Hosts is the inventory whose machines the variant ran on ("": this
	// computer); NotEmulated what of its set-up was emulated here only and
	// so not there (its hosts' own machines, disks and NICs stood in).
	Hosts       string          `yaml:"-" json:"hosts,omitempty"`
	NotEmulated []spec.Emulated `yaml:"-" json:"not_emulated,omitempty"`
}

// HourlyPrice is the variant's price an hour: its own, else its lab's
// machines' (ok false: not priced).
func (v Variant) HourlyPrice() (float64, bool) {
	if v.Price > 0 || v.Endpoint != "" || v.Hosts != "" { // remote hosts are not the spec's priced machines
		return v.Price, v.Price > 0
	}
	s, err := v.Spec()
	if err != nil {
		return 0, false
	}
	return s.HourlyPrice()
}

// Step is one measurement every variant goes through, each run.
type Step struct {
	Name     string `yaml:"name" json:"name"`
	Kind     string `yaml:"kind" json:"kind"`                         // commit-latency | sysbench | bulk-replication | disk
	Target   string `yaml:"target,omitempty" json:"target,omitempty"` // lb (default) or a node
	Workload string `yaml:"workload,omitempty" json:"workload,omitempty"`
	RandType string `yaml:"rand_type,omitempty" json:"rand_type,omitempty"` // sysbench: default special, sysbench's own
	AutoInc  *bool  `yaml:"auto_inc,omitempty" json:"auto_inc,omitempty"`   // sysbench: false for client-generated ids (--auto_inc=off)
	From     string `yaml:"from,omitempty" json:"from,omitempty"`           // bulk-replication, conflict: the node written (default: the first)
	To       string `yaml:"to,omitempty" json:"to,omitempty"`               // and the node read (default: the last)
	Keys     string `yaml:"keys,omitempty" json:"keys,omitempty"`           // conflict: shared (default) or own rows
	Rows     int    `yaml:"rows,omitempty" json:"rows,omitempty"`           // conflict: rows written (default 10)
	Node     string `yaml:"node,omitempty" json:"node,omitempty"`           // disk: the node (default: the first with volumes)
	Volume   string `yaml:"volume,omitempty" json:"volume,omitempty"`       // disk: its volume (default: the first)
	Test     string `yaml:"test,omitempty" json:"test,omitempty"`           // disk: a bench disk test (default file1g)
	// TimeFactor (sysbench): the step measures the scale's time this many
	// times over (0: once), as a document that ran the same load for 5
	// and for 10 minutes (document 004's Table 1).
	TimeFactor int `yaml:"time_factor,omitempty" json:"time_factor,omitempty"`
	// IdleBefore (disk): seconds the volume is left idle before the test,
	// as a benchmark that starts after a pause (a disk's warm-up).
	IdleBefore int `yaml:"idle_before,omitempty" json:"idle_before,omitempty"`
	// slap: an auto-generated load (read, write, mixed), or a query over a
	// generated dataset (employees; its query defaults to document 001's).
	Load    string `yaml:"load,omitempty" json:"load,omitempty"`
	Dataset string `yaml:"dataset,omitempty" json:"dataset,omitempty"`
	Query   string `yaml:"query,omitempty" json:"query,omitempty"`
	Queries int    `yaml:"queries,omitempty" json:"queries,omitempty"` // slap: shared by the clients (0: each runs the query once)
	// Scenario (drill): the drill run under the step's load.
	Scenario string `yaml:"scenario,omitempty" json:"scenario,omitempty"`
	// Faults, Hold, Interval (drill chaos): the faults the schedule draws
	// from (as --faults), the longest a step holds, the longest wait after
	// a heal (default 10s and 5s, as the drill's own).
	Faults   string `yaml:"faults,omitempty" json:"faults,omitempty"`
	Hold     string `yaml:"hold,omitempty" json:"hold,omitempty"`
	Interval string `yaml:"interval,omitempty" json:"interval,omitempty"`
	// Check (tpcc): TPC-C's consistency conditions after each round's
	// runs; one that does not hold fails the step.
	Check bool   `yaml:"check,omitempty" json:"check,omitempty"`
	About string `yaml:"about,omitempty" json:"about,omitempty"`
}

// Scale is how much to run: quick fits this computer in minutes, full is
// the document's own protocol.
type Scale struct {
	Runs      int   `yaml:"runs" json:"runs"`                                 // interleaved rounds
	Count     int   `yaml:"count,omitempty" json:"count,omitempty"`           // commit-latency: INSERTs; conflict: increments per server
	Threads   []int `yaml:"threads,omitempty" json:"threads,omitempty"`       // sysbench
	Time      int   `yaml:"time,omitempty" json:"time,omitempty"`             // sysbench: seconds measured
	Warmup    int   `yaml:"warmup,omitempty" json:"warmup,omitempty"`         // sysbench: seconds before, unrecorded
	Events    int   `yaml:"events,omitempty" json:"events,omitempty"`         // sysbench: transactions a run ends after (time then caps it)
	Tables    int   `yaml:"tables,omitempty" json:"tables,omitempty"`         // sysbench dataset
	TableSize int   `yaml:"table_size,omitempty" json:"table_size,omitempty"` // rows per table
	Rows      []int `yaml:"rows,omitempty" json:"rows,omitempty"`             // bulk-replication: rows per test
	// Warehouses (tpcc): the TPC-C dataset's size (about 100 MB each).
	Warehouses int `yaml:"warehouses,omitempty" json:"warehouses,omitempty"`
	// slap: client counts, iterations per count, the dataset's size.
	Concurrency []int   `yaml:"concurrency,omitempty" json:"concurrency,omitempty"`
	Iterations  int     `yaml:"iterations,omitempty" json:"iterations,omitempty"`
	DatasetSize float64 `yaml:"dataset_size,omitempty" json:"dataset_size,omitempty"`
	// Duration (drill chaos): seconds of the fault schedule a round.
	Duration int `yaml:"duration,omitempty" json:"duration,omitempty"`
}

// Scales are a study's quick and full protocols.
type Scales struct {
	Quick Scale `yaml:"quick" json:"quick"`
	Full  Scale `yaml:"full" json:"full"`
}

// Named is a scale by name.
func (s Scales) Named(name string) (Scale, bool) {
	switch name {
	case "quick":
		return s.Quick, true
	case "full":
		return s.Full, true
	}
	return Scale{}, false
}

// Reference is a figure of the document: printed (Text as printed,
// Source where), or, Inferred, one it implies but does not print (never
// drawn or labelled as published).
type Reference struct {
	Step     string  `yaml:"step" json:"step"`
	Variant  string  `yaml:"variant" json:"variant"`
	Metric   string  `yaml:"metric" json:"metric"`
	Value    float64 `yaml:"value" json:"value"`
	Text     string  `yaml:"text,omitempty" json:"text,omitempty"` // as printed ("108 ms")
	Source   string  `yaml:"source" json:"source"`                 // where: section, table, figure
	Inferred bool    `yaml:"inferred,omitempty" json:"inferred,omitempty"`
}

// Expect is one of the document's claims as a check: its words (Claim)
// and place (Source), and bounds on a figure's mean, or (with Than) on its
// ratio to another variant's. Inferred: the document states the claim in
// words only, so the bounds are the study's reading of them (Why says
// how). Differs names what here differs from the document and bears on
// the claim: the finding says it when the claim does not reproduce.
type Expect struct {
	Step     string   `yaml:"step" json:"step"`
	Variant  string   `yaml:"variant" json:"variant"`
	Metric   string   `yaml:"metric" json:"metric"`
	Than     string   `yaml:"than,omitempty" json:"than,omitempty"`
	Min      *float64 `yaml:"min,omitempty" json:"min,omitempty"`
	Max      *float64 `yaml:"max,omitempty" json:"max,omitempty"`
	Claim    string   `yaml:"claim" json:"claim"`
	Source   string   `yaml:"source" json:"source"`
	Inferred bool     `yaml:"inferred,omitempty" json:"inferred,omitempty"`
	Why      string   `yaml:"why,omitempty" json:"why,omitempty"`
	Differs  string   `yaml:"differs,omitempty" json:"differs,omitempty"`
	// NotCheckable says why this computer cannot decide the claim (a
	// set-up it cannot build): its figure is measured and shown, its
	// verdict is not_checkable, and it counts for nothing.
	NotCheckable string `yaml:"not_checkable_here,omitempty" json:"not_checkable_here,omitempty"`
	// Scale names the one scale that measures the claim's figure (a
	// document's 10,000 rows or 256 threads), "" for both; at the other
	// the check is other_scale and counts for nothing.
	Scale string `yaml:"scale,omitempty" json:"scale,omitempty"`
	// Happens: the claim is that something happens at all (Jepsen's
	// "allows P4"), with min: 1 on a count of anomalies a history check
	// witnesses: one round that counts one reproduces it (IsEver), not a
	// mean over rounds.
	Happens bool `yaml:"happens,omitempty" json:"happens,omitempty"`
}

// boundsOf is a claim's figure and bounds in words, for a refusal.
func boundsOf(e Expect) string {
	w := "metric " + e.Metric
	if e.Min != nil {
		w += fmt.Sprintf(", min %g", *e.Min)
	}
	if e.Max != nil {
		w += fmt.Sprintf(", max %g", *e.Max)
	}
	if e.Than != "" {
		w += ", than " + e.Than
	}
	return w
}

// step is a study's step by name.
func (s *Study) step(name string) (Step, bool) {
	for _, st := range s.Steps {
		if st.Name == name {
			return st, true
		}
	}
	return Step{}, false
}

// Title is how reports name a variant (its label, or its name).
func (v Variant) Title() string {
	if v.Label != "" {
		return v.Label
	}
	return v.Name
}

// Baseline is the variant the others are compared with (the one marked, or
// the first).
func (s *Study) Baseline() string {
	for _, v := range s.Variants {
		if v.Baseline {
			return v.Name
		}
	}
	if len(s.Variants) > 0 {
		return s.Variants[0].Name
	}
	return ""
}

//go:embed studies/*.yaml
var studyFS embed.FS

var studies = catalog.Catalog{FS: studyFS, Dir: "studies", Field: "NAME", What: "study", Else: "; or give a file with --file"}

// Names lists the embedded studies, sorted.
func Names() []string { return studies.Names() }

// Source is an embedded study's YAML.
func Source(name string) ([]byte, error) { return studies.Source(name) }

// Embedded loads an embedded study.
func Embedded(name string) (*Study, error) {
	b, err := Source(name)
	if err != nil {
		return nil, err
	}
	return Load(b)
}

// Load reads and checks a study, naming every problem.
func Load(b []byte) (*Study, error) {
	var s Study
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, hderr.User("study: empty document (expected a study: name, title, source, variants, steps, scales)")
		}
		return nil, hderr.User("study: %v", err)
	}
	return &s, hderr.Users(s.Problems())
}

// Problems lists what is wrong with a study (each field named).
func (s *Study) Problems() []string {
	var out []string
	add := func(field, format string, a ...any) { out = append(out, field+": "+fmt.Sprintf(format, a...)) }
	if !spec.ValidName(s.Name) && !validStudyName(s.Name) {
		add("name", "expected lowercase letters, digits and dashes, got %q", s.Name)
	}
	if s.Title == "" {
		add("title", "required")
	}
	if s.Source == "" {
		add("source", "required: the document the study reproduces")
	}
	if len(s.Variants) < 1 {
		add("variants", "at least one is required")
	}
	variants := map[string]bool{}
	baselines := 0
	for i, v := range s.Variants {
		p := fmt.Sprintf("variants[%d]", i)
		switch {
		case !spec.ValidName(v.Name) || len(v.Name) > 11:
			add(p+".name", "expected a lowercase letter, then up to 10 lowercase letters or digits (its lab is named after it), got %q", v.Name)
		case variants[v.Name]:
			add(p+".name", "duplicate variant %q", v.Name)
		}
		variants[v.Name] = true
		if v.Baseline {
			baselines++
		}
		switch {
		case v.Endpoint != "":
			out = append(out, v.endpointProblems(p, s.Steps)...)
		default:
			sp, err := v.Spec()
			if err != nil {
				for _, prob := range problemsOf(err) {
					add(p, "%s", prob)
				}
			}
			for _, st := range s.Steps {
				target := cmp.Or(st.Target, v.Target)
				if why := targetProblem(sp, target, st.Kind == "consistency"); sp != nil && target != "" && why != "" {
					field := p + ".target"
					if st.Target != "" {
						field = fmt.Sprintf("steps[%d].target", slices.IndexFunc(s.Steps, func(x Step) bool { return x.Name == st.Name }))
					}
					add(field, "%s (variant %s, step %s)", why, v.Name, st.Name)
				}
			}
			if v.Credentials != "" {
				add(p+".credentials", "applies to an endpoint variant only")
			}
			if v.ReadTarget != "" {
				if why := readTargetProblem(sp, v.ReadTarget); sp != nil && why != "" {
					add(p+".read_target", "%s (variant %s)", why, v.Name)
				}
				for _, st := range s.Steps {
					if st.Kind != "consistency" {
						add(p+".read_target", "applies to consistency steps only; step %s is %s", st.Name, st.Kind)
					}
				}
			}
		}
		if v.Price < 0 || v.Price > 1e6 || math.IsNaN(v.Price) {
			add(p+".price", "expected an hourly price from 0 to 1000000, got %g", v.Price)
		}
		for _, st := range s.Steps {
			if k := kindOf(st); k != nil && v.Target == plan.NodesAlias && st.Target == "" && !k.hostList {
				add(p+".target", "%q (the nodes as one host list) is for sysbench steps only; step %s is %s (give it a target of its own)", v.Target, st.Name, st.Kind)
			}
		}
	}
	if baselines > 1 {
		add("variants", "at most one baseline, got %d", baselines)
	}
	steps := map[string]Step{}
	for i, st := range s.Steps {
		p := fmt.Sprintf("steps[%d]", i)
		if !validStudyName(st.Name) {
			add(p+".name", "expected lowercase letters, digits and dashes, got %q", st.Name)
		} else if _, dup := steps[st.Name]; dup {
			add(p+".name", "duplicate step %q", st.Name)
		}
		steps[st.Name] = st
		stepProblems(st, func(field, format string, a ...any) {
			if field != "" {
				field = "." + field
			}
			add(p+field, format, a...)
		})
	}
	if len(s.Steps) == 0 {
		add("steps", "at least one is required")
	}
	for _, name := range []string{"quick", "full"} {
		sc, _ := s.Scales.Named(name)
		out = append(out, sc.problems("scales."+name, s.Steps)...)
	}
	// a figure must be one a scale measures: a reference one of them, a
	// check both (a check no scale can fail is no check)
	figure := func(p, step, variant, metric, every string) {
		st, ok := steps[step]
		if !ok {
			add(p+".step", "unknown step %q", step)
		}
		if !variants[variant] {
			add(p+".variant", "unknown variant %q", variant)
		}
		if !ok {
			return
		}
		full, quick := slices.Contains(s.metrics(st, s.Scales.Full), metric), slices.Contains(s.metrics(st, s.Scales.Quick), metric)
		switch {
		case !full && !quick:
			add(p+".metric", "step %s yields %s, got %q", step, strings.Join(s.metrics(st, s.Scales.Full), ", "), metric)
		case every == "" && (!full || !quick):
			scale, sc := "full", s.Scales.Full
			if !quick {
				scale, sc = "quick", s.Scales.Quick
			}
			add(p+".metric", "%s is not measured at %s scale (it yields %s): a check must be measurable at both scales, or name the one that measures it (scale: full)", metric, scale, strings.Join(s.metrics(st, sc), ", "))
		case every == "full" && !full, every == "quick" && !quick:
			add(p+".metric", "%s is not measured at %s scale, the one the check names", metric, every)
		}
	}
	for i, r := range s.Reference {
		p := fmt.Sprintf("reference[%d]", i)
		figure(p, r.Step, r.Variant, r.Metric, "any")
		if strings.TrimSpace(r.Source) == "" {
			add(p+".source", "required: where the document prints the figure (section, table, figure), or implies it (with inferred: true)")
		}
	}
	for i, e := range s.Expect {
		p := fmt.Sprintf("expect[%d]", i)
		if e.Scale != "" && e.Scale != "quick" && e.Scale != "full" {
			add(p+".scale", "expected quick, full or nothing (both), got %q", e.Scale)
		}
		figure(p, e.Step, e.Variant, e.Metric, e.Scale)
		if e.Min == nil && e.Max == nil {
			add(p, "expected min, max or both")
		}
		if e.Min != nil && e.Max != nil && *e.Min > *e.Max {
			add(p, "min %g is above max %g", *e.Min, *e.Max)
		}
		for _, prob := range boundProblems(e) {
			add(p, "%s", prob)
		}
		if e.Than != "" && (!variants[e.Than] || e.Than == e.Variant) {
			add(p+".than", "expected another variant of the study, got %q", e.Than)
		}
		if strings.TrimSpace(e.Claim) == "" {
			add(p+".claim", "required: the document's words this check tests")
		}
		if strings.TrimSpace(e.Source) == "" {
			add(p+".source", "required: where the claim stands in the document (section, table, figure)")
		}
		if e.Inferred && strings.TrimSpace(e.Why) == "" {
			add(p+".why", "required with inferred: true: how the bound follows from what the document says")
		}
		if e.Happens && (e.Than != "" || e.Max != nil || e.Min == nil || *e.Min != 1 || !slices.Contains(witnessMetrics, e.Metric)) {
			add(p+".happens", "expected only with min: 1 and no max or than, on a count of anomalies a history check witnesses (%s), got %s", strings.Join(witnessMetrics, ", "), boundsOf(e))
		}
	}
	s.documentProblems(add)
	for i, d := range s.Deviations {
		p := fmt.Sprintf("deviations[%d]", i)
		if d.What == "" || d.Document == "" || d.Here == "" {
			add(p, "what, document and here are required (what differs, the document's value, the study's)")
		}
		if d.Scale != "" && d.Scale != "quick" && d.Scale != "full" {
			add(p+".scale", "expected quick, full or nothing (both), got %q", d.Scale)
		}
	}
	return out
}

// readTargetProblem says what is wrong with a variant's read target in
// its spec ("" when nothing): replicas needs a replicated cluster of two
// nodes or more, lb-balanced a balanced load balancer, names must exist.
func readTargetProblem(sp *spec.Spec, target string) string {
	switch target {
	case workload.ReadReplicas:
		for _, c := range sp.Clusters {
			if c.Kind == spec.KindPrimary && (c.Nodes == nil || *c.Nodes > 1) {
				return ""
			}
		}
		return "replicas: the variant's lab has no replicated cluster with a replica"
	case workload.ReadBalanced:
		for _, b := range sp.LoadBalancers {
			if b.Mode == spec.LBBalanced {
				return ""
			}
		}
		return "lb-balanced: the variant's lab has no load balancer in mode balanced"
	}
	if why := targetProblem(sp, target, true); why != "" {
		return why + " (or " + workload.ReadReplicas + ", " + workload.ReadBalanced + ")"
	}
	return ""
}

// targetProblem says what is wrong with a step's target in a variant's
// lab ("" when nothing): each name a node or load balancer of it, the
// first load balancer's alias, or the nodes alias; several names only
// where the step takes a list.
func targetProblem(sp *spec.Spec, target string, list bool) string {
	if sp == nil {
		return ""
	}
	known := []string{plan.NodesAlias}
	if len(sp.LoadBalancers) > 0 {
		known = append(known, plan.LBAlias)
	}
	for _, lb := range sp.LoadBalancers {
		if !slices.Contains(known, lb.Name) {
			known = append(known, lb.Name)
		}
	}
	for _, c := range sp.Clusters {
		for j := 1; j <= c.NodeCount(); j++ {
			known = append(known, c.NodeHost(j))
		}
	}
	names := []string{target}
	if list {
		names = strings.Split(target, ",")
	}
	for _, n := range names {
		if !slices.Contains(known, n) {
			return fmt.Sprintf("%q is not a host of the variant's lab (known: %s)", n, strings.Join(known, ", "))
		}
	}
	return ""
}

// maxBound bounds a check's bounds: a figure a lab measures is far below.
const maxBound = 1e15

// domain is the range every figure of a check's metric lies in: a ratio
// of two figures is above 0, a share of drills (passed, lost_any) from 0
// to 1, any other figure (times, counts, rates) at or above 0.
func domain(e Expect) (lo, hi float64, loOpen bool) {
	switch {
	case e.Than != "":
		return 0, math.Inf(1), true
	case slices.Contains(shareMetrics, e.Metric):
		return 0, 1, false
	}
	return 0, math.Inf(1), false
}

// boundProblems says what makes a check's bounds no check: a bound that is
// not a finite number, one every figure of the metric meets (a check that
// cannot fail), one no figure can meet, or an interval of one value.
func boundProblems(e Expect) []string {
	var out []string
	finite := true
	for _, b := range []struct {
		name string
		v    *float64
	}{{"min", e.Min}, {"max", e.Max}} {
		if b.v != nil && (math.IsNaN(*b.v) || math.IsInf(*b.v, 0) || math.Abs(*b.v) >= maxBound) {
			out = append(out, fmt.Sprintf("%s: expected a finite bound below %g, got %g", b.name, maxBound, *b.v))
			finite = false
		}
	}
	if !finite {
		return out
	}
	lo, hi, loOpen := domain(e)
	what := e.Metric
	if e.Than != "" {
		what = fmt.Sprintf("%s's ratio to %s (always above 0)", e.Metric, e.Than)
	}
	minTrivial := e.Min == nil || *e.Min <= lo
	maxTrivial := e.Max == nil || *e.Max >= hi
	switch {
	case e.Min != nil && e.Max != nil && *e.Min == *e.Max:
		out = append(out, fmt.Sprintf("min and max are both %g: no measured figure's interval lies within one value (give a range)", *e.Min))
	case (e.Min != nil || e.Max != nil) && minTrivial && maxTrivial:
		out = append(out, fmt.Sprintf("every figure of %s lies within these bounds (from %g%s): a check that cannot fail", what, lo, upTo(hi)))
	case e.Max != nil && (*e.Max < lo || *e.Max == lo && loOpen):
		out = append(out, fmt.Sprintf("max %g: no figure of %s is that low: a check that can never hold", *e.Max, what))
	case e.Min != nil && *e.Min > hi:
		out = append(out, fmt.Sprintf("min %g: no figure of %s is that high (at most %g): a check that can never hold", *e.Min, what, hi))
	}
	return out
}

func upTo(hi float64) string {
	if math.IsInf(hi, 1) {
		return " up"
	}
	return fmt.Sprintf(" to %g", hi)
}

// endpointProblems checks a variant that is a server outside any lab: an
// address, credentials, no preset, and steps that need no lab.
func (v Variant) endpointProblems(p string, steps []Step) []string {
	var out []string
	add := func(field, format string, a ...any) { out = append(out, p+"."+field+": "+fmt.Sprintf(format, a...)) }
	u, err := url.Parse(v.Endpoint)
	if err != nil || !strings.HasPrefix(v.Endpoint, workload.External) || u.Hostname() == "" || u.Port() == "" || u.User != nil || u.Path != "" {
		add("endpoint", "expected mysql://HOST:PORT (the user and password go in the credentials file), got %q", v.Endpoint)
	}
	if v.Credentials == "" {
		add("credentials", "required with an endpoint: a my.cnf-style file with user= and password=")
	}
	if v.Preset != "" || len(v.Patch) > 0 || v.Target != "" {
		add("endpoint", "an endpoint variant has no preset, patch or target (it is the server itself)")
	}
	for _, st := range steps {
		if k := kindOf(st); k != nil && !k.endpoint {
			add("endpoint", "step %s (%s) needs a lab; an endpoint runs %s steps", st.Name, st.Kind, strings.Join(kindsWhere(func(k *stepKind) bool { return k.endpoint }), ", "))
		}
	}
	return out
}

func (sc Scale) problems(p string, steps []Step) []string {
	var out []string
	add := func(field, format string, a ...any) { out = append(out, p+"."+field+": "+fmt.Sprintf(format, a...)) }
	if sc.Runs < 1 || sc.Runs > 100 {
		add("runs", "expected 1 to 100 rounds, got %d", sc.Runs)
	}
	for _, st := range steps {
		if k := kindOf(st); k != nil && k.scale != nil {
			k.scale(st, sc, add)
		}
	}
	return dedupe(out)
}

func validStudyName(s string) bool {
	if s == "" || len(s) > 40 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

func problemsOf(err error) []string {
	if u, ok := err.(*hderr.UserError); ok {
		return u.Problems
	}
	return []string{err.Error()}
}

func dedupe(s []string) []string {
	var out []string
	for _, v := range s {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}
