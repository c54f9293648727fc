package main

import (
	"context"
	"io"

	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/hadrill/hadrill/internal/lab"
	"github.com/hadrill/hadrill/internal/state"

	"github.com/spf13/cobra"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/workload"
	"github.com/hadrill/hadrill/internal/workload/slap"
	"github.com/hadrill/hadrill/internal/workload/sysbench"
)

func (cli *app) benchCmd() *cobra.Command {
	c := &cobra.Command{Use: "bench", Short: "Run load against a lab and record the results in the run store"}
	c.AddCommand(cli.sysbenchCmd(), cli.slapCmd(), cli.commitLatencyCmd(), cli.visibilityCmd(), cli.bulkCmd(), cli.conflictCmd(), cli.consistencyCmd(), cli.benchDiskCmd(), cli.tpccCmd())
	return c
}

func (cli *app) sysbenchCmd() *cobra.Command {
	var p sysbench.Params
	var threads, target, credentials string
	c := &cobra.Command{
		Use:   "sysbench [--workload W] [--threads 1,4,16] [--time S] [--runs R] [--target lb|nodes|NODE|mysql://HOST:PORT]",
		Short: "Sweep a sysbench OLTP workload over thread counts from the lab's client host",
		Long: `Prepares the dataset (or reuses one of the same shape), runs every thread count --runs
times from the lab's client host and keeps the median run. Latency percentiles come from
sysbench's histogram. Certification conflicts (1213, 1020, 1205) are retried and reported
as err/s when several nodes take writes. --target nodes gives sysbench the Galera nodes as its
own host list (it spreads its connections over them: no load balancer). Results go to the run store (hadrill runs list).`,
		Args: args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var problems []string
			ts, err := sysbench.ParseThreads(threads)
			if err != nil {
				problems = append(problems, err.Error())
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
			e, err := workload.ResolveList(cmd.Context(), l, target, credentials)
			if err != nil {
				return err
			}
			p.MultiWrite = l.Balanced(target) // several nodes take writes: certification conflicts are expected
			out, err := workload.Run(cmd.Context(), l, workload.Sweep{Params: p, Target: e, Command: os.Args, Log: cli.progressLog()})
			if err != nil {
				return err
			}
			if err := cli.emit(out, func() { printSweep(os.Stdout, out) }); err != nil {
				return err
			}
			return interrupted(out.Interrupted, out.RunID)
		},
	}
	f := c.Flags()
	f.StringVar(&p.Workload, "workload", "oltp_read_write", "sysbench OLTP script: "+strings.Join(sysbench.Workloads, ", "))
	f.IntVar(&p.Tables, "tables", 4, "tables")
	f.IntVar(&p.TableSize, "table-size", 10000, "rows per table")
	f.StringVar(&threads, "threads", "1,4,16", "thread counts, comma-separated")
	f.IntVar(&p.Time, "time", 20, "seconds per run")
	f.IntVar(&p.Runs, "runs", 1, "runs per thread count (the median is kept)")
	f.StringVar(&p.RandType, "rand-type", "uniform", "row distribution: uniform, gaussian, special (sysbench's default), pareto")
	f.IntVar(&p.Interval, "report-interval", 1, "seconds between time-series samples")
	f.IntVar(&p.Warmup, "warmup", 2, "seconds each run warms up before it is measured (not counted)")
	f.IntVar(&p.RandSeed, "rand-seed", 1, "sysbench's random seed, recorded with the run (0: from the clock)")
	f.BoolVar(&p.NoAutoInc, "no-auto-inc", false, "client-generated ids instead of AUTO_INCREMENT (sysbench's --auto_inc=off; document 000's --oltp-auto-inc=off)")
	f.StringVar(&target, "target", "lb", "lb, a load balancer or node name, nodes (the Galera nodes as sysbench's host list), or mysql://HOST:PORT")
	f.StringVar(&credentials, "credentials", "", "my.cnf-style file with user= and password= (external targets)")
	return c
}

// progressLog is stderr, also with --output json (which is stdout's
// alone): a study or a sweep runs for minutes to hours, and says where it
// is every step.
func (cli *app) progressLog() io.Writer { return os.Stderr }

