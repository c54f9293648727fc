package study

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/facts"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/inventory"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/state"
	"github.com/hadrill/hadrill/internal/stats"
	"github.com/hadrill/hadrill/internal/workload"
)

// Kind is a study's kind of run in the run store.
const Kind results.Kind = "study"

// Options choose how a study runs.
type Options struct {
	Home     string
	Scale    string   // quick | full
	Variants []string // a subset (empty: all)
	Keep     bool     // leave the labs up afterwards
	// Inventory places the labs on its machines, over SSH (nil: here).
	Inventory *inventory.Resolved
	Command   []string
	Log       io.Writer // progress
	// Wait is how long a step waits for another benchmark on its lab (0:
	// refuse at once).
	Wait time.Duration
	// Decide runs the scale's rounds as a pilot of a two-look design
	// (Design), then as many more as the checks need to decide, within
	// Budget (0: no limit).
	Decide bool
	Budget time.Duration
	// MaxMemory is the most memory the labs may hold at once on this
	// computer (0: 90 % of what is available); labs that would hold more
	// take turns in groups.
	MaxMemory int64
	// Resume is a stored run of the study that stopped before its end, to
	// go on from (nil: a new run); see resume.go.
	Resume *Stored
}

// Result is a study run as stored (the run's results).
type Result struct {
	Study    *Study            `json:"study"`
	Scale    string            `json:"scale"`
	Protocol Scale             `json:"protocol"`
	Variants []string          `json:"variants"`
	Labs     map[string]string `json:"labs"` // variant -> lab
	// Inventory is the file naming the machines the labs ran on, one
	// lab at a time ("": this computer, every lab at once).
	Inventory   string   `json:"inventory,omitempty"`
	Rounds      int      `json:"rounds"`
	Samples     []Sample `json:"samples"`
	Cells       []Cell   `json:"cells"`
	Checks      []Check  `json:"checks,omitempty"`
	Finding     string   `json:"finding"`
	Interrupted bool     `json:"interrupted"`
	// Failed is the step that failed twice and stopped the study (what was
	// measured before it is kept); Retried are steps that failed once and
	// were run again (on a busy machine a health check may flap).
	Failed  string   `json:"failed,omitempty"`
	Retried []string `json:"retried,omitempty"`
	// Groups are the variants whose labs were up together, one group
	// after another, when this computer could not hold every lab at once
	// (empty: every lab at once); rounds interleave within a group only.
	Groups [][]string `json:"groups,omitempty"`
	// Design is the two-look design the rounds followed (--decide).
	Design *Design `json:"design,omitempty"`
	Decide bool    `json:"decide,omitempty"` // run with --decide
	// Budget is --budget's (0: none).
	Budget time.Duration `json:"budget_ns,omitempty"`
	// Completed are the rounds each variant ran to the end (its group's
	// every variant and step), and RoundTimes the seconds each of those
	// rounds took the variant: what a resumed run keeps and goes on from.
	Completed  map[string]int       `json:"completed,omitempty"`
	RoundTimes map[string][]float64 `json:"round_times,omitempty"`
	// Resumed says which stopped run's rounds this one kept (nil: none).
	Resumed *Resumed `json:"resumed,omitempty"`
	// Installed is what ran here (server, Galera, tools, system), and
	// Deviations every way the run departed from the document: the study
	// file's at the scale, then those the run recorded against its
	// Document.
	Installed  facts.Installed `json:"installed"`
	Deviations []Deviation     `json:"deviations"`
	// Speed is how fast a core of this computer ran a fixed loop when the
	// run began and when it ended (each step's run records its own).
	Speed *RunSpeed `json:"core_speed,omitempty"`
}

// AllDeviations are a run's deviations from the document (a run stored
// before runs recorded their own: the study file's).
func (r *Result) AllDeviations() []Deviation {
	if r.Deviations != nil {
		return r.Deviations
	}
	return r.Study.DeviationsAt(r.Scale)
}

