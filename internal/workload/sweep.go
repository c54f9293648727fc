// Package workload runs load against a lab: sysbench sweeps (and, later,
// slap and native probes), recording every run in the run store.
package workload

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/lb"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/workload/sysbench"
)

// Sweep is a sysbench sweep to run.
type Sweep struct {
	Params  sysbench.Params
	Target  Endpoint
	Command []string
	Log     io.Writer // progress
}

// Outcome is what `hadrill bench sysbench --output json` prints.
type Outcome struct {
	RunID       string           `json:"run_id"`
	Interrupted bool             `json:"interrupted"`
	Target      string           `json:"target"`
	Results     []sysbench.Point `json:"results"`
}

// StepsFile holds when each sysbench step (thread count, run) ran, so
// faults can be placed on the step's own time axis.
const StepsFile = "steps.csv"

// Run prepares (or reuses) the dataset, runs every thread count Runs times
// from the lab's client host, the counts interleaved round by round, and
// stores the run. Interrupted (ctx done),
// it keeps and stores what it measured.
func Run(ctx context.Context, l Lab, s Sweep) (_ *Outcome, err error) {
	run, err := NewRun(ctx, l, results.Sysbench, s.Command, s.Params)
	if err != nil {
		return nil, err
	}
	defer abandonIfFailed(l, run, &err)
	id := run.ID
	dir := results.RunDir(l.Home(), id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	cfg, remove, err := credentials(ctx, l, dir, "sysbench-"+id+".cnf", []byte(sysbench.ConfigFile(s.Target.User, s.Target.Password)))
	if err != nil {
		return nil, err
	}
	defer remove()
	t := sysbench.Target{Host: s.Target.Host, Port: s.Target.Port, Config: cfg}
	if err := prepare(ctx, l, s, t); err != nil {
		return nil, err
	}
	out := &Outcome{RunID: id, Target: s.Target.Name}
	sampler := StartSampler(ctx, l, galeraNodes(l), time.Second)
	var series, spans [][]string
	steps, step, t0 := len(s.Params.Threads)*s.Params.Runs, 0, time.Now()
	// Rounds interleave the thread counts (1, 4, 16, then 1, 4, 16 again):
	// whatever drifts while the sweep runs (caches, the machine's other
	// work) reaches every count alike instead of all runs of one count.
	runs := map[int][]sysbench.Result{}
	for r := 1; r <= s.Params.Runs && ctx.Err() == nil; r++ {
		for _, threads := range s.Params.Threads {
			if ctx.Err() != nil {
				break
			}
			step++
			progress(s.Log, step, steps, t0, fmt.Sprintf("%s, %d threads, run %d/%d", s.Params.Workload, threads, r, s.Params.Runs))
			if w := sysbench.WarmupArgv(s.Params, t, threads); w != nil {
				warm := time.Now()
				if _, _, err := runServed(ctx, l, s.Target, s.Log, "sysbench's warm-up", sysbench.Unstarted, func() (sysbench.Result, string, error) {
					return runOnce(ctx, l, w, stallLimit(s.Params.Warmup), filepath.Join(dir, fmt.Sprintf("warmup-%d-%d.out", threads, r)))
				}); err != nil && ctx.Err() == nil {
					return nil, fmt.Errorf("warm-up: %w", withBalancers(ctx, l, err, warm))
				}
			}
			res, began, err := runServed(ctx, l, s.Target, s.Log, "sysbench", sysbench.Unstarted, func() (sysbench.Result, string, error) {
				return runOnce(ctx, l, sysbench.Argv(s.Params, t, threads, "run"), stallLimit(s.Params.Time), filepath.Join(dir, fmt.Sprintf("sysbench-%d-%d.out", threads, r)))
			})
			spans = append(spans, []string{strconv.Itoa(threads), strconv.Itoa(r), strconv.FormatInt(began.UnixNano(), 10), strconv.FormatInt(time.Now().UnixNano(), 10)})
			if err != nil && ctx.Err() == nil {
				return nil, withBalancers(ctx, l, err, began)
			}
			if err == nil || len(res.Intervals) > 0 {
				runs[threads] = append(runs[threads], res)
				series = append(series, rows(threads, r, res)...)
			}
		}
	}
	for _, threads := range s.Params.Threads {
		if len(runs[threads]) > 0 {
			out.Results = append(out.Results, sysbench.Summarize(threads, runs[threads]))
		}
	}
	out.Interrupted = ctx.Err() != nil
	samples := StatusRows(sampler.Stop(), galeraNodes(l))
	if err := Finish(l, run, out.Interrupted, out.Results); err != nil {
		return nil, err
	}
	header := []string{"threads", "run", "t_s", "tps", "qps", "lat_p95_ms", "err_per_s", "reconn_per_s"}
	if err := results.WriteCSV(l.Home(), id, "status.csv", SampleColumns, samples); err != nil {
		return nil, err
	}
	if err := results.WriteCSV(l.Home(), id, StepsFile, []string{"threads", "run", "start_ns", "end_ns"}, spans); err != nil {
		return nil, err
	}
	return out, results.WriteCSV(l.Home(), id, "timeseries.csv", header, series)
}

// prepare loads the dataset unless one with the same shape is there; the
// shape is recorded in sbtest.hd_prepared.
func prepare(ctx context.Context, l Lab, s Sweep, t sysbench.Target) error {
	db, err := s.Target.Open(l)
	if err != nil {
		return err
	}
	defer db.Close()
	var tables, size int
	err = db.QueryRowContext(ctx, "SELECT tables, table_size FROM sbtest.hd_prepared").Scan(&tables, &size)
	autoInc := true // a dataset recorded before its ids' kind was: AUTO_INCREMENT
	if err == nil {
		var v sql.NullBool
		if db.QueryRowContext(ctx, "SELECT auto_inc FROM sbtest.hd_prepared").Scan(&v) == nil && v.Valid {
			autoInc = v.Bool
		}
	}
	if err == nil && tables == s.Params.Tables && size == s.Params.TableSize && autoInc == !s.Params.NoAutoInc {
		fmt.Fprintf(s.Log, "reusing the prepared dataset (%d tables × %d rows)\n", tables, size)
		return nil
	}
	if _, err := db.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS sbtest"); err != nil { // a server outside the lab may lack it
		return fmt.Errorf("creating schema sbtest on %s: %w", s.Target.Name, err)
	}
	threads := min(s.Params.Tables, 8) // sysbench prepares one table per thread
	via := ""
	load := loader(ctx, l, s.Target)
	if load != nil {
		// a bulk load goes to one node of a Galera cluster directly, as a
		// DBA loads one: its long multi-row INSERTs, on a small machine,
		// can hold the node's health check past the load balancer's
		// timeout, and the load balancer then shuts the node's sessions
		// (the load's too: a lost connection, 2013, with the table half
		// made); the rows reach every node as any write does
		t.Host, t.Port, via = load.Address, load.Port, " on "+load.Name
	} else {
		load, _ = l.Plan().Node(s.Target.Name) // a node named as the target: the load goes to it
	}
	restore, widened := widenForLoad(ctx, l, load)
	defer restore()
	fmt.Fprintf(s.Log, "preparing %d tables × %d rows (%d in parallel%s%s)\n", s.Params.Tables, s.Params.TableSize, threads, via, widened)
	_, _ = db.ExecContext(ctx, "DROP TABLE IF EXISTS sbtest.hd_prepared")
	// a dataset of another shape, or the tables a prepare that failed left
	// half made (nothing recorded): removed first (sysbench drops the
	// tables it would make, those that exist)
	old := sysbench.Params{Workload: "oltp_common", Tables: s.Params.Tables, TableSize: s.Params.TableSize}
	if err == nil {
		old.Tables, old.TableSize = max(tables, s.Params.Tables), size
	}
	if err := onClient(ctx, l, sysbench.Argv(old, t, 1, "cleanup")); err != nil {
		return err
	}
	p := s.Params
	p.Workload = "oltp_common" // the tables every OLTP script shares
	if err := onClient(ctx, l, sysbench.Argv(p, t, threads, "prepare")); err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, "CREATE TABLE sbtest.hd_prepared (tables INT, table_size INT, auto_inc BOOL) ENGINE=InnoDB SELECT ? AS tables, ? AS table_size, ? AS auto_inc",
		s.Params.Tables, s.Params.TableSize, !s.Params.NoAutoInc)
	return err
}

