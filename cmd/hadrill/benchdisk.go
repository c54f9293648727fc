package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/state"
	"github.com/hadrill/hadrill/internal/workload"
	"github.com/hadrill/hadrill/internal/workload/fio"
)

func (cli *app) benchDiskCmd() *cobra.Command {
	var volumes, tests []string
	var p workload.DiskParams
	var secs int
	c := &cobra.Command{
		Use:   "disk [--volume all|NODE|NODE/VOLUME...] [--test all|" + strings.Join(fio.Names(), "|") + "...] [--time S] [--runs R]",
		Short: "Measure emulated volumes with fio from their node's host: IOPS, throughput, latency, fsync rate, a 1 GB file write",
		Long: `Runs fio on each chosen volume in turn, from the node's own host (its machine's limits
apply) in a scratch directory it removes afterwards. Tests:
  ` + testList() + `
Each test runs --runs times and the median is kept, beside what the volume's class promises.
Results go to the run store (hadrill runs list), with each disk's IOPS per second.`,
		Args: args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var problems []string
			if secs < 1 || secs > 3600 {
				problems = append(problems, fmt.Sprintf("--time: expected 1 to 3600 seconds per test, got %d", secs))
			}
			if p.Runs < 1 || p.Runs > 100 {
				problems = append(problems, fmt.Sprintf("--runs: expected 1 to 100, got %d", p.Runs))
			}
			chosen, bad := chooseTests(tests)
			problems = append(problems, bad...)
			l, err := cli.lockedLab(state.Bench) // its servers need not run: the volumes are measured
			if err != nil {
				return err
			}
			vols, bad := chooseVolumes(l.Plan(), volumes)
			problems = append(problems, bad...)
			if err := hderr.Users(problems); err != nil {
				return err
			}
			p.Time = time.Duration(secs) * time.Second
			for _, nv := range vols {
				p.Volumes = append(p.Volumes, nv.Node.Name+"/"+nv.Volume.Name)
			}
			for _, t := range chosen {
				p.Tests = append(p.Tests, t.Name)
			}
			out, err := workload.DiskBench(cmd.Context(), l, vols, chosen, p, os.Args, cli.progressLog())
			if err != nil {
				return err
			}
			if err := cli.emit(out, func() { printDisk(os.Stdout, out) }); err != nil {
				return err
			}
			return interrupted(out.Interrupted, out.RunID)
		},
	}
	f := c.Flags()
	f.StringSliceVar(&volumes, "volume", []string{"all"}, "all, a node (its volumes) or NODE/VOLUME")
	f.StringSliceVar(&tests, "test", []string{"all"}, "all or tests: "+strings.Join(fio.Names(), ", "))
	f.IntVar(&secs, "time", 10, "seconds per test (the 1 GB file test runs until written)")
	f.IntVar(&p.Runs, "runs", 1, "runs per test (the median is kept)")
	return c
}

func testList() string {
	var lines []string
	for _, t := range fio.Tests {
		lines = append(lines, fmt.Sprintf("%-10s %s", t.Name, t.About))
	}
	return strings.Join(lines, "\n  ")
}

func chooseTests(names []string) ([]fio.Test, []string) {
	if slices.Contains(names, "all") {
		return fio.Tests, nil
	}
	var out []fio.Test
	var problems []string
	for _, n := range names {
		t, ok := fio.Named(n)
		if !ok {
			problems = append(problems, fmt.Sprintf("--test: unknown test %q (known: all, %s)", n, strings.Join(fio.Names(), ", ")))
			continue
		}
		out = append(out, t)
	}
	return out, problems
}

// chooseVolumes resolves --volume: all, a node's volumes, or NODE/VOLUME.
func chooseVolumes(p *plan.Plan, names []string) ([]plan.NodeVolume, []string) {
	all := p.AllVolumes()
	if len(all) == 0 {
		return nil, []string{"--volume: the lab has no emulated disks (give a cluster storage: volumes in its spec, like the cloud3 preset)"}
	}
	var known []string
	for _, nv := range all {
		known = append(known, nv.Node.Name+"/"+nv.Volume.Name)
	}
	var out []plan.NodeVolume
	var problems []string
	for _, n := range names {
		found := false
		for i, nv := range all {
			if n == "all" || n == nv.Node.Name || n == known[i] {
				out, found = append(out, nv), true
			}
		}
		if !found {
			problems = append(problems, fmt.Sprintf("--volume: unknown volume %q (known: all, %s)", n, strings.Join(known, ", ")))
		}
	}
	return out, problems
}

// figure is a measured figure in format, or "-" where nothing measured it
// (a cut-short sysbench run's latency; file1g's operations and latency:
// it times the whole file only).
func figure(v float64, format string) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf(format, v)
}

func printDisk(out io.Writer, o *workload.DiskOutcome) {
	fmt.Fprintf(out, "run %s%s\n", o.RunID, map[bool]string{true: " — interrupted: partial results", false: ""}[o.Interrupted])
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "node\tvolume\ttest\tIOPS\tMB/s\tp50 ms\tp99 ms\tseconds\tclass promises\t")
	for _, r := range o.Results {
		promise := "-"
		if p := r.Promise(); p.Promised != "" {
			promise = fmt.Sprintf("%s (%.2f×)", p.Promised, p.Ratio)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f\t%s\t\n", r.Node, r.Volume, r.Test,
			figure(r.IOPS, "%.0f"), figure(r.MBps, "%.1f"), figure(r.P50Ms, "%.2f"), figure(r.P99Ms, "%.2f"), r.Seconds, promise)
	}
	w.Flush()
}