// LabName is the lab a study runs a variant in: "s", four characters
// from the study's name, the variant (lab names are machine-wide: two
// studies with a variant of the same name can run at once).
func LabName(study, variant string) string {
	h := fnv.New32a()
	h.Write([]byte(study))
	code := strconv.FormatUint(uint64(h.Sum32()%(36*36*36*36)), 36)
	return "s" + strings.Repeat("0", 4-len(code)) + code + variant
}

// Choose checks the options against the study: the scale and the variants
// exist, and no lab of a variant's name is there already (a study does not
// run in, or remove, labs it did not make).
func Choose(s *Study, o Options) (Scale, []string, error) {
	var problems []string
	sc, ok := s.Scales.Named(o.Scale)
	if !ok {
		problems = append(problems, fmt.Sprintf("--scale: expected quick or full, got %q", o.Scale))
	}
	if s.Needs != "" {
		problems = append(problems, fmt.Sprintf("NAME: study %s cannot run yet: it needs %s", s.Name, s.Needs))
	}
	var all, chosen []string
	for _, v := range s.Variants {
		all = append(all, v.Name)
	}
	for _, v := range o.Variants {
		if !slices.Contains(all, v) {
			problems = append(problems, fmt.Sprintf("--variants: unknown variant %q (known: %s)", v, strings.Join(all, ", ")))
		}
	}
	for _, v := range all {
		if len(o.Variants) == 0 || slices.Contains(o.Variants, v) {
			chosen = append(chosen, v)
		}
	}
	for _, v := range chosen {
		if _, err := state.Load(o.Home, LabName(s.Name, v)); err == nil {
			problems = append(problems, fmt.Sprintf("--variants: a lab named %s (variant %s) exists already; remove it with `hadrill down --name %s`", LabName(s.Name, v), v, LabName(s.Name, v)))
		}
	}
	return sc, chosen, hderr.Users(problems)
}

// remaining estimates the time the units left take (the one starting
// included), each step at its mean so far; false until every step has run
// once (a step's first run, which makes its data, is no guide to another's).
func remaining(steps []Step, took map[string][]time.Duration, left int) (time.Duration, bool) {
	var per time.Duration
	for _, st := range steps {
		d := took[st.Name]
		if len(d) == 0 {
			return 0, false
		}
		var sum time.Duration
		for _, x := range d {
			sum += x
		}
		per += sum / time.Duration(len(d))
	}
	return per * time.Duration(left) / time.Duration(len(steps)), true
}

// stillRunning says every minute that a unit still runs (a first round
// may spend minutes making its data); the returned func ends it.
func stillRunning(ctx context.Context, log io.Writer, what string) func() {
	done := make(chan struct{})
	began := time.Now()
	go func() {
		t := time.NewTicker(time.Minute)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				fmt.Fprintf(log, "%s: still running after %s\n", what, time.Since(began).Round(time.Second))
			}
		}
	}()
	return func() { close(done) }
}

