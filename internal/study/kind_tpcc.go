package study

import (
	"cmp"
	"context"
	"fmt"
	"github.com/hadrill/hadrill/internal/words"
	"io"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/workload"
	"github.com/hadrill/hadrill/internal/workload/tpcc"
)

// tpccKind is the step kind tpcc: go-tpc's TPC-C at each client count over the scale's warehouses,
// its consistency conditions after each round's runs when the step asks.
var tpccKind = &stepKind{
	name:   "tpcc",
	tool:   "go-tpc",
	warmup: true,
	least: func(_ Step, sc Scale) time.Duration {
		return time.Duration(len(sc.Threads)) * time.Duration(sc.Time+sc.Warmup) * time.Second
	},
	fields:  []string{"check"},
	metrics: []string{"tpmc", "tpm_total", "new_order_p95_ms", "new_order_p99_ms", "server_errors_per_min", "storage_ios_per_tx"},
	per:     func(sc Scale) []int { return sc.Threads },
	data: func(sc Scale) dataset {
		b := int64(sc.Warehouses) * tpcc.BytesPerWarehouse
		return dataset{pages: b, files: b, binlog: b, what: words.Count(sc.Warehouses, "TPC-C warehouse")}
	},
	endpoint: true,
	scale: func(st Step, sc Scale, add func(string, string, ...any)) {
		p := tpcc.Params{Warehouses: sc.Warehouses, Threads: sc.Threads, Time: sc.Time, Warmup: sc.Warmup, Runs: 1}
		for _, problem := range p.Check() {
			flag, what, _ := strings.Cut(problem, ": ")
			add(strings.TrimPrefix(flag, "--"), "%s (step %s)", what, st.Name)
		}
	},
	measure: func(ctx context.Context, m measurement) ([]Sample, error) {
		e, err := workload.Resolve(ctx, m.lab, m.target, m.credentials)
		if err != nil {
			return nil, err
		}
		st, sc := m.step, m.scale
		p := tpcc.Params{Warehouses: sc.Warehouses, Threads: sc.Threads, Time: sc.Time, Warmup: sc.Warmup, Runs: 1, Consistency: st.Check}
		out, err := workload.RunTPCC(ctx, m.lab, workload.TPCC{Params: p, Target: e, Command: m.opts.Command, Log: io.Discard})
		if err != nil {
			return nil, err
		}
		var got []Sample
		for _, pt := range out.Results {
			if pt.Partial || pt.TpmC.N == 0 {
				continue
			}
			no := pt.Txn(tpcc.NewOrder)
			minutes := float64(sc.Time*len(pt.Runs)) / 60
			var serverErrors int
			for code, n := range pt.ErrorsByCode() {
				if code != "connection" { // go-tpc's own stop cuts a transaction a client short at the end
					serverErrors += n
				}
			}
			got = append(got, samples(st, out.RunID, fmt.Sprintf("tpmc@%d", pt.Threads), pt.TpmC.Median, fmt.Sprintf("tpm_total@%d", pt.Threads), pt.TpmTotal,
				fmt.Sprintf("new_order_p95_ms@%d", pt.Threads), no.P95, fmt.Sprintf("new_order_p99_ms@%d", pt.Threads), no.P99,
				fmt.Sprintf("server_errors_per_min@%d", pt.Threads), float64(serverErrors)/minutes)...)
			if c, ok := out.Costs[pt.Threads]; ok && c.Known && c.Disks {
				got = append(got, samples(st, out.RunID, fmt.Sprintf("storage_ios_per_tx@%d", pt.Threads), c.StorageIOs)...)
			}
		}
		return got, nil
	},
	describe: func(_ Step, metric string) string {
		name, n, _ := strings.Cut(metric, "@")
		what := map[string]string{"tpmc": "New-Order transactions a minute (tpmC)", "tpm_total": "Transactions of every type a minute",
			"new_order_p95_ms": "New-Order's 95th percentile latency (ms)", "new_order_p99_ms": "New-Order's 99th percentile latency (ms)",
			"server_errors_per_min": "Transactions the server failed a minute (every type; by its error codes, 1213 a deadlock or certification conflict)",
			"storage_ios_per_tx":    "IOs per transaction that reached the disks' storage (less the reads a host cache answered)"}[name]
		return fmt.Sprintf("%s, TPC-C (go-tpc) with %s clients", cmp.Or(what, name), n)
	},
}
