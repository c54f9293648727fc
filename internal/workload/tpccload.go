package workload

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/workload/tpcc"
)

// TPCCLoad is TPC-C traffic running under a drill: go-tpc runs of a few
// seconds back to back through the drill's load balancer, until Stop; then
// Check runs TPC-C's consistency conditions on what the fault left.
type TPCCLoad struct {
	l       Lab
	e       Endpoint
	bin     string
	t       tpcc.Target
	p       tpcc.Params
	dir     string
	drop    func()
	cancel  context.CancelFunc
	done    chan struct{}
	began   time.Time
	mu      sync.Mutex
	figures TPCCUnderFault
}

// TPCCUnderFault is what TPC-C did under a drill: its New-Order count and
// rate over the whole drill, each run's tpmC (a run of RunSeconds, back to
// back), and the errors by server code.
type TPCCUnderFault struct {
	Warehouses int     `json:"warehouses"`
	Clients    int     `json:"clients"`
	RunSeconds int     `json:"run_seconds"`
	NewOrders  int64   `json:"new_orders"`
	TpmC       float64 `json:"tpmc"` // over the whole drill
	// Runs are each run's tpmC in order (0: a run the fault stopped
	// outright, its go-tpc failing).
	Runs   []float64      `json:"runs_tpmc"`
	Failed int            `json:"runs_failed"`
	ByCode map[string]int `json:"errors_by_code,omitempty"`
	// Check is the consistency conditions' verdict after the drill.
	Check *TPCCCheck `json:"check,omitempty"`
}

// tpccDrillRun is how long each go-tpc run under a drill lasts: its
// summary every few seconds, a stop at most that late.
const tpccDrillRun = 5

// StartTPCC prepares TPC-C's dataset of warehouses (or reuses it), then
// starts clients of it through e until Stop. runID names the drill's run
// (its account and its files).
func StartTPCC(ctx context.Context, l Lab, e Endpoint, warehouses, clients int, runID string, log io.Writer) (*TPCCLoad, error) {
	bin, err := goTPC(ctx, l)
	if err != nil {
		return nil, err
	}
	t := tpcc.Target{Host: e.Host, Port: e.Port}
	if err := os.MkdirAll(results.RunDir(l.Home(), runID), 0o755); err != nil {
		return nil, err
	}
	user, pw, drop, err := runAccount(ctx, l, runID)
	if err != nil {
		return nil, err
	}
	t.User, t.Password = user, pw
	e.User, e.Password = user, pw
	p := tpcc.Params{Warehouses: warehouses, Threads: []int{clients}, Time: tpccDrillRun, Runs: 1}
	if err := prepareTPCC(ctx, l, TPCC{Params: p, Target: e, Log: log}, bin, t); err != nil {
		drop()
		return nil, err
	}
	before, err := newOrders(ctx, l, e)
	if err != nil {
		drop()
		return nil, err
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	x := &TPCCLoad{l: l, e: e, bin: bin, t: t, p: p, dir: results.RunDir(l.Home(), runID), drop: drop, cancel: cancel, done: make(chan struct{}),
		began: time.Now(), figures: TPCCUnderFault{Warehouses: warehouses, Clients: clients, RunSeconds: tpccDrillRun, NewOrders: -before}}
	go func() {
		defer close(x.done)
		for i := 1; rctx.Err() == nil; i++ {
			res, _, err := runTPCCOnce(rctx, l, tpcc.Argv(bin, t, warehouses, clients, tpccDrillRun, "run"), stallLimit(tpccDrillRun), filepath.Join(x.dir, fmt.Sprintf("go-tpc-drill-%d.out", i)))
			if rctx.Err() != nil {
				return
			}
			x.mu.Lock()
			if err != nil {
				x.figures.Failed++
				x.figures.Runs = append(x.figures.Runs, 0)
				time.Sleep(time.Second) // a fault refusing every connection: not a busy loop
			} else {
				x.figures.Runs = append(x.figures.Runs, res.TpmC)
			}
			for code, n := range res.ByCode {
				if x.figures.ByCode == nil {
					x.figures.ByCode = map[string]int{}
				}
				x.figures.ByCode[code] += n
			}
			x.mu.Unlock()
		}
	}()
	return x, nil
}

// Stop ends the clients (the run under way is cut short) and counts the
// New-Orders committed since the start.
func (x *TPCCLoad) Stop(ctx context.Context) TPCCUnderFault {
	x.cancel()
	<-x.done
	x.mu.Lock()
	defer x.mu.Unlock()
	f := x.figures
	f.ByCode = maps.Clone(f.ByCode)
	if after, err := newOrders(ctx, x.l, x.e); err == nil {
		f.NewOrders += after
	} else {
		f.NewOrders = 0
	}
	f.TpmC = float64(f.NewOrders) / time.Since(x.began).Minutes()
	return f
}

// Abandon stops the clients and drops the run's account, checking
// nothing (a drill that ended before its fault).
func (x *TPCCLoad) Abandon() {
	x.cancel()
	<-x.done
	x.drop()
}

// Check runs TPC-C's consistency conditions, then drops the run's account.
func (x *TPCCLoad) Check(ctx context.Context) *TPCCCheck {
	defer x.drop()
	c, err := checkTPCC(ctx, x.l, x.e, x.bin, x.t, x.p.Warehouses, filepath.Join(x.dir, "go-tpc-check.out"))
	if err != nil {
		return &TPCCCheck{Failures: []string{err.Error()}}
	}
	return c
}

// newOrders is how many orders the districts have taken (their next order
// ids' sum): New-Order transactions committed, counted by the database.
func newOrders(ctx context.Context, l Lab, e Endpoint) (int64, error) {
	db, err := e.Open(l)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var n int64
	err = db.QueryRowContext(ctx, "SET STATEMENT wsrep_sync_wait=1 FOR SELECT COALESCE(SUM(d_next_o_id), 0) FROM "+tpcc.Schema+".district").Scan(&n)
	if err != nil {
		// a server without Galera has no wsrep_sync_wait
		err = db.QueryRowContext(ctx, "SELECT COALESCE(SUM(d_next_o_id), 0) FROM "+tpcc.Schema+".district").Scan(&n)
	}
	return n, err
}