// Run runs a study: every chosen variant's lab up, then Runs rounds with
// the variants interleaved, each going through every step; then the labs
// down (unless Keep), also when interrupted or failing. What was measured
// is summarised and stored as a run either way.
func Run(ctx context.Context, s *Study, o Options) (*Result, string, error) {
	if o.Inventory != nil { // the stored study says where each variant ran
		cp := *s
		cp.Variants = slices.Clone(s.Variants)
		s = &cp
	}
	res, pl, err := prepare(s, o)
	if err != nil {
		return nil, "", err
	}
	res.Decide, res.Budget, res.Completed, res.RoundTimes = o.Decide, o.Budget, map[string]int{}, map[string][]float64{}
	if o.Inventory != nil {
		res.Inventory = o.Inventory.File
	}
	sc, variants := res.Protocol, res.Variants
	if err := pl.checkRoom(sc); err != nil {
		return nil, "", err
	}
	if err := pl.checkHosts(ctx); err != nil {
		return nil, "", err
	}
	if err := pl.endpoints(ctx); err != nil {
		return nil, "", err
	}
	defer pl.close(ctx)
	started := time.Now()
	res.Installed = facts.InstalledHere()
	res.Speed = &RunSpeed{Start: facts.CoreSpeed()}
	if len(pl.groups) == 1 { // every lab at once, for the whole study
		if err := pl.upAll(ctx); err != nil {
			return nil, "", err
		}
	} else {
		fmt.Fprintf(o.Log, "study %s: %s\n", s.Name, groupsSaid(pl.groups, pairsOf(s), func(v string) string { return variant(s, v).Title() }))
	}
	rounds := sc.Runs // the pilot's, with --decide
	kept := map[string]int{}
	if o.Resume != nil {
		resumeFrom(res, *o.Resume, pl.groups)
		kept = res.Resumed.Rounds
		if res.Design != nil {
			rounds = res.Design.Rounds
		}
	}
	units := rounds * len(variants) * len(s.Steps)
	done := 0
	took := map[string][]time.Duration{}     // each step's durations so far (a first round's include making its data)
	completed := make([]int, len(pl.groups)) // each group's rounds run to the end
	for g, group := range pl.groups {
		completed[g] = kept[group[0]] // the same for a group's every variant
		done += completed[g] * len(group) * len(s.Steps)
		for _, v := range group {
			res.Completed[v] = completed[g]
		}
	}
	stop := func() bool { return ctx.Err() != nil || res.Failed != "" }
	// A stage is the rounds from first to rounds: the scale's (a pilot,
	// with --decide), then those the design adds. Each group of labs runs
	// a stage's rounds in turn, its labs up for them.
	for first := 1; first <= rounds && !stop(); {
		for g, group := range pl.groups {
			if stop() {
				break
			}
			from := max(first, completed[g]+1) // a resumed run's kept rounds are not run again
			if from > rounds {
				continue
			}
			if len(pl.groups) > 1 {
				pl.down(ctx)
				if err := pl.upGroup(ctx, group); err != nil {
					if ctx.Err() == nil {
						res.Failed = fmt.Sprintf("group %d: %v", g+1, err)
						fmt.Fprintf(o.Log, "study %s: %s\n", s.Name, res.Failed)
					}
					break
				}
			}
			for round := from; round <= rounds && !stop(); round++ {
				spent := map[string]float64{} // each variant's seconds in the round
				for _, name := range Order(group, round) {
					variantBegan := time.Now()
					for _, st := range s.Steps {
						if stop() {
							break
						}
						done++
						left := ""
						if eta, ok := remaining(s.Steps, took, units-done+1); ok {
							left = fmt.Sprintf(", ~%s left", eta.Round(time.Second))
						}
						fmt.Fprintf(o.Log, "study %s [%d/%d] round %d/%d, %s: %s%s\n", s.Name, done, units, round, rounds, variant(s, name).Title(), st.Name, left)
						began := time.Now()
						quiet := stillRunning(ctx, o.Log, fmt.Sprintf("study %s [%d/%d]: %s of %s", s.Name, done, units, st.Name, variant(s, name).Title()))
						l, err := pl.lab(ctx, name) // on remote hosts, its turn: its lab comes up
						if err != nil {
							quiet()
							if ctx.Err() == nil {
								res.Failed = fmt.Sprintf("round %d: %v", round, err)
								fmt.Fprintf(o.Log, "study %s: %s\n", s.Name, res.Failed)
							}
							break
						}
						samples, err := measure(ctx, l, pl.logOf(name), variant(s, name), st, sc, o, s.Name, round)
						if err != nil && ctx.Err() == nil { // once more, after a pause; the failure is recorded
							what := fmt.Sprintf("round %d, variant %s, step %s: %v", round, name, st.Name, failureSaid(err.Error()))
							fmt.Fprintf(o.Log, "study %s: %s; running it again in %v\n", s.Name, what, retryPause)
							res.Retried = append(res.Retried, what)
							sleepCtx(ctx, retryPause)
							samples, err = measure(ctx, l, pl.logOf(name), variant(s, name), st, sc, o, s.Name, round)
						}
						quiet()
						took[st.Name] = append(took[st.Name], time.Since(began))
						if err != nil && ctx.Err() == nil { // stop, keep what was measured
							res.Failed = fmt.Sprintf("round %d, variant %s, step %s: %v", round, name, st.Name, err)
							fmt.Fprintf(o.Log, "study %s: %s\n", s.Name, res.Failed)
							break
						}
						for i := range samples {
							samples[i].Round, samples[i].Variant = round, name
						}
						res.Samples = append(res.Samples, samples...)
					}
					spent[name] = time.Since(variantBegan).Seconds()
				}
				if !stop() {
					completed[g] = round
					for _, v := range group {
						res.Completed[v] = round
						res.RoundTimes[v] = append(res.RoundTimes[v], spent[v])
					}
				}
			}
		}
		res.Rounds = slices.Min(completed)
		first = rounds + 1
		if o.Decide && res.Design == nil && !stop() {
			var perRound float64 // a round of every variant, in seconds
			for _, t := range res.RoundTimes {
				perRound += stats.Median(t)
			}
			d := Plan(s, variants, res.Samples, sc.Runs, time.Duration(perRound*float64(time.Second)), o.Budget)
			res.Design, rounds = &d, d.Rounds
			units = rounds * len(variants) * len(s.Steps)
			fmt.Fprintf(o.Log, "study %s: %s\n", s.Name, d.Says())
		}
	}
	res.Interrupted = ctx.Err() != nil || res.Failed != ""
	res.Speed.End = facts.CoreSpeed()
	judgeRounds(o.Home, s, res)
	res.Deviations = append(s.DeviationsAt(o.Scale), Recorded(s, res.Installed, sc, res.Rounds, len(pl.groups), o.Inventory != nil)...)
	if res.Resumed != nil {
		res.Deviations = append(res.Deviations, Deviation{What: "resumed", Document: "one sitting (inferred)", Here: res.Resumed.says(),
			Why: "a study of many hours went on after it stopped; its rounds interleave as before, each lab's first round after the resumption makes its data anew", Recorded: true})
	}
	res.Finding = Finding(res)
	id, err := save(o, res, started)
	if err == nil && res.Failed != "" {
		err = fmt.Errorf("study %s stopped: %s (what was measured is kept in run %s; go on from it with `hadrill study run --resume %s`)", s.Name, res.Failed, id, id)
	}
	return res, id, err
}