// loader is the node a dataset is loaded on when the endpoint is a load
// balancer before a Galera cluster: the first of its nodes that answers
// (nil otherwise: the load goes through the endpoint).
func loader(ctx context.Context, l Lab, e Endpoint) *plan.Node {
	p := l.Plan()
	b, ok := p.LB(e.Name)
	if !ok || strings.HasPrefix(e.Name, External) {
		return nil
	}
	for i := range p.Nodes {
		n := &p.Nodes[i]
		if n.Cluster != b.Cluster || n.Role != plan.RoleGalera {
			continue
		}
		one := e
		one.Host, one.Port = n.Address, n.Port
		if one.ping(ctx, l) == nil {
			return n
		}
	}
	return nil
}

// onClient runs a command bounded by its events on the lab's client host,
// stopped as stalled when its servers do no work for IdleLimit.
func onClient(ctx context.Context, l Lab, argv []string) error {
	out, err, stall := runLimited(ctx, l, argv[0], argv, 0)
	if stall != nil {
		return stall
	}
	if err != nil {
		return fmt.Errorf("%s: %v: %s", argv[0], err, tail(out))
	}
	return nil
}

// StallSlack is how long a sysbench run of a fixed time may go on past
// it, its time again at least, before it is taken for stalled: its
// threads wait for their last transactions, which a saturated server
// answers late, but one that answers nothing (a volume full: the server
// waits for space, for ever) would hold the sweep for good.
const StallSlack = 3 * time.Minute

