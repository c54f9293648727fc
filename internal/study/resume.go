package study

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/hadrill/hadrill/internal/facts"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/words"
)

// A study of many hours may stop before its end: interrupted, a step
// failing twice, the computer restarted. `study run --resume RUN` goes on
// from it: every round each variant ran to the end is kept (with its
// figures' runs in the store), the rounds left run now in labs made anew,
// in the same interleaved order and, with --decide, to the design the
// pilot fixed. A round cut short is run again whole. The stored run and
// this one must be one study: the same study (its variants, steps and
// scale), variants, scale, design and software; anything else is refused.

// Stored is a stored study run by its id.
type Stored struct {
	ID     string
	Result *Result
}

// Resumed is what a resumed run kept of the run it went on from.
type Resumed struct {
	From string `json:"from"` // the stopped run's id
	// Rounds are the rounds kept of each variant (its group's last
	// complete round).
	Rounds map[string]int `json:"rounds"`
	Why    string         `json:"why"` // why that run stopped
}

// decided says whether a stored run ran with --decide (a run stored
// before runs said so: it has a design).
func (r *Result) decided() bool { return r.Decide || r.Design != nil }

// checkResume names every reason the stored run and the options cannot
// be one study (nil: they can). variants are the options' chosen ones,
// installed what runs here now.
func checkResume(prev Stored, s *Study, o Options, variants []string, installed facts.Installed) error {
	p, id := prev.Result, prev.ID
	var problems []string
	add := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	if p.Study == nil || p.Study.Name != s.Name {
		name := "no study"
		if p.Study != nil {
			name = "study " + p.Study.Name
		}
		add("--resume: run %s is %s's, not %s's", id, name, s.Name)
		return hderr.Users(problems)
	}
	if !p.Interrupted {
		add("--resume: run %s ran to its end: nothing to resume (run the study anew for more rounds)", id)
	}
	if p.Scale != o.Scale {
		add("--scale: run %s ran at %s scale, not %s", id, p.Scale, o.Scale)
	}
	if !slices.Equal(p.Variants, variants) {
		add("--variants: run %s ran %s, not %s", id, words.And(p.Variants), words.And(variants))
	}
	if p.decided() != o.Decide {
		add("--decide: run %s ran %s a two-look design", id, map[bool]string{true: "with", false: "without"}[p.decided()])
	}
	if p.Design != nil && o.Budget != 0 && o.Budget != p.Design.Budget {
		add("--budget: run %s's design fixed its rounds already (%d, under a budget of %v): leave --budget out", id, p.Design.Rounds, p.Design.Budget)
	}
	if p.Inventory != "" || o.Inventory != nil {
		add("--resume: a run on an inventory's machines cannot be resumed (its labs are placed anew on them); run it anew")
	}
	if changed := studyChanged(p.Study, s, o.Scale); changed != "" {
		add("--resume: study %s's %s changed since run %s: its rounds and new ones would not be one study", s.Name, changed, id)
	}
	for _, d := range installedChanged(p.Installed, installed) {
		add("--resume: run %s ran %s: rounds on two versions are not one study", id, d)
	}
	return hderr.Users(problems)
}

// studyChanged names what of a study a run measures by (its variants,
// steps, the scale) differs between two versions of it ("": none); the
// claims, the reference and the document's words may change: the run
// judges every round by today's.
func studyChanged(was, now *Study, scale string) string {
	same := func(a, b any) bool {
		x, _ := json.Marshal(a)
		y, _ := json.Marshal(b)
		return string(x) == string(y)
	}
	var out []string
	if !same(was.Variants, now.Variants) {
		out = append(out, "variants")
	}
	if !same(was.Steps, now.Steps) {
		out = append(out, "steps")
	}
	a, _ := was.Scales.Named(scale)
	b, _ := now.Scales.Named(scale)
	if !same(a, b) {
		out = append(out, scale+" scale")
	}
	return words.And(out)
}

// installedChanged says each program whose version differs between a
// stored run and this computer ("MariaDB 10.11.6, here MariaDB 10.11.7").
func installedChanged(was, now facts.Installed) []string {
	var out []string
	for _, f := range []struct{ what, was, now string }{
		{"the server", was.Server, now.Server}, {"Galera", was.Galera, now.Galera}, {"sysbench", was.Sysbench, now.Sysbench},
		{"fio", was.Fio, now.Fio}, {"the system", was.OS, now.OS}, {"the kernel", was.Kernel, now.Kernel},
	} {
		if f.was != f.now {
			out = append(out, fmt.Sprintf("%s %s, here %s", f.what, orNone(f.was), orNone(f.now)))
		}
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none read)"
	}
	return s
}

// keptRounds are the rounds of each variant a resumed run keeps: its
// group's (the labs up together now) fewest completed, since a group's
// rounds interleave its variants (a run stored before runs counted them
// per variant: the rounds every variant completed).
func keptRounds(p *Result, groups [][]string) map[string]int {
	out := map[string]int{}
	for _, g := range groups {
		least := -1
		for _, v := range g {
			n, ok := p.Completed[v]
			if !ok {
				n = p.Rounds
			}
			if least < 0 || n < least {
				least = n
			}
		}
		for _, v := range g {
			out[v] = max(least, 0)
		}
	}
	return out
}

// resumeFrom seeds a new run's result with what it keeps of the stopped
// one: each variant's samples and round times of its kept rounds, the
// design its pilot fixed, and where they came from.
func resumeFrom(res *Result, prev Stored, groups [][]string) {
	p := prev.Result
	kept := keptRounds(p, groups)
	for _, x := range p.Samples {
		if x.Round <= kept[x.Variant] {
			res.Samples = append(res.Samples, x)
		}
	}
	res.RoundTimes = map[string][]float64{}
	for v, n := range kept {
		t := p.RoundTimes[v]
		res.RoundTimes[v] = slices.Clone(t[:min(n, len(t))])
	}
	res.Design = p.Design // made once every group had run the pilot's rounds: each kept them
	why := "interrupted"
	if p.Failed != "" {
		why = "stopped: " + p.Failed
	}
	res.Resumed = &Resumed{From: prev.ID, Rounds: kept, Why: why}
}

// says is the deviation a resumed run records: which rounds came
// from where.
func (r *Resumed) says() string {
	var parts []string
	for v, n := range r.Rounds {
		parts = append(parts, fmt.Sprintf("%s %d", v, n))
	}
	slices.Sort(parts)
	return fmt.Sprintf("rounds kept from run %s (%s; rounds kept: %s), the rest run in labs made anew", r.From, r.Why, strings.Join(parts, ", "))
}
