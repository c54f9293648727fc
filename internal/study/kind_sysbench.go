package study

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/workload"
	"github.com/hadrill/hadrill/internal/workload/sysbench"
)

// sysbenchKind is the step kind sysbench: one of sysbench's OLTP workloads at each thread count.
var sysbenchKind = &stepKind{
	name:   "sysbench",
	tool:   "sysbench",
	warmup: true,
	least: func(st Step, sc Scale) time.Duration {
		return time.Duration(len(sc.Threads)) * time.Duration(measured(st, sc)+sc.Warmup) * time.Second
	},
	fields:     []string{"workload", "rand_type", "auto_inc", "time_factor"},
	metrics:    []string{"tps", "p95_ms", "p99_ms", "avg_ms", "storage_ios_per_tx"},
	per:        func(sc Scale) []int { return sc.Threads },
	data:       rowsDataset,
	endpoint:   true,
	hostList:   true,
	priced:     true,
	histograms: true,
	step: func(st Step, add func(string, string, ...any)) {
		if !slices.Contains(sysbench.Workloads, st.Workload) {
			add("workload", "expected one of %s, got %q", strings.Join(sysbench.Workloads, ", "), st.Workload)
		}
		if st.TimeFactor < 0 || st.TimeFactor > 100 {
			add("time_factor", "expected 1 to 100 (the scale's time that many times over), got %d", st.TimeFactor)
		}
	},
	scale: func(st Step, sc Scale, add func(string, string, ...any)) {
		counts(add, "threads", "thread count", st.Name, sc.Threads, 4096)
		if sc.Time < 1 || sc.Time > 86400 {
			add("time", "expected 1 to 86400 seconds (step %s), got %d", st.Name, sc.Time)
		} else if measured(st, sc) > 86400 {
			add("time", "step %s measures %d s × time_factor %d = %d s, more than 86400", st.Name, sc.Time, st.TimeFactor, measured(st, sc))
		}
		if sc.Events < 0 || sc.Events > 1_000_000_000 {
			add("events", "expected 0 (runs by time) to 1000000000 transactions (step %s), got %d", st.Name, sc.Events)
		}
		if sc.Warmup < 0 || sc.Warmup > 3600 {
			add("warmup", "expected 0 to 3600 seconds, got %d", sc.Warmup)
		}
		if sc.Tables < 1 || sc.TableSize < 1 {
			add("tables", "tables and table_size are required (step %s)", st.Name)
		}
	},
	measure: func(ctx context.Context, m measurement) ([]Sample, error) {
		e, err := workload.ResolveList(ctx, m.lab, m.target, m.credentials)
		if err != nil {
			return nil, err
		}
		st, sc := m.step, m.scale
		rand := cmp.Or(st.RandType, "special") // sysbench's default, which the documents ran
		p := sysbench.Params{Workload: st.Workload, Tables: sc.Tables, TableSize: sc.TableSize, Threads: sc.Threads, Time: measured(st, sc),
			Runs: 1, RandType: rand, Interval: 1, Warmup: sc.Warmup, RandSeed: 1, MultiWrite: balanced(m.lab, m.target), Events: sc.Events,
			NoAutoInc: st.AutoInc != nil && !*st.AutoInc}
		out, err := workload.Run(ctx, m.lab, workload.Sweep{Params: p, Target: e, Command: m.opts.Command, Log: io.Discard})
		if err != nil {
			return nil, err
		}
		var got []Sample
		costs := map[int]workload.Cost{}
		if r, err := results.Load(m.opts.Home, out.RunID); err == nil {
			costs = workload.Costs(m.opts.Home, r, out.Results)
		}
		for _, pt := range out.Results {
			if pt.Partial {
				continue
			}
			got = append(got, samples(st, out.RunID, fmt.Sprintf("tps@%d", pt.Threads), pt.TPS, fmt.Sprintf("p95_ms@%d", pt.Threads), pt.P95,
				fmt.Sprintf("p99_ms@%d", pt.Threads), pt.P99, fmt.Sprintf("avg_ms@%d", pt.Threads), pt.AvgLat)...)
			if c := costs[pt.Threads]; c.Known && c.Disks { // emulated disks: what reached their storage
				got = append(got, samples(st, out.RunID, fmt.Sprintf("storage_ios_per_tx@%d", pt.Threads), c.StorageIOs)...)
			}
		}
		return got, nil
	},
	describe: func(st Step, metric string) string {
		if n, ok := strings.CutPrefix(metric, PerDollar+"@"); ok {
			return fmt.Sprintf("Transactions per second per dollar an hour, sysbench %s with %s clients", st.Workload, n)
		}
		name, n, _ := strings.Cut(metric, "@")
		what := map[string]string{"tps": "Transactions per second", "p95_ms": "95th percentile latency (ms)",
			"p99_ms": "99th percentile latency (ms)", "avg_ms": "Mean latency (ms)",
			"storage_ios_per_tx": "IOs per transaction that reached the disks' storage (less the reads a host cache answered)"}[name]
		return fmt.Sprintf("%s, sysbench %s with %s clients", cmp.Or(what, name), st.Workload, n)
	},
}

// balanced: the target spreads writes over several nodes (a lab's balanced
// load balancer, or its nodes as sysbench's host list).
func balanced(l workload.Lab, target string) bool {
	b, ok := l.(interface{ Balanced(string) bool })
	return ok && b.Balanced(target)
}

// measured is the seconds a sysbench step measures at a scale: the
// scale's time, times the step's time_factor.
func measured(st Step, sc Scale) int { return sc.Time * max(1, st.TimeFactor) }