func printSweep(out io.Writer, o *workload.Outcome) {
	fmt.Fprintf(out, "run %s (target %s)%s\n", o.RunID, o.Target, map[bool]string{true: " — interrupted: partial results", false: ""}[o.Interrupted])
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "threads\ttps\tqps\tp50 ms\tp95 ms\tp99 ms\terr/s\truns\t")
	for _, pt := range o.Results {
		partial := ""
		if pt.Partial {
			partial = " (partial)"
		}
		fmt.Fprintf(w, "%d\t%.1f\t%.1f\t%s\t%s\t%s\t%.2f\t%d%s\t\n", pt.Threads, pt.TPS, pt.QPS, figure(pt.P50, "%.2f"), figure(pt.P95, "%.2f"), figure(pt.P99, "%.2f"), pt.ErrPerSec, len(pt.Runs), partial)
	}
	w.Flush()
}

func (cli *app) commitLatencyCmd() *cobra.Command {
	var count int
	var targets []string
	c := &cobra.Command{
		Use:   "commit-latency [--count N] [--target all|lb|NODE...]",
		Short: "Time single-row autocommit INSERTs on one connection per target (the cost of a commit)",
		Args:  args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var problems []error
			if count < 1 || count > 1_000_000 {
				problems = append(problems, hderr.User("--count: expected 1 to 1000000, got %d", count))
			}
			l, err := cli.benchLab()
			if err != nil {
				return err
			}
			var eps []workload.Endpoint
			for _, t := range expandAll(targets, l.Plan().NodeNames()) {
				e, err := workload.Resolve(cmd.Context(), l, t, "")
				if err != nil {
					problems = append(problems, err)
					continue
				}
				eps = append(eps, e)
			}
			if err := hderr.Join(problems); err != nil {
				return err
			}
			out, err := workload.CommitLatency(cmd.Context(), l, eps, count, os.Args, cli.progressLog())
			if err != nil {
				return err
			}
			if err := cli.emit(out, func() {
				fmt.Printf("run %s\n", out.RunID)
				w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
				fmt.Fprintln(w, "target\tcommits\tp50 ms\tp95 ms\tp99 ms\tavg ms\tmax ms\terrors\t")
				for _, r := range out.Results {
					fmt.Fprintf(w, "%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%d\t\n", r.Target, r.Count, r.P50, r.P95, r.P99, r.Avg, r.Max, r.Errors)
				}
				w.Flush()
			}); err != nil {
				return err
			}
			return interrupted(out.Interrupted, out.RunID)
		},
	}
	c.Flags().IntVar(&count, "count", 1000, "INSERTs per target")
	c.Flags().StringSliceVar(&targets, "target", []string{"all"}, "all (every node), lb, or node and load balancer names")
	return c
}

// expandAll replaces "all" with every node.
func expandAll(targets, nodes []string) []string {
	var out []string
	for _, t := range targets {
		if t == "all" {
			out = append(out, nodes...)
		} else {
			out = append(out, t)
		}
	}
	return out
}

// probePair resolves --from and --to (default: the first two nodes).
func (cli *app) probePair(cmd *cobra.Command, from, to string, problems []error) (*lab.Lab, workload.Endpoint, workload.Endpoint, error) {
	return cli.twoNodes(cmd, "--from", "--to", from, to, problems)
}

// twoNodes resolves two nodes given by two flags (default: the first two
// nodes).
func (cli *app) twoNodes(cmd *cobra.Command, fromFlag, toFlag, from, to string, problems []error) (*lab.Lab, workload.Endpoint, workload.Endpoint, error) {
	l, err := cli.benchLab()
	if err != nil {
		if len(problems) > 0 && !state.IsBusy(err) { // the flags' problems too, all at once
			err = hderr.Join(append(problems, err))
		}
		return nil, workload.Endpoint{}, workload.Endpoint{}, err
	}
	names := l.Plan().NodeNames()
	if from == "" {
		from = names[0]
	}
	if to == "" && len(names) > 1 {
		to = names[1]
	}
	if from == to {
		problems = append(problems, hderr.User("%s: must differ from %s (%s)", toFlag, fromFlag, from))
	}
	a, err := workload.Resolve(cmd.Context(), l, from, "")
	problems = append(problems, err)
	b, err := workload.Resolve(cmd.Context(), l, to, "")
	problems = append(problems, err)
	return l, a, b, hderr.Join(problems)
}

