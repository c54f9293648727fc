package workload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/workload/tpcc"
)

// TPCC is a TPC-C sweep to run (go-tpc on the lab's client host).
type TPCC struct {
	Params  tpcc.Params
	Target  Endpoint
	Command []string
	Log     io.Writer
}

// TPCCOutcome is what `hadrill bench tpcc -o json` prints.
type TPCCOutcome struct {
	RunID       string       `json:"run_id"`
	Interrupted bool         `json:"interrupted"`
	Target      string       `json:"target"`
	Warehouses  int          `json:"warehouses"`
	Results     []tpcc.Point `json:"results"`
	// Check is what TPC-C's consistency conditions said after the runs
	// (nil: not asked for).
	Check *TPCCCheck `json:"check,omitempty"`
	// Costs are each client count's CPU and IOs per transaction (every
	// type's, committed) over its measured runs, by client count.
	Costs map[int]Cost `json:"costs_per_transaction,omitempty"`
}

// TPCCCheck is the outcome of go-tpc's consistency check.
type TPCCCheck struct {
	Passed   bool     `json:"passed"`
	Failures []string `json:"failures,omitempty"`
	Seconds  float64  `json:"seconds"`
}

// ErrTPCCCheck is the error of a run whose consistency check failed.
var ErrTPCCCheck = errors.New("a TPC-C consistency condition does not hold")

// RunTPCC prepares the TPC-C dataset unless one of the same size is there,
// runs every client count Runs times (interleaved round by round, each
// run after its warm-up), checks TPC-C's consistency conditions when
// asked, and stores the run. go-tpc takes its password on its command
// line only: a lab's endpoint is loaded as an account of the run's own,
// granted the tpcc schema only and dropped at the end.
func RunTPCC(ctx context.Context, l Lab, s TPCC) (_ *TPCCOutcome, err error) {
	bin, err := goTPC(ctx, l)
	if err != nil {
		return nil, err
	}
	run, err := NewRun(ctx, l, results.TPCC, s.Command, s.Params)
	if err != nil {
		return nil, err
	}
	defer abandonIfFailed(l, run, &err)
	id := run.ID
	dir := results.RunDir(l.Home(), id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	t := tpcc.Target{Host: s.Target.Host, Port: s.Target.Port, User: s.Target.User, Password: s.Target.Password}
	if !strings.HasPrefix(s.Target.Name, External) {
		user, pw, drop, err := runAccount(ctx, l, id)
		if err != nil {
			return nil, err
		}
		defer drop()
		t.User, t.Password = user, pw
		s.Target.User, s.Target.Password = user, pw // hadrill's own queries as the same account
	}
	if err := prepareTPCC(ctx, l, s, bin, t); err != nil {
		return nil, err
	}
	out := &TPCCOutcome{RunID: id, Target: s.Target.Name, Warehouses: s.Params.Warehouses}
	runs := map[int][]tpcc.Result{}
	partial := map[int]bool{}
	var spans [][]string // threads, run, start_ns, end_ns of each measured run
	steps, step, t0 := len(s.Params.Threads)*s.Params.Runs, 0, time.Now()
	for r := 1; r <= s.Params.Runs && ctx.Err() == nil; r++ {
		for _, threads := range s.Params.Threads {
			if ctx.Err() != nil {
				break
			}
			step++
			progress(s.Log, step, steps, t0, fmt.Sprintf("TPC-C, %d warehouse(s), %d clients, run %d/%d", s.Params.Warehouses, threads, r, s.Params.Runs))
			if s.Params.Warmup > 0 {
				warm := time.Now()
				if _, _, err := runServed(ctx, l, s.Target, s.Log, "go-tpc's warm-up", tpcc.Unconnected, func() (tpcc.Result, string, error) {
					return runTPCCOnce(ctx, l, tpcc.Argv(bin, t, s.Params.Warehouses, threads, s.Params.Warmup, "run"), stallLimit(s.Params.Warmup), filepath.Join(dir, fmt.Sprintf("warmup-%d-%d.out", threads, r)))
				}); err != nil && ctx.Err() == nil {
					return nil, fmt.Errorf("warm-up: %w", withBalancers(ctx, l, err, warm))
				}
			}
			res, began, err := runServed(ctx, l, s.Target, s.Log, "go-tpc", tpcc.Unconnected, func() (tpcc.Result, string, error) {
				return runTPCCOnce(ctx, l, tpcc.Argv(bin, t, s.Params.Warehouses, threads, s.Params.Time, "run"), stallLimit(s.Params.Time), filepath.Join(dir, fmt.Sprintf("go-tpc-%d-%d.out", threads, r)))
			})
			spans = append(spans, []string{strconv.Itoa(threads), strconv.Itoa(r), strconv.FormatInt(began.UnixNano(), 10), strconv.FormatInt(time.Now().UnixNano(), 10)})
			if err != nil && ctx.Err() == nil {
				return nil, withBalancers(ctx, l, err, began)
			}
			if err == nil {
				runs[threads] = append(runs[threads], res)
			} else {
				partial[threads] = true
			}
		}
	}
	for _, threads := range s.Params.Threads {
		if len(runs[threads]) > 0 {
			out.Results = append(out.Results, tpcc.Summarize(threads, runs[threads], partial[threads]))
		}
	}
	if s.Params.Consistency && ctx.Err() == nil {
		fmt.Fprintf(s.Log, "checking TPC-C's consistency conditions (clause 3.3.2)\n")
		c, err := checkTPCC(ctx, l, s.Target, bin, t, s.Params.Warehouses, filepath.Join(dir, "go-tpc-check.out"))
		if err != nil {
			return nil, err
		}
		out.Check = c
	}
	out.Interrupted = ctx.Err() != nil
	if err := Finish(l, run, out.Interrupted, out); err != nil {
		return nil, err
	}
	if err := results.WriteCSV(l.Home(), id, StepsFile, []string{"threads", "run", "start_ns", "end_ns"}, spans); err != nil {
		return nil, err
	}
	tx := map[int]int64{}
	for threads, rs := range runs {
		for _, r := range rs {
			for _, x := range r.Txns {
				tx[threads] += x.Count
			}
		}
	}
	if c := TxCosts(l.Home(), run, tx); len(c) > 0 {
		out.Costs = c
		run.Results, _ = json.Marshal(out)
		if err := results.Save(l.Home(), run); err != nil {
			return nil, err
		}
	}
	if out.Check != nil && !out.Check.Passed && !out.Interrupted {
		return out, ErrTPCCCheck
	}
	return out, nil
}

// runAccount creates an account for one run on every running node of the
// lab, outside the binary log (each node gets it without a transaction of
// its own), granted the tpcc schema only; drop removes it the same way.
func runAccount(ctx context.Context, l Lab, id string) (user, pw string, drop func(), err error) {
	user = "hd_tpcc_" + strings.ReplaceAll(id, "-", "")
	if len(user) > 32 {
		user = user[:32]
	}
	pw = mariadb.Password()
	each := func(stmts ...string) error {
		var errs []error
		for i := range l.Plan().Nodes {
			n := &l.Plan().Nodes[i]
			if p, err := l.Process(n); err != nil || p.Pid == 0 {
				continue
			}
			db := l.Admin(n)
			conn, err := db.Conn(ctx)
			if err == nil {
				err = mariadb.Exec(ctx, conn, append([]string{"SET SESSION sql_log_bin=0", "SET SESSION wsrep_on=0"}, stmts...)...)
				conn.Close()
			}
			db.Close()
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", n.Name, err))
			}
		}
		return errors.Join(errs...)
	}
	if err := each(fmt.Sprintf("CREATE OR REPLACE USER '%s'@'%%' IDENTIFIED BY PASSWORD '%s'", user, mariadb.NativeHash(pw)),
		fmt.Sprintf("GRANT ALL PRIVILEGES ON %s.* TO '%s'@'%%'", tpcc.Schema, user)); err != nil {
		return "", "", nil, fmt.Errorf("an account for go-tpc: %w", err)
	}
	return user, pw, func() { _ = each(fmt.Sprintf("DROP USER IF EXISTS '%s'@'%%'", user)) }, nil
}

