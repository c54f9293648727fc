package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/hadrill/hadrill/internal/words"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/monitor"
	"github.com/hadrill/hadrill/internal/stats"
	"github.com/hadrill/hadrill/internal/workload"

	"github.com/spf13/cobra"

	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/workload/sysbench"
	"github.com/hadrill/hadrill/internal/workload/tpcc"
)

func (cli *app) runsCmd() *cobra.Command {
	c := &cobra.Command{Use: "runs", Short: "List and compare recorded runs"}
	c.AddCommand(cli.runsExportCmd(), cli.runsListCmd(), cli.runsCompareCmd())
	return c
}

func (cli *app) runsListCmd() *cobra.Command {
	return &cobra.Command{
		Use: "list", Short: "List the runs in the run store", Args: args(0, 0, "no arguments"),
		RunE: func(*cobra.Command, []string) error {
			h, err := cli.home()
			if err != nil {
				return err
			}
			var runs []*results.Run
			var damaged []map[string]string
			for _, id := range results.List(h) {
				r, err := results.Load(h, id)
				if err != nil { // listed, with what is wrong: a run never vanishes from the list
					damaged = append(damaged, map[string]string{"run_id": id, "damaged": err.Error()})
					continue
				}
				r.Configs, r.Topology, r.Results = nil, nil, nil
				runs = append(runs, r)
			}
			var out any = runs
			if len(damaged) > 0 {
				out = map[string]any{"runs": runs, "damaged": damaged}
			}
			return cli.emit(out, func() { printRuns(os.Stdout, runs, damaged) })
		},
	}
}

// printRuns writes the run list: a line a run, the damaged ones with what
// is wrong with them.
func printRuns(out io.Writer, runs []*results.Run, damaged []map[string]string) {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "RUN\tKIND\tLAB\tSTARTED\tSECONDS\tNOTE")
	for _, r := range runs {
		note := ""
		if r.Interrupted {
			note = "interrupted: partial"
		}
		secs := "?"
		if d, ok := r.Seconds(); ok {
			secs = fmt.Sprintf("%.0f", d)
		} else {
			note = strings.TrimPrefix(note+"; its finish is not after its start", "; ")
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Kind, r.Lab, r.Started.Format("2006-01-02 15:04:05"), secs, note)
	}
	for _, d := range damaged {
		fmt.Fprintf(w, "%s\t?\t?\t?\t?\t%s\n", d["run_id"], strings.TrimPrefix(d["damaged"], "RUN_ID: run "+d["run_id"]+": "))
	}
	w.Flush()
}

func (cli *app) runsCompareCmd() *cobra.Command {
	return &cobra.Command{
		Use: "compare RUN_ID...", Short: "Compare sysbench or TPC-C runs side by side (TPS or tpmC with its interval, latency percentiles, the change against the first run and whether it is within noise)",
		Args: args(1, -1, "one or more run ids"),
		RunE: func(_ *cobra.Command, ids []string) error {
			h, err := cli.home()
			if err != nil {
				return err
			}
			loaded, c, problems := loadComparable(h, ids)
			if len(problems) > 0 {
				return hderr.Join(problems)
			}
			return c.compare(cli, h, loaded)
		},
	}
}

// A comparison is a kind of run runs compare sets side by side, and how.
type comparison struct {
	kind    results.Kind
	name    string // as the refusals name its runs
	compare func(cli *app, home string, runs []*results.Run) error
}

// comparisons are the kinds of run runs compare takes, in the order its
// refusals name them.
var comparisons = []comparison{
	{results.Sysbench, "sysbench", (*app).compareSweeps},
	{results.TPCC, "TPC-C", func(cli *app, _ string, runs []*results.Run) error { return cli.compareTPCC(runs) }},
}

// compareSweeps sets sysbench runs side by side.
func (cli *app) compareSweeps(home string, runs []*results.Run) error {
	cols, err := sweepColumns(home, runs)
	if err != nil {
		return err
	}
	return cli.emit(cols, func() { printSweepColumns(os.Stdout, cols, runs) })
}