// pairProbe is a probe between two nodes (--from, --to; default the first
// two): check names the problems of the probe's own flags, run runs it
// over the lab and the two nodes.
func (cli *app) pairProbe(c *cobra.Command, fromWhat, toWhat string, check func() []error,
	run func(ctx context.Context, l *lab.Lab, a, b workload.Endpoint) (*workload.ProbeOutcome, error)) *cobra.Command {
	var from, to string
	c.Args = args(0, 0, "no arguments")
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		l, a, b, err := cli.probePair(cmd, from, to, check())
		if err != nil {
			return err
		}
		out, err := run(cmd.Context(), l, a, b)
		if err != nil {
			return err
		}
		return cli.printProbe(out)
	}
	c.Flags().StringVar(&from, "from", "", fromWhat+" written to (default: the first node)")
	c.Flags().StringVar(&to, "to", "", toWhat+" read from (default: the second node)")
	return c
}

func (cli *app) visibilityCmd() *cobra.Command {
	var count int
	c := cli.pairProbe(&cobra.Command{
		Use:   "visibility [--from NODE] [--to NODE] [--count N]",
		Short: "How long after a commit is acknowledged on one node the row is readable on another (with and without wsrep_sync_wait)",
	}, "node", "node", func() []error {
		if count < 1 || count > 100000 {
			return []error{hderr.User("--count: expected 1 to 100000, got %d", count)}
		}
		return nil
	}, func(ctx context.Context, l *lab.Lab, a, b workload.Endpoint) (*workload.ProbeOutcome, error) {
		return workload.VisibilityLag(ctx, l, a, b, count, os.Args, cli.progressLog())
	})
	c.Flags().IntVar(&count, "count", 200, "writes")
	return c
}

func (cli *app) bulkCmd() *cobra.Command {
	var rows string
	var counts []int
	c := cli.pairProbe(&cobra.Command{
		Use:   "bulk-replication [--rows 1000,10000] [--from NODE] [--to NODE]",
		Short: "Write N rows (one commit each) on one master and time until all are visible on another",
	}, "master", "master", func() []error {
		var err error
		if counts, err = sysbench.ParseCounts("--rows", "row counts", rows, 10_000_000); err != nil {
			return []error{hderr.User("%v", err)}
		}
		return nil
	}, func(ctx context.Context, l *lab.Lab, a, b workload.Endpoint) (*workload.ProbeOutcome, error) {
		return workload.BulkReplication(ctx, l, a, b, counts, os.Args, cli.progressLog())
	})
	c.Flags().StringVar(&rows, "rows", "1000,10000", "row counts, comma-separated")
	return c
}

func (cli *app) conflictCmd() *cobra.Command {
	var a, b, keys string
	var rows, writes int
	c := &cobra.Command{
		Use:   "conflict [--a NODE] [--b NODE] [--keys shared|own] [--rows N] [--writes N]",
		Short: "Write the same rows on two primaries at once and count what replication left different (a ring of primaries)",
		Long: `For servers that each take writes and replicate into each other (a ring of primaries, e.g. the
p2p preset): both increment rows at the same time, one commit an increment; once each has applied
everything the other wrote, their rows are compared. It stores the rows that differ (diverged_rows,
with each server's checksum of the rows), the acknowledged increments a server no longer counts
(lost_writes), and how long both took to settle. --keys own gives each server rows of its own:
nothing should diverge then.`,
		Args: args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var problems []error
			if keys != workload.KeysShared && keys != workload.KeysOwn {
				problems = append(problems, hderr.User("--keys: expected shared or own, got %q", keys))
			}
			if rows < 1 || rows > 100000 {
				problems = append(problems, hderr.User("--rows: expected 1 to 100000, got %d", rows))
			}
			if writes < 1 || writes > 1000000 {
				problems = append(problems, hderr.User("--writes: expected 1 to 1000000 increments per server, got %d", writes))
			}
			l, ea, eb, err := cli.twoNodes(cmd, "--a", "--b", a, b, problems)
			if err != nil {
				return err
			}
			out, err := workload.Conflicts(cmd.Context(), l, ea, eb, keys, rows, writes, os.Args, cli.progressLog())
			if err != nil {
				return err
			}
			return cli.printProbe(out)
		},
	}
	c.Flags().StringVar(&a, "a", "", "one primary (default: the first node)")
	c.Flags().StringVar(&b, "b", "", "the other (default: the second node)")
	c.Flags().StringVar(&keys, "keys", workload.KeysShared, "shared (both write the same rows) or own (each its own rows)")
	c.Flags().IntVar(&rows, "rows", 10, "rows written (each server's, with --keys own)")
	c.Flags().IntVar(&writes, "writes", 200, "increments each server commits")
	return c
}

