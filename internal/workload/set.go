package workload

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"time"

	"github.com/hadrill/hadrill/internal/consistency"
)

// setTable holds the sets' elements, one row each.
const setTable = "app.hd_set"

// ElementsPerSet is how many elements the set workload adds to a set
// before it retires the set for a new one: a read of a whole set stays
// short, and a history grows with its operations, not with their square.
const ElementsPerSet = 1000

// SetOpsPerSecond paces each set client: a set's reads then follow its
// elements for as long as it lives (1,000 elements over the clients'
// adds, about 20 s for two sets from six clients), which bounds how long
// a stale read can be measured, and a history stays small (set-full
// checks visibility, not throughput).
const SetOpsPerSecond = 40

// StartSet makes the set workload's table (emptied) and starts its
// clients, each on its route, until Stop or ctx ends, each at most
// SetOpsPerSecond operations a second: three in four add an element unique to the run to one of Keys sets at once
// (one INSERT, committed on its own; each set retired for a new one after
// ElementsPerSet elements), the others read one of those sets whole (one
// SELECT); with a read target the reads go there. Each element's fate and
// how long reads missed it after its acknowledgement is what the check
// says (Jepsen's set-full).
func StartSet(ctx context.Context, l Lab, targets, readers []Endpoint, p HistoryParams) (*HistoryRun, error) {
	db, err := targets[0].Open(l)
	if err != nil {
		return nil, err
	}
	err = execAll(ctx, db, "DROP TABLE IF EXISTS "+setTable, "CREATE TABLE "+setTable+" (s INT NOT NULL, e BIGINT NOT NULL, PRIMARY KEY (s, e)) ENGINE=InnoDB")
	db.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", targets[0].Name, err)
	}
	if err := settled(ctx, l, append(slices.Clone(targets), readers...), "SELECT COUNT(*) FROM "+setTable, "0"); err != nil {
		return nil, err
	}
	a := &HistoryRun{rec: consistency.NewRecorder(), l: l, targets: targets, readers: readers, p: p, keys: newKeyspace(max(1, p.Keys), ElementsPerSet)}
	var next atomic.Int64
	a.startClients(ctx, func(ctx context.Context, i int) {
		setClient(ctx, l, a.client(i), p, a.rec, a.keys, func() int { return int(next.Add(1)) }, uint64(i))
	})
	return a, nil
}

// setClient adds elements (three in four operations) and reads a whole
// set until ctx ends (clientLoop).
func setClient(ctx context.Context, l Lab, e route, p HistoryParams, rec *consistency.Recorder, ks *keyspace, next func() int, seed uint64) {
	r := rand.New(rand.NewPCG(seed, uint64(time.Now().UnixNano())))
	slot := time.Now()
	clientLoop(ctx, l, e, p.SyncWait, rec, func() (consistency.Op, func(context.Context, *sql.Conn) consistency.Op) {
		slot = slot.Add(time.Second / SetOpsPerSecond)
		sleepCtx(ctx, time.Until(slot))
		if now := time.Now(); slot.Before(now) {
			slot = now // a slow operation is not made up for
		}
		set := ks.pick(r)
		if r.IntN(4) == 0 {
			return consistency.Op{F: consistency.FReadSet, Data: &consistency.SetOp{Set: set}}, func(ctx context.Context, c *sql.Conn) consistency.Op {
				vs, code := readSet(ctx, c, set)
				if code != 0 {
					return consistency.Op{Type: "fail", Error: code, Data: &consistency.SetOp{Set: set}}
				}
				return consistency.Op{Type: "ok", Data: &consistency.SetOp{Set: set, Elements: vs}}
			}
		}
		ks.value(set) // counts the set's elements: its last retires it
		v := []int{next()}
		return consistency.Op{F: consistency.FAdd, Data: &consistency.SetOp{Set: set, Elements: v}}, func(ctx context.Context, c *sql.Conn) consistency.Op {
			if _, err := c.ExecContext(ctx, "INSERT INTO "+setTable+" (s, e) VALUES (?, ?)", set, v[0]); err != nil {
				typ, code := commitFailed(err)
				return consistency.Op{Type: typ, Error: code, Data: &consistency.SetOp{Set: set, Elements: v}}
			}
			return consistency.Op{Type: "ok", Data: &consistency.SetOp{Set: set, Elements: v}}
		}
	})
}

// readSet reads every element of a set (and 0, or the error's number).
func readSet(ctx context.Context, c *sql.Conn, set int) ([]int, int) {
	rows, err := c.QueryContext(ctx, "SELECT e FROM "+setTable+" WHERE s = ? ORDER BY e", set)
	if err != nil {
		return nil, errorNumber(err)
	}
	defer rows.Close()
	out := []int{}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, errorNumber(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, errorNumber(err)
	}
	return out, 0
}

// finalSetRead reads every set used so far, each whole, on conn, as
// process (one read after another); it says whether every one succeeded.
func (a *HistoryRun) finalSetRead(ctx context.Context, conn *sql.Conn, process int, node string) bool {
	ok := true
	for _, set := range a.keys.all() {
		a.rec.Record(consistency.Op{Process: process, Type: "invoke", Node: node, F: consistency.FReadSet, Data: &consistency.SetOp{Set: set}})
		vs, code := readSet(ctx, conn, set)
		typ := "ok"
		if code != 0 {
			typ, ok = "fail", false
		}
		a.rec.Record(consistency.Op{Process: process, Type: typ, Node: node, F: consistency.FReadSet, Error: code, Data: &consistency.SetOp{Set: set, Elements: vs}})
	}
	return ok
}
