package drill

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/hadrill/hadrill/internal/fault"
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
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err = w.ExecContext(cctx, "CREATE TABLE IF NOT EXISTS app.hd_drill (run CHAR(24) NOT NULL, id BIGINT NOT NULL, sent DATETIME(6), PRIMARY KEY (run, id))"); err != nil {
		w.Close()
		r.Close()
		return nil, nil, fmt.Errorf("drill table through %s: %w", d.lb.Name, err)
	}
	return w, r, nil
}

// fault applies the scenario's fault and its recovery, and waits until the
// cluster is whole again.
func (d *drill) fault(ctx context.Context) error {
	l, o := d.l, d.o
	galeraWhole := func(s Sample) bool { return s.Whole(d.cluster.Members()) }
	survivors := d.cluster.Members()
	var last time.Time // the last fault step (rolling restart: the last node's)
	switch o.Scenario {
	case "failover":
		d.faultAt = time.Now()
		if err := l.ProcessFault(ctx, "kill", d.res.Targets); err != nil {
			return err
		}
		survivors--
		d.logf("killed %s (kill -9); waiting for writes to resume", d.res.Targets[0])
		d.waitWrites(ctx, o.Hold)
		d.waitReformed(ctx, survivors)
		sleep(ctx, time.Second)
		d.logf("starting %s again", d.res.Targets[0])
		if err := l.Heal(ctx); err != nil {
			return err
		}
	case "partition":
		d.faultAt = time.Now()
		if err := l.Partition(ctx, d.res.Targets, nil); err != nil {
			return err
		}
		survivors -= d.faultedMembers()
		d.logf("cut %v off; waiting for writes to resume", d.res.Targets)
		if survivors*2 <= d.cluster.Members() {
			d.logf("no side keeps a majority of the %d members: writes can only resume once the partition heals (after --hold %v)",
				d.cluster.Members(), o.Hold)
		}
		d.waitWrites(ctx, o.Hold)
		if survivors*2 > d.cluster.Members() {
			d.waitReformed(ctx, survivors)
		}
		sleep(ctx, time.Second)
		d.logf("healing the partition")
		if err := l.Heal(ctx); err != nil {
			return err
		}
	case "full-outage":
		d.faultAt = time.Now()
		if err := l.ProcessFault(ctx, "kill", d.cluster.Nodes); err != nil {
			return err
		}
		d.logf("killed every node of %s (kill -9); recovering", d.cluster.Name)
		if err := l.RecordFault(fault.Record{Fault: "recover", Targets: d.cluster.Nodes}); err != nil {
			return err
		}
		if err := l.Recover(ctx, ""); err != nil {
			return err
		}
		d.waitWrites(ctx, o.Timeout)
	case "rolling-restart":
		order := d.restartOrder()
		d.faultAt = time.Now()
		for _, name := range order {
			last = time.Now()
			if err := l.RecordFault(fault.Record{Fault: "restart", Targets: []string{name}}); err != nil {
				return err
			}
			d.logf("restarting %s", name)
			if err := l.Restart(ctx, []string{name}); err != nil {
				return err
			}
			if _, ok := d.s.waitFor(ctx, d.s.brokenAt(last), o.Timeout, galeraWhole); !ok {
				return fmt.Errorf("cluster %s not whole within %v after restarting %s", d.cluster.Name, o.Timeout, name)
			}
		}
	}
	if last.IsZero() {
		last = d.faultAt
	}
	t, ok := d.s.waitFor(ctx, d.s.brokenAt(last), o.Timeout, galeraWhole)
	if !ok {
		return fmt.Errorf("cluster %s not whole (every node Synced in one primary component) within %v", d.cluster.Name, o.Timeout)
	}
	d.wholeAt = t
	return ctx.Err()
}

// faultedMembers counts the cluster's members (nodes, arbitrator) a
// failover or partition takes away; a partition cutting off the majority
// leaves the side with the most members the one that should carry on.
func (d *drill) faultedMembers() int {
	if d.o.Scenario == "failover" {
		return 1
	}
	cut, err := fault.Partition(d.l.Plan, d.res.Targets, nil)
	if err != nil {
		return 0
	}
	n := 0
	for _, h := range cut.Side {
		if contains(d.cluster.Nodes, h.Name) || (d.cluster.Arbitrator != nil && h.Name == d.cluster.Arbitrator.Name) {
			n++
		}
	}
	if rest := d.cluster.Members() - n; rest < n {
		return rest
	}
	return n
}

// restartOrder restarts the load balancer's writer last (as a DBA would).
func (d *drill) restartOrder() []string {
	w, _ := d.writer()
	var out []string
	for _, n := range d.cluster.Nodes {
		if n != w {
			out = append(out, n)
		}
	}
	if w != "" {
		out = append(out, w)
	}
	return out
}

func (d *drill) waitWrites(ctx context.Context, limit time.Duration) {
	for end := time.Now().Add(limit); time.Now().Before(end) && ctx.Err() == nil; time.Sleep(20 * time.Millisecond) {
		if d.t.ackedAfter(d.faultAt) {
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