func (cli *app) slapCmd() *cobra.Command {
	var p slap.Params
	var conc, target string
	c := &cobra.Command{
		Use:   "slap [--concurrency 1,10,50] [--iterations N] [--load read|write|mixed | --query SQL | --query-file FILE] [--dataset employees]",
		Short: "Sweep mariadb-slap over client concurrency from the lab's client host (seed 001's read and write tests)",
		Long: `Runs mariadb-slap from the lab's client host at each concurrency, --iterations times, and stores
the average, minimum and maximum seconds to run all queries. --dataset employees first generates
(or reuses) a dataset shaped like MySQL's employees sample database in schema employees (about
3.9 million rows at --dataset-size 1, made by the server in seconds to minutes) and, without
--query, runs document 001's join-heavy read query over it; --number-of-queries 0 has each client
run the query once per iteration, as document 001 did.`,
		Args: args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var problems []string
			cs, err := sysbench.ParseCounts("--concurrency", "client counts", conc, 4096)
			if err != nil {
				problems = append(problems, err.Error())
			}
			p.Concurrency = cs
			p.Complete()
			if p.QueryFile != "" {
				if _, err := os.Stat(p.QueryFile); err != nil {
					problems = append(problems, fmt.Sprintf("--query-file: %v", err))
				}
			}
			problems = append(problems, p.Check()...)
			if err := hderr.Users(problems); err != nil {
				return err
			}
			l, err := cli.benchLab()
			if err != nil {
				return err
			}
			e, err := workload.Resolve(cmd.Context(), l, target, "")
			if err != nil {
				return err
			}
			out, runErr := workload.Slap(cmd.Context(), l, e, p, os.Args, cli.progressLog())
			if out != nil {
				if err := cli.emit(out, func() { printSlap(os.Stdout, out) }); err != nil {
					return err
				}
			}
			return runErr
		},
	}
	f := c.Flags()
	f.StringVar(&conc, "concurrency", "1,10,50", "client counts, comma-separated")
	f.IntVar(&p.Iterations, "iterations", 3, "runs per concurrency (average, min and max are reported)")
	f.IntVar(&p.Queries, "number-of-queries", 1000, "queries per concurrency level, shared by the clients")
	f.StringVar(&p.Load, "load", "", "auto-generated load: read, write or mixed (default mixed)")
	f.StringVar(&p.Query, "query", "", "SQL to run instead of an auto-generated load")
	f.StringVar(&p.QueryFile, "query-file", "", "file of SQL to run instead of an auto-generated load")
	f.StringVar(&p.Schema, "schema", "", "schema: generated loads run only in hd_slap (created and dropped by each run); queries default to app, which is never dropped")
	f.StringVar(&target, "target", "lb", "lb, a load balancer or node name")
	f.StringVar(&p.Dataset, "dataset", "", "employees: generate (or reuse) an employees-shaped dataset to query (document 001)")
	f.Float64Var(&p.DatasetSize, "dataset-size", 1, "the dataset's size, a fraction of the sample database (1: 300,024 employees, ~3.9 M rows)")
	return c
}

// printSlap writes a slap sweep's table: a row a concurrency.
func printSlap(out io.Writer, o *workload.SlapOutcome) {
	fmt.Fprintf(out, "run %s (target %s)\n", o.RunID, o.Target)
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "clients\tavg s\tmin s\tmax s\tqueries/client\tqps\t")
	for _, pt := range o.Results {
		fmt.Fprintf(w, "%d\t%.3f\t%.3f\t%.3f\t%d\t%.1f\t\n", pt.Concurrency, pt.AvgS, pt.MinS, pt.MaxS, pt.QueriesPerClient, pt.QPS)
	}
	w.Flush()
}

// interrupted fails a benchmark cut short (Ctrl-C), after its partial
// results were printed and stored, so scripts do not take them as complete.
func interrupted(was bool, runID string) error {
	if !was {
		return nil
	}
	return fmt.Errorf("interrupted: the partial results are kept in run %s", runID)
}