// judgeRounds makes res's figures and checks from its rounds by s's
// claims: each figure summarized, each claim judged (by its two-look
// design, when it ran one), and what the steps' runs saw at a limit said.
// A run does so at its end; a campaign's tally again by today's claims.
func judgeRounds(home string, s *Study, res *Result) {
	res.Cells, res.Checks = Summarize(s, res.Protocol, res.Variants, res.Samples)
	if res.Design != nil {
		res.Checks = res.Design.Judge(s, res.Checks, res.Samples)
	}
	Explain(home, res)
}

// prepare is what a run and a dry run check first, every problem at
// once: the scale and variants chosen, where the labs go (placement), a
// resumed run's fit and --decide's: the result to fill and its placement.
func prepare(s *Study, o Options) (*Result, *placement, error) {
	sc, variants, cerr := Choose(s, o)
	res := &Result{Study: s, Scale: o.Scale, Protocol: sc, Variants: variants, Labs: map[string]string{}}
	pl, perr := newPlacement(s, variants, o, res)
	var rerr error
	if o.Resume != nil {
		rerr = checkResume(*o.Resume, s, o, variants, facts.InstalledHere())
	}
	return res, pl, hderr.Join([]error{cerr, perr, checkDecide(sc, o), rerr})
}

// RunSpeed is a core's speed when a study's run began and ended.
type RunSpeed struct {
	Start facts.Speed `json:"start"`
	End   facts.Speed `json:"end"`
}

// Said is the speed in words, for the report.
func (r RunSpeed) Said() string {
	if r.Start.CPUMs == 0 {
		return ""
	}
	out := fmt.Sprintf("a core ran hadrill's fixed loop in %.0f ms of CPU when the run began", r.Start.CPUMs)
	if r.End.CPUMs > 0 {
		out += fmt.Sprintf(", %.0f ms when it ended", r.End.CPUMs)
	}
	return out + " (more: a slower core; a CPU-bound lab's absolute figures move with it from day to day, ratios within a run do not)"
}

