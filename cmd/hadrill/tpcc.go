package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/infra/disk"
	"github.com/hadrill/hadrill/internal/workload"
	"github.com/hadrill/hadrill/internal/workload/sysbench"
	"github.com/hadrill/hadrill/internal/workload/tpcc"
)

func (cli *app) tpccCmd() *cobra.Command {
	var p tpcc.Params
	var threads, target, credentials string
	c := &cobra.Command{
		Use:   "tpcc [--warehouses W] [--threads 1,4,16] [--time S] [--warmup S] [--runs R] [--check] [--target lb|NODE|mysql://HOST:PORT]",
		Short: "TPC-C (go-tpc) from the lab's client host: tpmC with an interval, each transaction's latency, errors; --check its consistency conditions",
		Long:  tpccLong,
		Args:  args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var problems []string
			ts, err := sysbench.ParseCounts("--threads", "client counts", threads, 1024)
			if err != nil {
				problems, ts = append(problems, err.Error()), []int{1} // the other flags still checked
			}
			p.Threads = ts
			problems = append(problems, p.Check()...)
			if err := hderr.Users(problems); err != nil {
				return err
			}
			l, err := cli.benchLab()
			if err != nil {
				return err
			}
			if !strings.HasPrefix(target, workload.External) { // a lab's nodes hold the dataset
				free, _ := disk.Free(l.Home())
				if why := workload.DatasetFit(l.Plan(), fmt.Sprintf("--warehouses: %d warehouse(s)", p.Warehouses), int64(p.Warehouses)*tpcc.BytesPerWarehouse, free); why != "" {
					return hderr.User("%s", why)
				}
			}
			e, err := workload.Resolve(cmd.Context(), l, target, credentials)
			if err != nil {
				return err
			}
			out, runErr := workload.RunTPCC(cmd.Context(), l, workload.TPCC{Params: p, Target: e, Command: os.Args, Log: cli.progressLog()})
			if out == nil {
				return runErr
			}
			if err := cli.emit(out, func() { printTPCC(os.Stdout, out) }); err != nil {
				return err
			}
			if err := interrupted(out.Interrupted, out.RunID); err != nil {
				return err
			}
			return runErr
		},
	}
	f := c.Flags()
	f.IntVar(&p.Warehouses, "warehouses", 1, "TPC-C warehouses (the dataset: about 100 MB each)")
	f.StringVar(&threads, "threads", "4", "client counts, comma-separated")
	f.IntVar(&p.Time, "time", 60, "seconds each run is measured")
	f.IntVar(&p.Warmup, "warmup", 10, "seconds each run warms up before it is measured (not counted)")
	f.IntVar(&p.Runs, "runs", 3, "runs per client count (tpmC's median and an interval of it)")
	f.BoolVar(&p.Consistency, "check", false, "check TPC-C's consistency conditions after the runs (exit 5 when one does not hold)")
	f.StringVar(&target, "target", "lb", "lb, a load balancer or node name, or mysql://HOST:PORT")
	f.StringVar(&credentials, "credentials", "", "my.cnf-style file with user= and password= (external targets)")
	return c
}

func printTPCC(out io.Writer, o *workload.TPCCOutcome) {
	fmt.Fprintf(out, "run %s (target %s, %d warehouse(s))%s\n", o.RunID, o.Target, o.Warehouses, map[bool]string{true: " — interrupted: partial results", false: ""}[o.Interrupted])
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "clients\ttpmC\tinterval\tnew order p50 ms\tp95 ms\tp99 ms\tpayment p95 ms\terrors\tCPU ms/tx\truns\t")
	for _, pt := range o.Results {
		no, pay := pt.Txn(tpcc.NewOrder), pt.Txn("PAYMENT")
		interval := "one run: none"
		if pt.TpmC.N > 1 {
			interval = fmt.Sprintf("%.0f–%.0f (%.0f%%)", pt.TpmC.Lo, pt.TpmC.Hi, 100*pt.TpmC.Coverage)
		}
		cpu := "–"
		if c, ok := o.Costs[pt.Threads]; ok && c.Known {
			cpu = fmt.Sprintf("%.2f", c.CPUms)
		}
		fmt.Fprintf(w, "%d\t%.0f\t%s\t%.1f\t%.1f\t%.1f\t%.1f\t%d\t%s\t%d\t\n", pt.Threads, pt.TpmC.Median, interval,
			no.P50, no.P95, no.P99, pay.P95, pt.Errors, cpu, pt.TpmC.N)
	}
	w.Flush()
	if c := o.Check; c != nil {
		if c.Passed {
			fmt.Fprintf(out, "consistency (TPC-C clause 3.3.2): every condition holds (%.0f s)\n", c.Seconds)
		} else {
			fmt.Fprintf(out, "consistency (TPC-C clause 3.3.2): FAILED\n")
			for _, f := range c.Failures {
				fmt.Fprintf(out, "  %s\n", f)
			}
		}
	}
}

const tpccLong = `Prepares the TPC-C dataset of --warehouses (or reuses one of that size), then runs go-tpc
` + tpcc.Version + ` (installed by make deps) with every client count --runs times, the counts interleaved
round by round, each run after --warmup seconds not counted. tpmC is new orders a minute (NOPM: go-tpc
runs without keying or think times, as HammerDB's TPROC-C does): the median over the runs with an
interval of it; each transaction type's rate, errors and latency percentiles come from the median run.
--check runs TPC-C's consistency conditions (clause 3.3.2) after the runs: one that does not hold
exits 5. go-tpc takes its password on its command line only, so a lab is loaded as an account of the
run's own (granted the tpcc schema, dropped at the end). Results go to the run store (hadrill runs list).`