// checkIndex adds, for the consistency check's time, an index on the
// history table's customer columns: go-tpc's condition 3.3.2.10 reads a
// customer's payments from history once per customer, which without it
// scans the table each time (159 s for one warehouse here, 0.7 s with
// it). The runs measured before it is added; undo drops it.
func checkIndex(ctx context.Context, l Lab, e Endpoint) (undo func(), err error) {
	db, err := e.Open(l)
	if err != nil {
		return nil, err
	}
	const name = "hd_check_customer"
	if _, err := db.ExecContext(ctx, "ALTER TABLE "+tpcc.Schema+".history ADD INDEX IF NOT EXISTS "+name+" (h_c_w_id, h_c_d_id, h_c_id)"); err != nil {
		db.Close()
		return nil, fmt.Errorf("an index for the consistency check: %w", err)
	}
	return func() {
		_, _ = db.ExecContext(context.WithoutCancel(ctx), "ALTER TABLE "+tpcc.Schema+".history DROP INDEX IF EXISTS "+name)
		db.Close()
	}, nil
}

// prepareTPCC loads the dataset unless one of the same size is there (its
// size recorded in tpcc.hd_prepared).
func prepareTPCC(ctx context.Context, l Lab, s TPCC, bin string, t tpcc.Target) error {
	e := s.Target
	db, err := e.Open(l)
	if err != nil {
		return err
	}
	defer db.Close()
	var w, have int
	if db.QueryRowContext(ctx, "SELECT warehouses FROM "+tpcc.Schema+".hd_prepared").Scan(&w) == nil && w == s.Params.Warehouses &&
		db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+tpcc.Schema+".warehouse").Scan(&have) == nil && have == w {
		fmt.Fprintf(s.Log, "reusing the prepared TPC-C dataset (%d warehouse(s))\n", w)
		return nil
	}
	load := loader(ctx, l, e)
	if load != nil {
		t.Host, t.Port = load.Address, load.Port // as sysbench's: a bulk load goes to one Galera node directly
	} else {
		load, _ = l.Plan().Node(e.Name)
	}
	restore, widened := widenForLoad(ctx, l, load)
	defer restore()
	if widened != "" {
		widened = " (" + strings.TrimPrefix(widened, "; ") + ")"
	}
	fmt.Fprintf(s.Log, "preparing the TPC-C dataset: %d warehouse(s)%s\n", s.Params.Warehouses, widened)
	if _, err := db.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS "+tpcc.Schema); err != nil {
		return fmt.Errorf("creating schema %s on %s: %w", tpcc.Schema, e.Name, err)
	}
	_, _ = db.ExecContext(ctx, "DROP TABLE IF EXISTS "+tpcc.Schema+".hd_prepared")
	raw, err, stall := runLimited(ctx, l, "go-tpc prepare", tpcc.Argv(bin, t, s.Params.Warehouses, min(s.Params.Warehouses, 4), 0, "prepare"), 0)
	if stall != nil {
		return stall
	}
	// go-tpc may exit 0 on a failure of its own (an unknown flag): the
	// dataset is judged by its tables
	if qerr := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+tpcc.Schema+".warehouse").Scan(&have); err != nil || qerr != nil || have != s.Params.Warehouses {
		return fmt.Errorf("go-tpc prepare of %d warehouse(s) (%d there): %s", s.Params.Warehouses, have, redact(firstErr(err, qerr), raw, t.Password))
	}
	_, err = db.ExecContext(ctx, "CREATE TABLE "+tpcc.Schema+".hd_prepared (warehouses INT) ENGINE=InnoDB SELECT ? AS warehouses", s.Params.Warehouses)
	return err
}

