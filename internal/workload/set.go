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

// setTable holds the set's elements, one row each.
const setTable = "app.hd_set"

// StartSet makes the set workload's table (emptied) and starts its
// clients, each on its route, until Stop or ctx ends: three in four
// operations add an element unique to the run (one INSERT, committed on
// its own), the others read the whole set (one SELECT); with a read
// target the reads go there. Each element's fate and how long reads
// missed it after its acknowledgement is what the check says
// (Jepsen's set-full).
func StartSet(ctx context.Context, l Lab, targets, readers []Endpoint, p HistoryParams) (*HistoryRun, error) {
	db, err := targets[0].Open(l)
	if err != nil {
		return nil, err
	}
	err = execAll(ctx, db, "CREATE TABLE IF NOT EXISTS "+setTable+" (e BIGINT PRIMARY KEY) ENGINE=InnoDB", "DELETE FROM "+setTable)
	db.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", targets[0].Name, err)
	}
	if err := settled(ctx, l, append(slices.Clone(targets), readers...), "SELECT COUNT(*) FROM "+setTable, "0"); err != nil {
		return nil, err
	}
	a := &HistoryRun{rec: consistency.NewRecorder(), l: l, targets: targets, readers: readers, p: p}
	var next atomic.Int64
	var runCtx context.Context
	runCtx, a.cancel = context.WithCancel(ctx)
	for i := 0; i < p.Clients; i++ {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			setClient(runCtx, l, a.client(i), p, a.rec, func() int { return int(next.Add(1)) }, uint64(i))
		}()
	}
	return a, nil
}

// setClient adds elements (three in four operations) and reads the whole
// set until ctx ends (clientLoop).
func setClient(ctx context.Context, l Lab, e route, p HistoryParams, rec *consistency.Recorder, next func() int, seed uint64) {
	r := rand.New(rand.NewPCG(seed, uint64(time.Now().UnixNano())))
	clientLoop(ctx, l, e, p.SyncWait, rec, func() (consistency.Op, func(context.Context, *sql.Conn) consistency.Op) {
		if r.IntN(4) == 0 {
			return consistency.Op{F: consistency.FReadSet}, func(ctx context.Context, c *sql.Conn) consistency.Op {
				vs, code := readSet(ctx, c)
				if code != 0 {
					return consistency.Op{Type: "fail", Error: code}
				}
				return consistency.Op{Type: "ok", Elements: vs}
			}
		}
		v := []int{next()}
		return consistency.Op{F: consistency.FAdd, Elements: v}, func(ctx context.Context, c *sql.Conn) consistency.Op {
			if _, err := c.ExecContext(ctx, "INSERT INTO "+setTable+" (e) VALUES (?)", v[0]); err != nil {
				typ, code := commitFailed(err)
				return consistency.Op{Type: typ, Error: code, Elements: v}
			}
			return consistency.Op{Type: "ok", Elements: v}
		}
	})
}

// readSet reads every element (and 0, or the error's number).
func readSet(ctx context.Context, c *sql.Conn) ([]int, int) {
	rows, err := c.QueryContext(ctx, "SELECT e FROM "+setTable+" ORDER BY e")
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

// finalSetRead is one final read of the whole set on conn, recorded as
// process; it says whether it succeeded.
func (a *HistoryRun) finalSetRead(ctx context.Context, conn *sql.Conn, process int, node string) bool {
	a.rec.Record(consistency.Op{Process: process, Type: "invoke", Node: node, F: consistency.FReadSet})
	vs, code := readSet(ctx, conn)
	typ := "ok"
	if code != 0 {
		typ = "fail"
	}
	a.rec.Record(consistency.Op{Process: process, Type: typ, Node: node, F: consistency.FReadSet, Error: code, Elements: vs})
	return typ == "ok"
}
