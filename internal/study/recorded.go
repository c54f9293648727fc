package study

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/hadrill/hadrill/internal/facts"
	"github.com/hadrill/hadrill/internal/spec"
	"github.com/hadrill/hadrill/internal/workload/tpcc"
)

// Document is the set-up the document's figures came from, as it states
// it. A run sets it beside what it ran itself (the server, Galera and load
// tools installed here, the scale's warm-up and rounds) and lists every
// difference as a deviation of its own (Recorded), so no study file has to
// remember them.
type Document struct {
	// Server is what the document's servers ran ("Percona XtraDB Cluster
	// 5.6.20"); Galera the replication library's version, where it had one.
	Server string `yaml:"server" json:"server"`
	Galera string `yaml:"galera,omitempty" json:"galera,omitempty"`
	// Tools are the load programs' versions as the document gives them
	// (sysbench, mariadb-slap, fio), by the name hadrill runs them under.
	Tools map[string]string `yaml:"tools,omitempty" json:"tools,omitempty"`
	OS    string            `yaml:"os,omitempty" json:"os,omitempty"`
	// Warmup is the document's warm-up in words ("none stated"); WarmupS,
	// when it states one before every measured run, its seconds.
	Warmup  string `yaml:"warmup,omitempty" json:"warmup,omitempty"`
	WarmupS *int   `yaml:"warmup_s,omitempty" json:"warmup_s,omitempty"`
	// Runs is how many times it ran each measurement (0: not stated), and
	// Summary how its figures summarise them: single, mean or median.
	Runs    int    `yaml:"runs,omitempty" json:"runs,omitempty"`
	Summary string `yaml:"summary,omitempty" json:"summary,omitempty"`
	// Inferred names the fields above the document implies but does not
	// state (server, galera, os, warmup, runs, tools.NAME).
	Inferred []string `yaml:"inferred,omitempty" json:"inferred,omitempty"`
}

// inferable are the fields Document.Inferred may name (and tools.NAME).
var inferable = []string{"server", "galera", "os", "warmup", "runs"}

// said is a document field's value as a deviation gives it: "(inferred)"
// after one the document only implies.
func (d Document) said(field, value string) string {
	if value != notStated && value != noBlock && slices.Contains(d.Inferred, field) {
		return value + " (inferred)"
	}
	return value
}

// Summaries are how a document may summarise its runs.
var Summaries = []string{"single", "mean", "median"}

// recordedWhat are the deviations a run records itself: a study file that
// writes one of them by hand is refused (it states the document's side in
// document: instead).
var recordedWhat = map[string]string{
	"server": "server", "servers": "server", "database": "server", "versions": "server and galera",
	"galera": "galera", "sysbench": "tools.sysbench", "mariadb-slap": "tools.mariadb-slap", "mysqlslap": "tools.mariadb-slap",
	"fio": "tools.fio", "operating system": "os", "os": "os", "warm-up": "warmup", "warmup": "warmup",
	"rounds": "runs", "runs": "runs", "repetitions": "runs",
}

// documentProblems checks the document block (nil: the run says of each
// recorded difference that the study file does not state the document's).
func (s *Study) documentProblems(add func(field, format string, a ...any)) {
	for i, d := range s.Deviations {
		if field, ok := recordedWhat[strings.ToLower(strings.TrimSpace(d.What))]; ok {
			add(fmt.Sprintf("deviations[%d].what", i), "%q is recorded by the run itself, against document.%s: state the document's there (the run adds what it ran)", d.What, field)
		}
	}
	d := s.Document
	if d == nil {
		return
	}
	if strings.TrimSpace(d.Server) == "" {
		add("document.server", "required: what the document's servers ran (\"Percona XtraDB Cluster 5.6.20\"), or \"not stated\"")
	}
	used := s.tools()
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range d.Tools {
			if !yield(k) {
				return
			}
		}
	}) {
		if !slices.Contains(used, name) {
			add("document.tools."+name, "no step of the study runs it (its steps run: %s)", cmp.Or(strings.Join(used, ", "), "no load tool"))
		}
	}
	if d.WarmupS != nil && (*d.WarmupS < 0 || *d.WarmupS > 86400) {
		add("document.warmup_s", "expected 0 to 86400 seconds, got %d", *d.WarmupS)
	}
	if d.Runs < 0 || d.Runs > 10000 {
		add("document.runs", "expected 0 (not stated) to 10000, got %d", d.Runs)
	}
	for i, f := range d.Inferred {
		if !slices.Contains(inferable, f) && !strings.HasPrefix(f, "tools.") {
			add(fmt.Sprintf("document.inferred[%d]", i), "expected one of %s or tools.NAME, got %q", strings.Join(inferable, ", "), f)
		}
	}
	if d.Summary != "" && !slices.Contains(Summaries, d.Summary) {
		add("document.summary", "expected %s, got %q", strings.Join(Summaries, ", "), d.Summary)
	}
}

// tools are the load programs the study's steps run, in step order.
func (s *Study) tools() []string {
	var out []string
	for _, st := range s.Steps {
		if k := kindOf(st); k != nil && k.tool != "" && !slices.Contains(out, k.tool) {
			out = append(out, k.tool)
		}
	}
	return out
}

