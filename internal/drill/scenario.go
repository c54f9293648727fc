package drill

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/go-sql-driver/mysql"
)

// connect opens the writer's and reader's pools through the load balancer
// (a new connection per operation) and makes the drill's table.
func (d *drill) connect(ctx context.Context, run string) (w, r *sql.DB, err error) {
	w, err = d.l.AppDB(fmt.Sprintf("%s:%d", d.lb.Address, d.lb.Port))
	if err != nil {
		return nil, nil, err
	}
	readPort := d.lb.Port
	if d.lb.ReadPort != 0 {
		readPort = d.lb.ReadPort
	}
	r, err = d.l.AppDB(fmt.Sprintf("%s:%d", d.lb.Address, readPort))
	if err != nil {
		w.Close()
		return nil, nil, err
	}
	for _, db := range []*sql.DB{w, r} {
		db.SetMaxOpenConns(4 * d.o.Rate)
		db.SetMaxIdleConns(0)
	}
	// the first connection through the load balancer may take longer than
	// a connection's 2 s to be made on a busy computer (over SSH, a channel
	// to the client host first): tried again within the 10 s, unless the
	// server answered (an error of its own)
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		_, err = w.ExecContext(cctx, "CREATE TABLE IF NOT EXISTS app.hd_drill (run CHAR(24) NOT NULL, id BIGINT NOT NULL, sent DATETIME(6), PRIMARY KEY (run, id)) ENGINE=InnoDB")
		var answered *mysql.MySQLError
		if err == nil || cctx.Err() != nil || errors.As(err, &answered) {
			break
		}
		select {
		case <-cctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
	if err != nil {
		w.Close()
		r.Close()
		return nil, nil, fmt.Errorf("drill table through %s: %w", d.lb.Name, err)
	}
	return w, r, nil
}

// fault applies the scenario's fault and its recovery, and waits until the
// cluster is whole again.
func (d *drill) fault(ctx context.Context) error {
	last, err := d.sc.inject(ctx, d)
	if err != nil {
		return err
	}
	if last.IsZero() {
		last = d.faultAt
	}
	t, ok := d.s.waitFor(ctx, d.s.brokenAt(last), d.o.Timeout, d.whole)
	if !ok {
		return fmt.Errorf("cluster %s not whole (every node Synced in one primary component) within %v", d.cluster.Name, d.o.Timeout)
	}
	d.wholeAt = t
	return ctx.Err()
}

// whole: every member of the cluster Synced in one primary component.
func (d *drill) whole(s Sample) bool { return s.Whole(d.cluster.Members()) }

// waitWrites waits until a write sent after the fault was in place (now:
// the fault's call returned; a write sent while it was being applied, say
// before a crashed host's NICs went down, proves nothing) is acknowledged.
func (d *drill) waitWrites(ctx context.Context, limit time.Duration) {
	since := time.Now()
	for end := since.Add(limit); time.Now().Before(end) && ctx.Err() == nil; time.Sleep(20 * time.Millisecond) {
		if d.t.ackedAfter(since) {
			d.logf("writes acknowledged again after %.2fs", time.Since(d.faultAt).Seconds())
			return
		}
	}
	d.logf("writes did not resume within %v", limit)
}

func (d *drill) waitReformed(ctx context.Context, size int) {
	if t, ok := d.s.waitFor(ctx, d.faultAt, d.o.Hold, func(s Sample) bool { return s.Reformed(d.res.Targets, size) }); ok {
		d.logf("cluster re-formed without %v after %.2fs", d.res.Targets, t.Sub(d.faultAt).Seconds())
	}
}
