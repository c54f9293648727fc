package sysbench

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/hadrill/hadrill/internal/stats"
)

// Workloads are the OLTP scripts sysbench 1.0 ships.
var Workloads = []string{"oltp_read_write", "oltp_read_only", "oltp_write_only", "oltp_point_select",
	"oltp_insert", "oltp_update_index", "oltp_update_non_index", "oltp_delete", "select_random_points", "select_random_ranges"}

// IgnoreErrors are the errors a multi-writer Galera run retries instead of
// aborting on: deadlock/certification failure (1213), 1020 (record changed),
// lock wait timeout (1205). They are counted and reported as err/s.
const IgnoreErrors = "1213,1020,1205"

// Params of a sweep.
type Params struct {
	Workload   string `json:"workload"`
	Tables     int    `json:"tables"`
	TableSize  int    `json:"table_size"`
	Threads    []int  `json:"threads"`
	Time       int    `json:"time_s"`
	Runs       int    `json:"runs"`
	RandType   string `json:"rand_type"`
	Interval   int    `json:"report_interval_s"`
	MultiWrite bool   `json:"multi_writer"` // several nodes take writes: ignore certification errors
	// Warmup is how long a run of the same load goes before each measured
	// run, unrecorded: a cold cache's first seconds are not averaged in
	// (Debian's sysbench 1.0 has no --warmup-time).
	Warmup int `json:"warmup_s"`
	// RandSeed seeds sysbench's generator (0: sysbench seeds from the clock
	// and runs differ in which rows they touch). Recorded with the run.
	RandSeed int `json:"rand_seed"`
	// Events ends each measured run after this many transactions (0: by
	// time alone; Time still caps it), as sysbench 0.5's --max-requests.
	Events int `json:"events,omitempty"`
	// NoAutoInc: the tables' ids are the client's, not AUTO_INCREMENT
	// (sysbench's --auto_inc=off, 0.5's --oltp-auto-inc=off, as document
	// 000 ran it); a dataset prepared either way is only reused that way.
	NoAutoInc bool `json:"no_auto_inc,omitempty"`
}

// Target is where sysbench connects; Config is the 0600 file holding the
// connection options (the password never goes on a command line).
type Target struct {
	Host, Config string
	Port         int
}

// ConfigFile renders the --config-file contents for a target.
func ConfigFile(user, password string) string {
	return fmt.Sprintf("mysql-user=%s\nmysql-password=%s\nmysql-db=sbtest\n", user, password)
}

// Argv is the sysbench command line for one step ("prepare", "run", "cleanup").
func Argv(p Params, t Target, threads int, step string) []string {
	argv := []string{"sysbench", p.Workload, "--config-file=" + t.Config, "--db-driver=mysql", "--mysql-storage-engine=innodb",
		"--mysql-host=" + t.Host, "--mysql-port=" + strconv.Itoa(t.Port),
		"--tables=" + strconv.Itoa(p.Tables), "--table-size=" + strconv.Itoa(p.TableSize),
		"--threads=" + strconv.Itoa(threads)}
	if p.NoAutoInc {
		argv = append(argv, "--auto_inc=off")
	}
	if step == "run" {
		argv = append(argv, "--time="+strconv.Itoa(p.Time), "--report-interval="+strconv.Itoa(max(p.Interval, 1)),
			"--rand-type="+p.RandType, "--histogram=on", "--percentile=95", "--rand-seed="+strconv.Itoa(p.RandSeed))
		if p.MultiWrite {
			argv = append(argv, "--mysql-ignore-errors="+IgnoreErrors)
		}
		if p.Events > 0 {
			argv = append(argv, "--events="+strconv.Itoa(p.Events))
		}
	}
	return append(argv, step)
}

// WarmupArgv is the command line of the unrecorded run before a measured
// one (none without a warm-up).
func WarmupArgv(p Params, t Target, threads int) []string {
	if p.Warmup <= 0 {
		return nil
	}
	w := p
	w.Time, w.Interval, w.Events = p.Warmup, p.Warmup, 0
	return Argv(w, t, threads, "run")
}

