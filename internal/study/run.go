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

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/inventory"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/state"
	"github.com/hadrill/hadrill/internal/workload"
	"github.com/hadrill/hadrill/internal/workload/fio"
	"github.com/hadrill/hadrill/internal/workload/sysbench"
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

// Run runs a study: every chosen variant's lab up, then Runs rounds with
// the variants interleaved, each going through every step; then the labs
// down (unless Keep), also when interrupted or failing. What was measured
// is summarised and stored as a run either way.
func Run(ctx context.Context, s *Study, o Options) (*Result, string, error) {
	sc, variants, cerr := Choose(s, o)
	if o.Inventory != nil { // the stored study says where each variant ran
		cp := *s
		cp.Variants = slices.Clone(s.Variants)
		s = &cp
	}
	res := &Result{Study: s, Scale: o.Scale, Protocol: sc, Variants: variants, Labs: map[string]string{}}
	if o.Inventory != nil {
		res.Inventory = o.Inventory.File
	}
	pl, perr := newPlacement(s, variants, o, res)
	if err := hderr.Join([]error{cerr, perr}); err != nil { // every problem at once
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
	if err := pl.upAll(ctx); err != nil {
		return nil, "", err
	}
	units := sc.Runs * len(variants) * len(s.Steps)
	done, t0 := 0, time.Now()
	stop := func() bool { return ctx.Err() != nil || res.Failed != "" }
	for round := 1; round <= sc.Runs && !stop(); round++ {
		for _, name := range Order(variants, round) {
			for _, st := range s.Steps {
				if stop() {
					break
				}
				done++
				left := ""
				if done > 1 {
					left = fmt.Sprintf(", ~%s left", (time.Since(t0) / time.Duration(done-1) * time.Duration(units-done+1)).Round(time.Second))
				}
				fmt.Fprintf(o.Log, "study %s [%d/%d] round %d/%d, %s: %s%s\n", s.Name, done, units, round, sc.Runs, variant(s, name).Title(), st.Name, left)
				l, err := pl.lab(ctx, name) // on remote hosts, its turn: its lab comes up
				if err != nil {
					if ctx.Err() == nil {
						res.Failed = fmt.Sprintf("round %d: %v", round, err)
						fmt.Fprintf(o.Log, "study %s: %s\n", s.Name, res.Failed)
					}
					break
				}
				samples, err := measure(ctx, l, variant(s, name), st, sc, o)
				if err != nil && ctx.Err() == nil { // once more, after a pause; the failure is recorded
					what := fmt.Sprintf("round %d, variant %s, step %s: %v", round, name, st.Name, firstLine(err.Error()))
					fmt.Fprintf(o.Log, "study %s: %s; running it again in %v\n", s.Name, what, retryPause)
					res.Retried = append(res.Retried, what)
					sleepCtx(ctx, retryPause)
					samples, err = measure(ctx, l, variant(s, name), st, sc, o)
				}
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
		}
		if !stop() {
			res.Rounds = round
		}
	}
	res.Interrupted = ctx.Err() != nil || res.Failed != ""
	res.Cells, res.Checks = Summarize(s, sc, variants, res.Samples)
	Explain(o.Home, res)
	res.Finding = Finding(s, o.Scale, res.Rounds, res.Cells, res.Checks, res.Interrupted)
	if res.Inventory != "" {
		res.Finding += " " + hostsNote(s, variants, res.Inventory)
	}
	if res.Failed != "" {
		res.Finding = "Stopped by a step that failed twice (" + firstLine(res.Failed) + "); what was measured before it: " + res.Finding
	} else if len(res.Retried) > 0 {
		res.Finding += fmt.Sprintf(" %d step(s) failed once and were run again (%s).", len(res.Retried), strings.Join(res.Retried, "; "))
	}
	id, err := save(o, res, started)
	if err == nil && res.Failed != "" {
		err = fmt.Errorf("study %s stopped: %s (what was measured is kept in run %s)", s.Name, res.Failed, id)
	}
	return res, id, err
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

func variant(s *Study, name string) Variant {
	for _, v := range s.Variants {
		if v.Name == name {
			return v
		}
	}
	return Variant{}
}

// measure runs one step on one variant's lab (a run of its own in the
// store) and returns its figures.
func measure(ctx context.Context, l workload.Lab, v Variant, st Step, sc Scale, o Options) ([]Sample, error) {
	target, credentials := cmp.Or(st.Target, v.Target, plan.LBAlias), ""
	if v.Endpoint != "" {
		target, credentials = v.Endpoint, v.Credentials
	} else {
		unlock, err := state.Lock(o.Home, l.Plan().Lab, state.Bench)
		if err != nil {
			return nil, err
		}
		defer unlock()
	}
	switch st.Kind {
	case "bulk-replication":
		return bulk(ctx, l, st, sc, o)
	case "disk":
		return disk(ctx, l, st, sc, o)
	}
	if st.Kind == "slap" { // one server: mariadb-slap takes no host list
		e, err := workload.Resolve(ctx, l, target, credentials)
		if err != nil {
			return nil, err
		}
		out, err := workload.Slap(ctx, l, e, st.slap(sc), o.Command, io.Discard)
		if err != nil {
			return nil, err
		}
		var samples []Sample
		for _, pt := range out.Results {
			samples = append(samples, Sample{Step: st.Name, Metric: fmt.Sprintf("avg_s@%d", pt.Concurrency), Value: pt.AvgS, RunID: out.RunID},
				Sample{Step: st.Name, Metric: fmt.Sprintf("qps@%d", pt.Concurrency), Value: pt.QPS, RunID: out.RunID})
		}
		return samples, nil
	}
	resolve := workload.Resolve
	if st.Kind == "sysbench" {
		resolve = workload.ResolveList
	}
	e, err := resolve(ctx, l, target, credentials)
	if err != nil {
		return nil, err
	}
	switch st.Kind {
	case "commit-latency":
		out, err := workload.CommitLatency(ctx, l, []workload.Endpoint{e}, sc.Count, o.Command, io.Discard)
		if err != nil || len(out.Results) == 0 {
			return nil, errors.Join(err, errIf(err == nil, "no commit measured"))
		}
		r := out.Results[0]
		return []Sample{{Step: st.Name, Metric: "avg_ms", Value: r.Avg, RunID: out.RunID},
			{Step: st.Name, Metric: "p50_ms", Value: r.P50, RunID: out.RunID},
			{Step: st.Name, Metric: "p99_ms", Value: r.P99, RunID: out.RunID}}, nil
	case "sysbench":
		rand := cmp.Or(st.RandType, "special") // sysbench's default, which the documents ran
		p := sysbench.Params{Workload: st.Workload, Tables: sc.Tables, TableSize: sc.TableSize, Threads: sc.Threads, Time: sc.Time,
			Runs: 1, RandType: rand, Interval: 1, Warmup: sc.Warmup, RandSeed: 1, MultiWrite: balanced(l, target), Events: sc.Events}
		out, err := workload.Run(ctx, l, workload.Sweep{Params: p, Target: e, Command: o.Command, Log: io.Discard})
		if err != nil {
			return nil, err
		}
		var samples []Sample
		for _, pt := range out.Results {
			if pt.Partial {
				continue
			}
			samples = append(samples, Sample{Step: st.Name, Metric: fmt.Sprintf("tps@%d", pt.Threads), Value: pt.TPS, RunID: out.RunID},
				Sample{Step: st.Name, Metric: fmt.Sprintf("p95_ms@%d", pt.Threads), Value: pt.P95, RunID: out.RunID},
				Sample{Step: st.Name, Metric: fmt.Sprintf("p99_ms@%d", pt.Threads), Value: pt.P99, RunID: out.RunID},
				Sample{Step: st.Name, Metric: fmt.Sprintf("avg_ms@%d", pt.Threads), Value: pt.AvgLat, RunID: out.RunID})
		}
		return samples, nil
	}
	return nil, fmt.Errorf("unknown step kind %q", st.Kind)
}

// bulk writes each row count on one node and times until all are on
// another (by default the first and the last node: in two regions, one in
// each).
func bulk(ctx context.Context, l workload.Lab, st Step, sc Scale, o Options) ([]Sample, error) {
	names := l.Plan().NodeNames()
	from, to := st.From, st.To
	if from == "" {
		from = names[0]
	}
	if to == "" {
		to = names[len(names)-1]
	}
	a, err := workload.Resolve(ctx, l, from, "")
	if err != nil {
		return nil, err
	}
	b, err := workload.Resolve(ctx, l, to, "")
	if err != nil {
		return nil, err
	}
	out, err := workload.BulkReplication(ctx, l, a, b, sc.Rows, o.Command, io.Discard)
	if err != nil {
		return nil, err
	}
	var samples []Sample
	rows, _ := out.Results.([]workload.Bulk)
	for _, r := range rows {
		samples = append(samples, Sample{Step: st.Name, Metric: fmt.Sprintf("visible_s@%d", r.Rows), Value: r.VisibleS, RunID: out.RunID},
			Sample{Step: st.Name, Metric: fmt.Sprintf("after_last_s@%d", r.Rows), Value: r.AfterLastS, RunID: out.RunID})
	}
	return samples, nil
}

// disk runs one fio test on a node's volume (by default the first node
// with volumes, its first volume, the 1 GB file test).
func disk(ctx context.Context, l workload.Lab, st Step, sc Scale, o Options) ([]Sample, error) {
	var nv *plan.NodeVolume
	for _, x := range l.Plan().AllVolumes() {
		if (st.Node == "" || x.Node.Name == st.Node) && (st.Volume == "" || x.Volume.Name == st.Volume) {
			nv = &x
			break
		}
	}
	if nv == nil {
		return nil, fmt.Errorf("no volume %q on node %q (the variant needs storage)", st.Volume, st.Node)
	}
	test, _ := fio.Named(testName(st))
	p := workload.DiskParams{Volumes: []string{nv.Node.Name + "/" + nv.Volume.Name}, Tests: []string{test.Name},
		Time: time.Duration(max(sc.Time, 1)) * time.Second, Runs: 1}
	out, err := workload.DiskBench(ctx, l, []plan.NodeVolume{*nv}, []fio.Test{test}, p, o.Command, io.Discard)
	if err != nil || len(out.Results) == 0 {
		return nil, errors.Join(err, errIf(err == nil, "no fio result"))
	}
	r := out.Results[0]
	return []Sample{{Step: st.Name, Metric: "seconds", Value: r.Seconds, RunID: out.RunID},
		{Step: st.Name, Metric: "iops", Value: r.IOPS, RunID: out.RunID},
		{Step: st.Name, Metric: "mbps", Value: r.MBps, RunID: out.RunID},
		{Step: st.Name, Metric: "p50_ms", Value: r.P50Ms, RunID: out.RunID}}, nil
}

// balanced: the target spreads writes over several nodes (a lab's balanced
// load balancer, or its nodes as sysbench's host list).
func balanced(l workload.Lab, target string) bool {
	b, ok := l.(interface{ Balanced(string) bool })
	return ok && b.Balanced(target)
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