// stallLimit is how long a run of secs seconds may take in all (0: no
// limit, a run bounded by its events).
func stallLimit(secs int) time.Duration {
	if secs <= 0 {
		return 0
	}
	d := time.Duration(secs) * time.Second
	return d + max(StallSlack, d)
}

// runLimited runs argv (tool's) on the client host, stopped as stalled
// after limit (0: none, a run bounded by its events) or once the lab's
// servers did no work for IdleLimit, whichever comes first; stall is the
// error saying which, when one of them, not ctx, ended it.
func runLimited(ctx context.Context, l Lab, tool string, argv []string, limit time.Duration) (out []byte, runErr, stall error) {
	wctx, stop := watchIdle(ctx, l, tool)
	runCtx := wctx
	if limit > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(wctx, limit)
		defer cancel()
	}
	t0 := time.Now()
	out, runErr = client(l).Run(runCtx, combined(argv), nil)
	timedOut := errors.Is(runCtx.Err(), context.DeadlineExceeded) && wctx.Err() == nil
	if stall = stop(); stall == nil && timedOut && ctx.Err() == nil {
		stall = fmt.Errorf("%s still ran after %.0f s, past the %v its run may take (its time, and that again or %v at least), and was stopped: its server(s) stopped answering (a volume full, where the server waits for space and its error log says \"Disk is full\"; a lock; a cluster that lost its primary component): see `hadrill status` and the nodes' error logs", tool, time.Since(t0).Seconds(), limit, StallSlack)
	}
	return out, runErr, stall
}

// runOnce runs sysbench once on the client host, stopped as stalled after
// limit (0: none), saves its output and parses what it printed, also when
// it was cut short.
func runOnce(ctx context.Context, l Lab, argv []string, limit time.Duration, save string) (sysbench.Result, string, error) {
	out, runErr, stall := runLimited(ctx, l, "sysbench", argv, limit)
	if save != "" {
		_ = os.WriteFile(save, out, 0o644)
	}
	res, perr := sysbench.Parse(string(out))
	if stall != nil {
		return res, string(out), stall
	}
	if runErr != nil && ctx.Err() == nil {
		return res, string(out), fmt.Errorf("sysbench: %v: %s", runErr, tail(out))
	}
	if perr != nil && ctx.Err() == nil {
		return res, string(out), perr
	}
	if ctx.Err() != nil {
		res.Partial = true
	}
	return res, string(out), nil
}

func rows(threads, run int, r sysbench.Result) [][]string {
	var out [][]string
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
	for _, iv := range r.Intervals {
		out = append(out, []string{strconv.Itoa(threads), strconv.Itoa(run), f(iv.T), f(iv.TPS), f(iv.QPS), f(iv.Latency), f(iv.ErrPerSec), f(iv.ReconnPerS)})
	}
	return out
}

func progress(w io.Writer, step, steps int, t0 time.Time, what string) {
	elapsed := time.Since(t0)
	est := ""
	if step > 1 {
		left := elapsed / time.Duration(step-1) * time.Duration(steps-step+1)
		est = fmt.Sprintf(", ~%s left", left.Round(time.Second))
	}
	fmt.Fprintf(w, "[%d/%d] %s (elapsed %s%s)\n", step, steps, what, elapsed.Round(time.Second), est)
}

func tail(b []byte) string {
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	for i, l := range lines { // a failed bulk INSERT echoes its whole query: keep the error before it
		if len(l) > 300 {
			lines[i] = append(append([]byte(nil), l[:200]...), fmt.Sprintf("… (%d characters)", len(l))...)
		}
	}
	b = bytes.Join(lines, []byte("\n"))
	if len(b) > 600 {
		b = b[len(b)-600:]
	}
	return string(bytes.TrimSpace(b))
}

// withBalancers adds to a failed step's error what the lab's load
// balancers did while it ran (a server marked down and its sessions shut
// is what a client sees as a lost connection).
func withBalancers(ctx context.Context, l Lab, err error, began time.Time) error {
	p := l.Plan()
	var said []string
	for i := range p.LoadBalancers {
		b := lb.Balancer{LB: &p.LoadBalancers[i], Plan: p, Hosts: l.Host}
		if s := lb.Say(b.LB.Name, b.Events(context.WithoutCancel(ctx), began.Add(-time.Second), time.Now()), began, "its start"); s != "" {
			said = append(said, s)
		}
	}
	if len(said) == 0 {
		return err
	}
	return fmt.Errorf("%w\nwhile it ran, %s", err, strings.Join(said, "\n"))
}