// Check validates sweep parameters and names every problem.
func (p Params) Check() []string {
	var problems []string
	known := false
	for _, w := range Workloads {
		known = known || w == p.Workload
	}
	if !known {
		problems = append(problems, fmt.Sprintf("--workload: unknown workload %q (known: %s)", p.Workload, strings.Join(Workloads, ", ")))
	}
	if p.Tables < 1 || p.Tables > 1000 {
		problems = append(problems, fmt.Sprintf("--tables: expected 1 to 1000, got %d", p.Tables))
	}
	if p.TableSize < 1 || p.TableSize > 100_000_000 {
		problems = append(problems, fmt.Sprintf("--table-size: expected 1 to 100000000, got %d", p.TableSize))
	}
	if p.Time < 1 || p.Time > 86400 {
		problems = append(problems, fmt.Sprintf("--time: expected 1 to 86400 seconds, got %d", p.Time))
	}
	if p.Interval < 1 || (p.Time >= 1 && p.Interval > p.Time) || p.Interval > 86400 {
		problems = append(problems, fmt.Sprintf("--report-interval: expected 1 second up to --time (%d), got %d", p.Time, p.Interval))
	}
	if p.Runs < 1 || p.Runs > 100 {
		problems = append(problems, fmt.Sprintf("--runs: expected 1 to 100, got %d", p.Runs))
	}
	if p.Warmup < 0 || p.Warmup > 3600 {
		problems = append(problems, fmt.Sprintf("--warmup: expected 0 to 3600 seconds, got %d", p.Warmup))
	}
	if p.Events < 0 || p.Events > 1_000_000_000 {
		problems = append(problems, fmt.Sprintf("--events: expected 0 (by time) to 1000000000 transactions, got %d", p.Events))
	}
	if p.RandSeed < 0 {
		problems = append(problems, fmt.Sprintf("--rand-seed: expected 0 (from the clock) or a positive seed, got %d", p.RandSeed))
	}
	switch p.RandType {
	case "uniform", "gaussian", "special", "pareto":
	default:
		problems = append(problems, fmt.Sprintf("--rand-type: expected uniform, gaussian, special or pareto, got %q", p.RandType))
	}
	return problems
}

// ParseThreads reads a list like "1,2,4,8" and names what is wrong with it.
func ParseThreads(s string) ([]int, error) { return ParseCounts("--threads", "thread counts", s, 4096) }

// ParseCounts reads a comma-separated list of counts from 1 to max.
func ParseCounts(flag, what, s string, max int) ([]int, error) {
	var out []int
	var bad []string
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > max {
			bad = append(bad, strconv.Quote(strings.TrimSpace(f)))
			continue
		}
		out = append(out, n)
	}
	if len(bad) > 0 || len(out) == 0 {
		return nil, fmt.Errorf("%s: expected %s from 1 to %d separated by commas, got %s", flag, what, max, strings.Join(bad, ", "))
	}
	return out, nil
}

// Point is the result at one thread count: the median run, and all runs.
type Point struct {
	Threads   int      `json:"threads"`
	TPS       float64  `json:"tps"`
	QPS       float64  `json:"qps"`
	P50       float64  `json:"p50"`
	P95       float64  `json:"p95"`
	P99       float64  `json:"p99"`
	AvgLat    float64  `json:"avg_ms"`
	ErrPerSec float64  `json:"err_per_s"`
	Reconnect int64    `json:"reconnects"`
	Partial   bool     `json:"partial"`
	Runs      []Result `json:"runs"`
}

// Summarize keeps the median run (by TPS) of a thread count, with
// percentiles from its histogram.
func Summarize(threads int, runs []Result) Point {
	sorted := append([]Result(nil), runs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].TPS < sorted[j].TPS })
	m := sorted[stats.MedianIndex(len(sorted))]
	p := Point{Threads: threads, TPS: m.TPS, QPS: m.QPS, P50: m.Percentile(50), P95: m.Percentile(95), P99: m.Percentile(99),
		AvgLat: m.LatAvg, ErrPerSec: m.ErrPerSec, Reconnect: m.Reconnects, Runs: runs}
	if p.P95 == 0 { // no histogram (a cut-short run): the reported percentile
		p.P95 = m.LatPct
	}
	for _, r := range runs {
		p.Partial = p.Partial || r.Partial
	}
	return p
}

// ThreadCounts is every thread count measured in any of the point lists, sorted.
func ThreadCounts(lists ...[]Point) []int {
	seen := map[int]bool{}
	var out []int
	for _, pts := range lists {
		for _, p := range pts {
			if !seen[p.Threads] {
				seen[p.Threads] = true
				out = append(out, p.Threads)
			}
		}
	}
	sort.Ints(out)
	return out
}
