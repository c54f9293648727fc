package drill

import (
	"context"
	"database/sql"
	"sync"
	"time"
)

// opTimeout bounds one operation: a write that hangs longer counts as failed
// (its id may still land: the audit only looks for acknowledged ids).
const opTimeout = 3 * time.Second

// traffic is the open-loop writer and reader: operations are issued on a
// fixed schedule whether or not earlier ones returned, each on a new
// connection through the load balancer (as a connection-per-request
// application), so a stalled server shows as a gap, not as a slower writer.
type traffic struct {
	mu   sync.Mutex
	ops  []*Op
	wg   sync.WaitGroup
	stop chan struct{}
	done chan struct{}
}

func startTraffic(ctx context.Context, w, r *sql.DB, run string, writesPerS int) *traffic {
	t := &traffic{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(t.done)
		every := time.Second / time.Duration(writesPerS)
		tick := time.NewTicker(every)
		defer tick.Stop()
		var id int64
		for i := 0; ; i++ {
			select {
			case <-t.stop:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			id++
			t.issue(ctx, w, &Op{Write: true, ID: id}, "INSERT INTO app.hd_drill (run, id, sent) VALUES (?, ?, NOW(6))", run, id)
			if i%2 == 0 {
				t.issue(ctx, r, &Op{}, "SELECT COUNT(*) FROM app.hd_drill WHERE run = ?", run)
			}
		}
	}()
	return t
}

func (t *traffic) issue(ctx context.Context, db *sql.DB, o *Op, query string, args ...any) {
	o.Sent = time.Now()
	t.mu.Lock()
	t.ops = append(t.ops, o)
	t.mu.Unlock()
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		octx, cancel := context.WithTimeout(ctx, opTimeout)
		defer cancel()
		var err error
		if o.Write {
			_, err = db.ExecContext(octx, query, args...)
		} else {
			var n int64
			err = db.QueryRowContext(octx, query, args...).Scan(&n)
		}
		t.mu.Lock()
		o.Done, o.Code = time.Now(), Code(err)
		t.mu.Unlock()
	}()
}

// finish stops issuing, waits for what is in flight and returns every op.
func (t *traffic) finish() []Op {
	close(t.stop)
	<-t.done
	t.wg.Wait()
	return t.snapshot()
}

// snapshot copies the operations so far (in flight ones without their
// return).
func (t *traffic) snapshot() []Op {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Op, len(t.ops))
	for i, o := range t.ops {
		out[i] = *o
	}
	return out
}

// ackedAfter reports whether a write issued after at has been
// acknowledged (for waiting on "writes resumed").
func (t *traffic) ackedAfter(at time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := len(t.ops) - 1; i >= 0; i-- {
		o := t.ops[i]
		if o.Write && o.OK() && o.Sent.After(at) {
			return true
		}
		if o.Sent.Before(at) {
			break
		}
	}
	return false
}