// sweepColumns are sysbench runs as columns: each thread count's TPS with
// its interval, latencies and cost, and its change against the first run.
func sweepColumns(home string, runs []*results.Run) ([]column, error) {
	var cols []column
	var problems []error
	for _, r := range runs {
		var pts []sysbench.Point
		if err := json.Unmarshal(r.Results, &pts); err != nil || !sensible(pts) {
			problems = append(problems, hderr.User("RUN_ID: run %s: its results are not sysbench's points (thread counts, finite TPS): its run.json is damaged", r.ID))
			continue
		}
		col := column{ID: r.ID, Lab: r.Lab, Workload: fmt.Sprint(paramOf(r, "workload"))}
		costs := workload.Costs(home, r, pts)
		for i := range pts {
			var series [][]float64
			for _, run := range pts[i].Runs {
				var tps []float64
				for _, iv := range run.Intervals {
					tps = append(tps, iv.TPS)
				}
				series = append(series, tps)
			}
			pt := comparePoint{Threads: pts[i].Threads, TPS: stats.FigureOf(series, stats.Confidence), Runs: len(pts[i].Runs), P95: pts[i].P95, P99: pts[i].P99}
			if c, ok := costs[pts[i].Threads]; ok {
				pt.Cost = &c
			}
			col.Points = append(col.Points, pt)
		}
		cols = append(cols, col)
	}
	if len(problems) > 0 {
		return nil, hderr.Join(problems)
	}
	for i := 1; i < len(cols); i++ { // against the first run
		for j := range cols[i].Points {
			pt := &cols[i].Points[j]
			if base, ok := pointOf(cols[0].Points, pt.Threads); ok {
				pct, noise, known := pt.TPS.Versus(base.TPS)
				pt.DeltaPct = &pct
				if known {
					pt.WithinNoise = &noise
				}
			}
		}
	}
	return cols, nil
}