// labs says whether any variant runs a server of a lab (not an endpoint)
// that a step measures, and whether any of those labs has a Galera cluster.
func (s *Study) labs() (lab, galera bool) {
	if !slices.ContainsFunc(s.Steps, func(st Step) bool { k := kindOf(st); return k != nil && !k.serverless }) {
		return false, false
	}
	for _, v := range s.Variants {
		if v.Endpoint != "" {
			continue
		}
		lab = true
		if sp, err := v.Spec(); err == nil && slices.ContainsFunc(sp.Clusters, func(c spec.Cluster) bool { return c.Kind == spec.KindGalera }) {
			galera = true
		}
	}
	return lab, galera
}

// notStated is what a recorded deviation says of a value the study's
// document block does not give; noBlock, of one when it has none.
const (
	notStated = "not stated"
	noBlock   = "not stated in the study file (it has no document: block)"
)

// Recorded are the deviations a run records itself: the document's set-up
// (its Document block) against what ran here (in), at the scale sc over
// rounds rounds, its labs in groups (1: all at once). Each has Recorded
// set; a value the same on both sides
// gives none.
func Recorded(s *Study, in facts.Installed, sc Scale, rounds, groups int, remote bool) []Deviation {
	d, none := Document{}, notStated
	if s.Document != nil {
		d = *s.Document
	} else {
		none = noBlock
	}
	var out []Deviation
	add := func(what, doc, here, why string) {
		out = append(out, Deviation{What: what, Document: doc, Here: here, Why: why, Recorded: true})
	}
	where := ""
	if remote {
		where = " (on this computer: the inventory's hosts run their own)"
	}
	lab, galera := s.labs()
	if lab && !sameServer(d.Server, in.Server) {
		add("server", d.said("server", cmp.Or(d.Server, none)), cmp.Or(in.Server, "not read")+where,
			"hadrill builds its labs from MariaDB and Galera 4: a figure that depends on the server's own code may differ")
	}
	if galera && !sameGalera(d.Galera, in.Galera) {
		here := "Galera 4"
		if in.Galera != "" {
			here += " (provider " + in.Galera + ")"
		}
		add("galera", d.said("galera", cmp.Or(d.Galera, none)), here+where, "")
	}
	for _, tool := range s.tools() {
		ours := toolVersion(in, tool)
		if doc := d.Tools[tool]; !sameVersion(doc, ours) {
			add(tool, d.said("tools."+tool, cmp.Or(doc, none)), tool+" "+cmp.Or(ours, "(version not read)"), "")
		}
	}
	if d.OS != "" && !strings.Contains(d.OS, in.OS) {
		add("operating system", d.said("os", d.OS), strings.TrimSpace(in.OS+", Linux "+in.Kernel), "")
	}
	if warm := slices.ContainsFunc(s.Steps, func(st Step) bool { k := kindOf(st); return k != nil && k.warmup }); warm && sc.Warmup > 0 &&
		(d.WarmupS == nil || *d.WarmupS != sc.Warmup) {
		add("warm-up", d.said("warmup", cmp.Or(d.Warmup, none)), fmt.Sprintf("%d s of the same load before every measured run, not recorded", sc.Warmup),
			"a variant's turn starts on the caches the one before left")
	}
	if rounds > 0 && (d.Runs != rounds || d.Summary != "mean") {
		interleaved := "interleaved"
		if groups > 1 {
			interleaved = fmt.Sprintf("interleaved within each of %d groups of labs run one after another", groups)
		}
		add("rounds", d.said("runs", cmp.Or(d.runs(), none)), fmt.Sprintf("%d round(s) of every variant %s; a claim judged by the mean of its rounds with its interval, tables by the median", rounds, interleaved),
			"one run gives no interval: noise could not be told from an effect")
	}
	return out
}

// runs says how the document ran its measurements and summarised them.
func (d Document) runs() string {
	switch {
	case d.Runs == 1:
		return "one run of each measurement"
	case d.Runs > 1 && d.Summary == "single":
		return fmt.Sprintf("%d runs, each reported", d.Runs)
	case d.Runs > 1 && d.Summary != "":
		return fmt.Sprintf("%d runs, their %s", d.Runs, d.Summary)
	case d.Runs > 1:
		return fmt.Sprintf("%d runs", d.Runs)
	case d.Summary != "":
		return "how many runs not stated, their " + d.Summary
	}
	return ""
}

// toolVersion is a load tool's version here (mariadb-slap's is the
// server's).
func toolVersion(in facts.Installed, tool string) string {
	switch tool {
	case "sysbench":
		return in.Sysbench
	case "fio":
		return in.Fio
	case "mariadb-slap":
		return facts.VersionIn(in.Server)
	case "go-tpc":
		return strings.TrimPrefix(tpcc.Version, "v") // the version make deps installs
	}
	return ""
}

// sameServer says whether the document's server is the one here: the same
// product (MariaDB) and its version a prefix of ours.
func sameServer(doc, here string) bool {
	return doc != "" && here != "" && strings.Contains(strings.ToLower(doc), "mariadb") && sameVersion(doc, here)
}

// sameGalera says whether the document's Galera is this one: its version
// a prefix of the provider's, or its major ("4", Galera 4 = provider 26.4).
func sameGalera(doc, here string) bool {
	v := facts.VersionIn(doc)
	if v == "" {
		return false
	}
	return v == "4" || sameVersion(v, here)
}

// sameVersion says whether the version the document gives (its first
// number) is a prefix of ours at a component boundary: "1.0" matches
// "1.0.20", "0.5" does not, nor does "1.0" match "1.02".
func sameVersion(doc, here string) bool {
	d, h := facts.VersionIn(doc), facts.VersionIn(here)
	if d == "" || h == "" {
		return false
	}
	return h == d || strings.HasPrefix(h, d+".")
}