// checkDecide refuses a two-look design the scale cannot pilot, and a
// budget without one.
func checkDecide(sc Scale, o Options) error {
	var errs []error
	if o.Budget < 0 {
		errs = append(errs, hderr.User("--budget: %v: want a positive duration (30m, 2h)", o.Budget))
	}
	if o.Budget != 0 && !o.Decide {
		errs = append(errs, hderr.User("--budget: only with --decide (it bounds the rounds a two-look design adds)"))
	}
	if o.MaxMemory < 0 {
		errs = append(errs, hderr.User("--max-memory: want a positive size (4G, 512M)"))
	}
	if o.Decide && sc.Runs < 2 && sc.Runs > 0 {
		errs = append(errs, hderr.User("--decide: the %s scale runs %d round: a two-look design's pilot needs at least 2 to measure a spread", o.Scale, sc.Runs))
	}
	return hderr.Join(errs)
}

// retryPause is how long a failed step waits before it runs again.
const retryPause = 5 * time.Second

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// firstLine is an error's first line (sysbench's repeat the same failure).
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// failureSaid is what a retried step's failure records: its first line
// and, when the lab's load balancers acted while it ran (a server marked
// down, its sessions shut: what a client sees as a lost connection), what
// they did.
func failureSaid(s string) string {
	out := firstLine(s)
	if _, lbs, ok := strings.Cut(s, "\nwhile it ran, "); ok {
		out += "; while it ran, " + strings.ReplaceAll(strings.TrimSpace(lbs), "\n", "; ")
	}
	return out
}

func variant(s *Study, name string) Variant {
	for _, v := range s.Variants {
		if v.Name == name {
			return v
		}
	}
	return Variant{}
}

// measure runs one step on one variant's lab (a run of its own in the
// store) and returns its figures; log is where the lab says what it does.
func measure(ctx context.Context, l workload.Lab, log *labLog, v Variant, st Step, sc Scale, o Options, study string, round int) ([]Sample, error) {
	target, credentials := cmp.Or(st.Target, v.Target, plan.LBAlias), ""
	if v.Endpoint != "" {
		target, credentials = v.Endpoint, v.Credentials
	} else {
		unlock, err := state.Lock(o.Home, l.Plan().Lab, state.Bench, o.Wait)
		if err != nil {
			return nil, err
		}
		defer unlock()
	}
	k := kindOf(st)
	if k == nil {
		return nil, fmt.Errorf("unknown step kind %q", st.Kind)
	}
	return k.measure(ctx, measurement{lab: l, log: log, step: st, scale: sc, opts: o, target: target, credentials: credentials, named: st.Target != "" || v.Target != "", readTarget: v.ReadTarget, study: study, round: round})
}

func errIf(cond bool, msg string) error {
	if cond {
		return errors.New(msg)
	}
	return nil
}

func save(o Options, res *Result, started time.Time) (string, error) {
	b, err := json.Marshal(res)
	if err != nil {
		return "", err
	}
	r := &results.Run{ID: results.NewID(started), Kind: Kind, Lab: res.Study.Name, Started: started.UTC(), Finished: time.Now().UTC(),
		Command: o.Command, Params: map[string]any{"study": res.Study.Name, "scale": res.Scale, "variants": res.Variants},
		Results: b, Interrupted: res.Interrupted}
	return r.ID, results.Save(o.Home, r)
}

// LoadRun reads a stored study run.
func LoadRun(home, id string) (*results.Run, *Result, error) {
	r, err := results.Load(home, id)
	if err != nil {
		return nil, nil, err
	}
	if r.Kind != Kind {
		return nil, nil, hderr.User("RUN: %s is a %s run, not a study's", id, r.Kind)
	}
	var res Result
	if err := json.Unmarshal(r.Results, &res); err != nil {
		return nil, nil, err
	}
	return r, &res, nil
}
