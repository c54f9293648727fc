package workload

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/server"
)

// IdleLimit is how long a tool bounded by its events, not by a time
// (sysbench prepare and cleanup, go-tpc prepare and check, mariadb-slap,
// a dataset's statements), may run while no server of its lab does any
// work before it is taken for stalled and stopped: such a run has no time
// to hold it to, and one whose server answers nothing (a volume full,
// where the server waits for space for ever; a lock nobody releases)
// would otherwise hold a study campaign of hours for good. A server that
// works (its buffer pool's pages read or written, its files read or
// written: a long index build counts; the load's sessions running new
// statements) is never stopped.
const IdleLimit = 5 * time.Minute

// idleEvery is how often the servers' work is read, and idleLimit the
// limit watchIdle holds runs to (variables for the tests only).
var idleEvery, idleLimit = 15 * time.Second, IdleLimit

// idleReadTimeout bounds one server's answer to a reading.
const idleReadTimeout = 10 * time.Second

// workQuery sums what a server does: pages asked of its buffer pool and
// bytes its files read and wrote (a long index build moves them), and the
// statement ids of the application user's sessions (the load's: a
// statement that touches no table, SELECT 1, moves them; one stuck
// waiting keeps its id). Reading it moves none of them.
const workQuery = `SELECT CAST(
 (SELECT COALESCE(SUM(VARIABLE_VALUE), 0) FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME IN
  ('INNODB_BUFFER_POOL_READ_REQUESTS', 'INNODB_BUFFER_POOL_WRITE_REQUESTS', 'INNODB_DATA_READ', 'INNODB_DATA_WRITTEN'))
 + (SELECT COALESCE(SUM(QUERY_ID), 0) FROM information_schema.PROCESSLIST WHERE USER = ? AND ID <> CONNECTION_ID()) AS UNSIGNED)`

// workReader reads each server's work counter; a server that did not
// answer is missing from the map.
type workReader func(context.Context) map[string]uint64

// idleWatch decides, from successive readings, whether the servers did
// no work for its limit. A pure state machine (observe's time is given).
type idleWatch struct {
	limit time.Duration
	last  map[string]uint64 // the last answer of each server that answered
	since time.Time         // the last time a server was seen working (or the watch began)
}

// observe takes a reading at now and says how long no server has been
// seen working, and whether that is past the limit. Any server whose
// counter changed (a restarted one's too), or that answered for the first
// time, counts as work. A reading no server answered is no evidence
// either way: it neither resets the idle time nor, alone, ends the run
// (a stall is declared only on an answer that shows no work).
func (w *idleWatch) observe(now time.Time, r map[string]uint64) (idle time.Duration, stalled bool) {
	worked := false
	for name, v := range r {
		if old, ok := w.last[name]; !ok || old != v {
			worked = true
		}
		w.last[name] = v
	}
	if worked {
		w.since = now
	}
	idle = now.Sub(w.since)
	return idle, len(r) > 0 && !worked && idle >= w.limit
}

// watchIdle is ctx's child for a run of tool bounded by its events: it
// ends when the lab's servers did no work for IdleLimit. stop ends the
// watch and is the error saying the run was stopped as stalled (nil when
// it was not, or ctx itself ended).
func watchIdle(ctx context.Context, l Lab, tool string) (context.Context, func() error) {
	conns := server.NewConns(l)
	nodes := l.Plan().Nodes
	var refused sync.Map // node -> said: a server that answers the reading with an error is said once
	read := func(ctx context.Context) map[string]uint64 {
		out := map[string]uint64{}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := range nodes {
			n := &nodes[i]
			wg.Add(1)
			go func() {
				defer wg.Done()
				rctx, cancel := context.WithTimeout(ctx, idleReadTimeout)
				defer cancel()
				var s string
				if err := conns.DB(n).QueryRowContext(rctx, workQuery, plan.AppUser).Scan(&s); err != nil {
					var me *mysql.MySQLError // the server answered, and refused: said, not only skipped
					if errors.As(err, &me) {
						if _, said := refused.LoadOrStore(n.Name, true); !said {
							l.Logf("%s: %s's work cannot be read (%v): the run is not watched for stalling there", tool, n.Name, err)
						}
					}
					return
				}
				v, err := strconv.ParseUint(s, 10, 64)
				if err != nil {
					return
				}
				mu.Lock()
				out[n.Name] = v
				mu.Unlock()
			}()
		}
		wg.Wait()
		return out
	}
	wctx, stop := watchWith(ctx, tool, read, idleEvery, idleLimit)
	return wctx, func() error {
		err := stop()
		conns.Close()
		return err
	}
}

// watchWith is watchIdle with its reader, period and limit given.
func watchWith(ctx context.Context, tool string, read workReader, every, limit time.Duration) (context.Context, func() error) {
	wctx, cancel := context.WithCancel(ctx)
	var stall error
	done := make(chan struct{})
	t0 := time.Now()
	go func() {
		defer close(done)
		w := &idleWatch{limit: limit, last: map[string]uint64{}, since: t0}
		w.observe(t0, read(wctx)) // the first answers: where the servers stand
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-wctx.Done():
				return
			case <-tick.C:
			}
			r := read(wctx)
			if wctx.Err() != nil { // the run ended (or ctx) while the servers were read
				return
			}
			if idle, stalled := w.observe(time.Now(), r); stalled {
				stall = fmt.Errorf("%s ran %.0f s and was stopped: no server of the lab did any work (no page of its buffer pool read or written, nothing read from or written to its files, no new statement in the load's sessions) for the last %.0f s, past the %v a run bounded by its events may go without any (its server(s) stopped answering: a volume full, where the server waits for space and its error log says \"Disk is full\"; a lock; a cluster that lost its primary component): see `hadrill status` and the nodes' error logs",
					tool, time.Since(t0).Seconds(), idle.Seconds(), limit)
				cancel()
				return
			}
		}
	}()
	return wctx, func() error {
		cancel() // a reading under way gives up at once (an answer of none decides nothing)
		<-done
		if ctx.Err() != nil {
			return nil
		}
		return stall
	}
}