// printSweepColumns writes sysbench runs side by side, a row a thread
// count, then how the figures were made and what differs between the runs.
func printSweepColumns(out io.Writer, cols []column, runs []*results.Run) {
	for i, c := range cols {
		fmt.Fprintf(out, "%c: run %s, lab %s, %s\n", 'A'+i, c.ID, c.Lab, c.Workload)
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(w, "threads\t")
	for i := range cols {
		fmt.Fprintf(w, "%c tps\t95 %% interval\tp95 ms\tp99 ms\tCPU ms/tx\tIOs/tx\t", 'A'+i)
		if i > 0 {
			fmt.Fprintf(w, "vs A\t")
		}
	}
	fmt.Fprintln(w)
	for _, n := range countsOf(cols, func(c column) []comparePoint { return c.Points }, func(p comparePoint) int { return p.Threads }) {
		fmt.Fprintf(w, "%d\t", n)
		for i, c := range cols {
			pt, ok := pointOf(c.Points, n)
			switch {
			case !ok:
				fmt.Fprint(w, "-\t-\t-\t-\t-\t-\t")
			case pt.TPS.Known:
				fmt.Fprintf(w, "%.1f\t%.1f–%.1f\t%.2f\t%.2f\t%s\t", pt.TPS.Mean, pt.TPS.Lo, pt.TPS.Hi, pt.P95, pt.P99, costCells(pt.Cost))
			default:
				fmt.Fprintf(w, "%.1f\t-\t%.2f\t%.2f\t%s\t", pt.TPS.Mean, pt.P95, pt.P99, costCells(pt.Cost))
			}
			if i > 0 {
				fmt.Fprintf(w, "%s\t", stats.ChangeText(pt.DeltaPct, pt.WithinNoise)) // a missing point has neither
			}
		}
		fmt.Fprintln(w)
	}
	w.Flush()
	printSweepMethod(out, cols)
	if len(cols) > 1 {
		fmt.Fprintln(out, "vs A: the change of the mean TPS against A's; within noise when the two 95 % intervals overlap")
		printRunDifferences(out, runs)
	}
}

// countsOf are every thread (client) count of the columns' points, in
// order.
func countsOf[C, P any](cols []C, points func(C) []P, count func(P) int) []int {
	var out []int
	for _, c := range cols {
		for _, p := range points(c) {
			if n := count(p); !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return out
}

// printSweepMethod says how the compared figures were made, and which
// points never settled.
func printSweepMethod(out io.Writer, cols []column) {
	var methods []string
	for _, c := range cols {
		for _, pt := range c.Points {
			m := cmp.Or(pt.TPS.Method, "none where a run is too short for one")
			if !slices.Contains(methods, m) {
				methods = append(methods, m)
			}
			if !pt.TPS.Settled {
				fmt.Fprintf(out, "note: %s at %d threads never settled (its TPS still moved in the run's second half): its figure is the whole run's\n", c.ID, pt.Threads)
			}
		}
	}
	fmt.Fprintf(out, "tps: the mean of each run's seconds after its warm-up (cut where the series settles); interval: %s\n", strings.Join(methods, "; "))
	fmt.Fprintln(out, "CPU ms/tx and IOs/tx: every host's CPU but the load generator's, and every emulated disk's IOs, over the point's measured seconds, per transaction")
}

// printRunDifferences lists what differs between the runs: the first
// database node's settings, the tools' versions, the load's parameters.
func printRunDifferences(out io.Writer, runs []*results.Run) {
	for _, part := range results.RunDifferences(runs) {
		fmt.Fprintf(out, "\nwhat differs, %s:\n", part.What)
		w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprint(w, "\t")
		for _, r := range runs {
			fmt.Fprintf(w, "%s\t", r.ID)
		}
		fmt.Fprintln(w)
		for _, d := range part.Differences {
			fmt.Fprintf(w, "%s\t", d.Setting)
			for _, r := range runs {
				fmt.Fprintf(w, "%s\t", cmp.Or(d.Values[r.ID], "-"))
			}
			fmt.Fprintln(w)
		}
		w.Flush()
	}
}

// column is one run in runs compare: per thread count its TPS (the
// steady seconds' mean with a 95 % interval), p95 and p99, and against the
// first run the change in percent and whether it is within noise.
type column struct {
	ID       string         `json:"run_id"`
	Lab      string         `json:"lab"`
	Workload string         `json:"workload"`
	Points   []comparePoint `json:"points"`
}

type comparePoint struct {
	Threads     int            `json:"threads"`
	TPS         stats.Figure   `json:"tps"`
	Runs        int            `json:"runs"`
	P95         float64        `json:"p95_ms"`
	P99         float64        `json:"p99_ms"`
	Cost        *workload.Cost `json:"per_transaction,omitempty"` // CPU and IOs a transaction cost the lab
	DeltaPct    *float64       `json:"delta_pct,omitempty"`
	WithinNoise *bool          `json:"within_noise,omitempty"` // absent: either run has no interval (noise unknown)
}

// costCells are a point's CPU milliseconds and IOs per transaction ("-"
// where the run kept no samples, or had no emulated disks).
func costCells(c *workload.Cost) string {
	if c == nil {
		return "-\t-"
	}
	io := "-"
	if c.Disks {
		io = fmt.Sprintf("%.2f", c.IOs)
	}
	return fmt.Sprintf("%.2f\t%s", c.CPUms, io)
}

// sensible says whether sysbench points hold what a sweep measures:
// thread counts from 1, finite non-negative figures.
func sensible(pts []sysbench.Point) bool {
	for _, p := range pts {
		if p.Threads < 1 || !finite(p.TPS) || p.TPS < 0 || !finite(p.P95) || !finite(p.P99) {
			return false
		}
		for _, r := range p.Runs {
			for _, iv := range r.Intervals {
				if !finite(iv.TPS) || iv.TPS < 0 {
					return false
				}
			}
		}
	}
	return true
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) && math.Abs(v) < 1e15 }

func pointOf(pts []comparePoint, threads int) (comparePoint, bool) {
	for _, p := range pts {
		if p.Threads == threads {
			return p, true
		}
	}
	return comparePoint{}, false
}

// paramOf is one of a run's load parameters (nil when absent).
func paramOf(r *results.Run, key string) any {
	var p map[string]any
	b, _ := json.Marshal(r.Params)
	_ = json.Unmarshal(b, &p)
	return p[key]
}

// runsExportCmd writes a run's exporter series (a lab with monitoring on)
// as OpenMetrics, for the user's own Prometheus.
func (cli *app) runsExportCmd() *cobra.Command {
	var openMetrics bool
	var file string
	c := &cobra.Command{
		Use:   "export RUN_ID --openmetrics [--file FILE]",
		Short: "Write a run's exporter series (monitoring on) as OpenMetrics with timestamps, for promtool tsdb create-blocks-from openmetrics",
		Long:  runsExportLong,
		Args:  args(1, 1, "one run id"),
		RunE: func(_ *cobra.Command, a []string) error {
			var problems []error
			if !openMetrics {
				problems = append(problems, hderr.User("--openmetrics: required (the one export format)"))
			}
			h, err := cli.home()
			if err != nil {
				return err
			}
			r, err := results.Load(h, a[0])
			if err != nil {
				problems = append(problems, err)
			}
			if len(problems) > 0 {
				return hderr.Join(problems)
			}
			in, err := monitor.Open(results.RunDir(h, r.ID))
			if errors.Is(err, os.ErrNotExist) {
				return hderr.User("RUN_ID: run %s has no exporter series: its lab %s ran without monitoring (hadrill up --monitoring, or monitoring: true in the spec)", r.ID, r.Lab)
			}
			if err != nil {
				return err
			}
			defer in.Close()
			return writeExport(in, r.ID, file)
		},
	}
	c.Flags().BoolVar(&openMetrics, "openmetrics", false, "OpenMetrics text with timestamps")
	c.Flags().StringVar(&file, "file", "", "write to FILE (default: standard output)")
	return c
}

// writeExport writes a run's exporter series as OpenMetrics to file,
// whole or not at all (standard output when file is "").
func writeExport(in io.Reader, id, file string) error {
	out := io.Writer(os.Stdout)
	var f *os.File
	var err error
	if file != "" {
		if f, err = os.CreateTemp(filepath.Dir(file), ".export-*"); err != nil {
			return hderr.User("--file: cannot write %s: %v", file, err)
		}
		defer os.Remove(f.Name()) // written whole or not at all
		out = f
	}
	n, err := monitor.WriteOpenMetrics(in, out, []monitor.Label{{Name: "hadrill_run", Value: id}})
	if err != nil {
		if f != nil {
			f.Close()
		}
		return err
	}
	if f != nil {
		if err := errors.Join(f.Close(), os.Rename(f.Name(), file)); err != nil {
			return err
		}
		warnf("%d samples of run %s written to %s", n, id, file)
	}
	return nil
}

// loadComparable loads the runs runs compare sets side by side: every one
// found, of a kind it compares, all of one kind (every problem at once).
func loadComparable(h string, ids []string) ([]*results.Run, comparison, []error) {
	var runs []*results.Run
	var problems []error
	byKind := map[results.Kind][]string{}
	var names []string
	for _, c := range comparisons {
		names = append(names, c.name)
	}
	for _, id := range ids {
		r, err := results.Load(h, id)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		if !slices.ContainsFunc(comparisons, func(c comparison) bool { return c.kind == r.Kind }) {
			problems = append(problems, hderr.User("RUN_ID: %s is a %s run; runs compare sets %s runs side by side (a study compares any step between set-ups: hadrill study)", id, r.Kind, words.Or(names)))
			continue
		}
		byKind[r.Kind] = append(byKind[r.Kind], id)
		runs = append(runs, r)
	}
	var which comparison
	var parts []string
	for _, c := range comparisons {
		if ids := byKind[c.kind]; len(ids) > 0 {
			which = c
			parts = append(parts, fmt.Sprintf("%s are %s runs", strings.Join(ids, ", "), c.name))
		}
	}
	if len(parts) > 1 {
		problems = append(problems, hderr.User("RUN_ID: runs of one kind are compared: %s", strings.Join(parts, "; ")))
	}
	return runs, which, problems
}

// tpccColumn is one TPC-C run in runs compare.
type tpccColumn struct {
	ID         string `json:"run_id"`
	Lab        string `json:"lab"`
	Target     string `json:"target"`
	Warehouses int    `json:"warehouses"`
	tpcc.Compared
	Check *workload.TPCCCheck   `json:"check,omitempty"`
	Costs map[int]workload.Cost `json:"costs_per_transaction,omitempty"`
}

// compareTPCC prints TPC-C runs side by side: per client count each
// run's tpmC (the median of its runs, with the interval of the median),
// New-Order's p95 and p99, errors, CPU and IOs per transaction, and the
// change against the first run.
func (cli *app) compareTPCC(runs []*results.Run) error {
	var outs []workload.TPCCOutcome
	var problems []error
	for _, r := range runs {
		var o workload.TPCCOutcome
		if err := json.Unmarshal(r.Results, &o); err != nil || !sensibleTPCC(o.Results) {
			problems = append(problems, hderr.User("RUN_ID: run %s: its results are not TPC-C's points (client counts, finite tpmC): its run.json is damaged", r.ID))
			continue
		}
		outs = append(outs, o)
	}
	if len(problems) > 0 {
		return hderr.Join(problems)
	}
	var pts [][]tpcc.Point
	for _, o := range outs {
		pts = append(pts, o.Results)
	}
	var cols []tpccColumn
	for i, c := range tpcc.Compare(pts) {
		cols = append(cols, tpccColumn{ID: runs[i].ID, Lab: runs[i].Lab, Target: outs[i].Target, Warehouses: outs[i].Warehouses, Compared: c, Check: outs[i].Check, Costs: outs[i].Costs})
	}
	return cli.emit(cols, func() { printTPCCColumns(os.Stdout, cols, runs) })
}

// printTPCCColumns writes TPC-C runs side by side, a row a client count,
// then how the figures were made and what differs between the runs.
func printTPCCColumns(out io.Writer, cols []tpccColumn, runs []*results.Run) {
	for i, c := range cols {
		check := "not checked"
		if c.Check != nil {
			check = "consistency check passed"
			if !c.Check.Passed {
				check = "consistency check FAILED: " + strings.Join(c.Check.Failures, "; ")
			}
		}
		fmt.Fprintf(out, "%c: run %s, lab %s, TPC-C %d warehouse(s) through %s, %s\n", 'A'+i, c.ID, c.Lab, c.Warehouses, c.Target, check)
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(w, "clients\t")
	for i := range cols {
		fmt.Fprintf(w, "%c tpmC\tinterval\tNO p95 ms\tNO p99 ms\terrors\tCPU ms/tx\tIOs/tx\t", 'A'+i)
		if i > 0 {
			fmt.Fprint(w, "vs A\t")
		}
	}
	fmt.Fprintln(w)
	var coverage []string
	for _, n := range countsOf(cols, func(c tpccColumn) []tpcc.ComparedPoint { return c.Points }, func(p tpcc.ComparedPoint) int { return p.Threads }) {
		fmt.Fprintf(w, "%d\t", n)
		for i, c := range cols {
			fmt.Fprint(w, tpccCells(c, n, i > 0, &coverage))
		}
		fmt.Fprintln(w)
	}
	w.Flush()
	fmt.Fprintf(out, "tpmC: New-Order transactions a minute, the median of the runs at each client count; interval: the median's, from the runs' order statistics (%s coverage; one run: none)\n", cmp.Or(strings.Join(coverage, ", "), "no"))
	fmt.Fprintln(out, "NO p95/p99: New-Order's latency percentiles in the median run; errors: every transaction type's, over every run")
	fmt.Fprintln(out, "CPU ms/tx and IOs/tx: every host's CPU but the load generator's, and every emulated disk's IOs, over the measured runs, per transaction of any type")
	if len(cols) > 1 {
		fmt.Fprintln(out, "vs A: the change of the median tpmC against A's; within noise when the two intervals overlap")
		printRunDifferences(out, runs)
	}
}

// tpccCells are a column's cells at a client count (tab-ended; versus:
// with its change against the first), each interval's coverage noted.
func tpccCells(c tpccColumn, n int, versus bool, coverage *[]string) string {
	j := slices.IndexFunc(c.Points, func(p tpcc.ComparedPoint) bool { return p.Threads == n })
	if j < 0 {
		if versus {
			return "-\t-\t-\t-\t-\t-\t-\t-\t"
		}
		return "-\t-\t-\t-\t-\t-\t-\t"
	}
	p := c.Points[j]
	iv := "-"
	if p.TpmC.N > 1 {
		iv = fmt.Sprintf("%.0f–%.0f", p.TpmC.Lo, p.TpmC.Hi)
		if cv := fmt.Sprintf("%.0f %%", 100*p.TpmC.Coverage); !slices.Contains(*coverage, cv) {
			*coverage = append(*coverage, cv)
		}
	}
	no := p.Txn(tpcc.NewOrder)
	var cost *workload.Cost
	if cst, ok := c.Costs[n]; ok {
		cost = &cst
	}
	s := fmt.Sprintf("%.0f\t%s\t%.1f\t%.1f\t%d\t%s\t", p.TpmC.Median, iv, no.P95, no.P99, p.Errors, costCells(cost))
	if versus {
		s += stats.ChangeText(p.DeltaPct, p.WithinNoise) + "\t"
	}
	return s
}

// sensibleTPCC says whether TPC-C points hold what a run measures.
func sensibleTPCC(pts []tpcc.Point) bool {
	for _, p := range pts {
		if p.Threads < 1 || len(p.Runs) == 0 || !finite(p.TpmC.Median) || p.TpmC.Median < 0 {
			return false
		}
	}
	return true
}

const runsExportLong = `A run of a lab with monitoring on holds what its exporters served every second
(node_exporter per host, mysqld_exporter per node, each proxy's own endpoint). This writes
every series as one OpenMetrics file, labelled job, instance and hadrill_run; load it
into a Prometheus data directory with
  promtool tsdb create-blocks-from openmetrics FILE DATA_DIR`