// runTPCCOnce runs go-tpc on the client host and parses its summary,
// stopped as stalled after limit (0: none), as a sysbench run is. out is
// what it printed.
func runTPCCOnce(ctx context.Context, l Lab, argv []string, limit time.Duration, save string) (tpcc.Result, string, error) {
	out, runErr, stall := runLimited(ctx, l, "go-tpc", argv, limit)
	_ = os.WriteFile(save, out, 0o644)
	res, perr := tpcc.Parse(string(out))
	switch {
	case stall != nil:
		return res, string(out), stall
	case runErr != nil && ctx.Err() == nil:
		return res, string(out), fmt.Errorf("go-tpc run: %s", redact(runErr, out, argvPassword(argv)))
	case perr != nil:
		return res, string(out), fmt.Errorf("go-tpc run: %s", redact(perr, out, argvPassword(argv)))
	}
	return res, string(out), nil
}

// redact is an error of go-tpc's for a message: its exit and the end of
// what it printed, never its command line (which holds the password).
func redact(err error, out []byte, password string) string {
	why := "it said"
	if err != nil {
		why = err.Error()
		if i := strings.Index(why, ": exit status"); i >= 0 {
			why = strings.TrimPrefix(why[i:], ": ") // the host's error names the command line before it
		}
	}
	msg := why + ": " + tail(out)
	if p := tpcc.Panic(string(out)); p != "" { // its stack trace would be all the end shows
		msg = why + ": " + p
	}
	if password != "" {
		msg = strings.ReplaceAll(msg, password, "***")
	}
	return msg
}

// argvPassword is the value of --password in a go-tpc command line.
func argvPassword(argv []string) string {
	for i, a := range argv {
		if a == "--password" && i+1 < len(argv) {
			return argv[i+1]
		}
	}
	return ""
}

// checkTPCC runs TPC-C's consistency conditions (go-tpc check, its output
// saved), the history index there for its time only. err: the index
// could not be added, or the check stalled (nothing was checked).
func checkTPCC(ctx context.Context, l Lab, e Endpoint, bin string, t tpcc.Target, warehouses int, save string) (*TPCCCheck, error) {
	began := time.Now()
	undo, err := checkIndex(ctx, l, e)
	if err != nil {
		return nil, err
	}
	raw, runErr, stall := runLimited(ctx, l, "go-tpc check", tpcc.Argv(bin, t, warehouses, min(warehouses, 4), 0, "check"), 0)
	undo()
	_ = os.WriteFile(save, raw, 0o644)
	if stall != nil {
		return nil, stall // nothing checked: no verdict on the data
	}
	c := &TPCCCheck{Failures: tpcc.CheckFailures(string(raw)), Seconds: time.Since(began).Seconds()}
	if runErr != nil && len(c.Failures) == 0 && ctx.Err() == nil {
		c.Failures = []string{"go-tpc check: " + redact(runErr, raw, t.Password)}
	}
	c.Passed = len(c.Failures) == 0 && runErr == nil
	return c, nil
}
