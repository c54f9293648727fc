package workload

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/consistency"
)

// counterTable holds the counter workload's counters, one row each.
const counterTable = "app.hd_counter"

// StartCounter makes p.Keys counters at zero (the table made and emptied
// first) and starts the clients, each on its route, until Stop or ctx
// ends: three in four operations add 1 to 5 to one counter (one UPDATE …
// SET v = v + n, committed on its own), the others read one counter (one
// SELECT); with a read target the reads go there. The check bounds each
// read by the increments around it (Jepsen's counter).
func StartCounter(ctx context.Context, l Lab, targets, readers []Endpoint, p HistoryParams) (*HistoryRun, error) {
	db, err := targets[0].Open(l)
	if err != nil {
		return nil, err
	}
	var rows []string
	for k := 0; k < p.Keys; k++ {
		rows = append(rows, fmt.Sprintf("(%d, 0)", k))
	}
	err = execAll(ctx, db, "DROP TABLE IF EXISTS "+counterTable, "CREATE TABLE "+counterTable+" (k INT PRIMARY KEY, v BIGINT NOT NULL) ENGINE=InnoDB",
		"INSERT INTO "+counterTable+" (k, v) VALUES "+strings.Join(rows, ", "))
	db.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", targets[0].Name, err)
	}
	if err := settled(ctx, l, append(slices.Clone(targets), readers...), "SELECT CONCAT(COUNT(*), ':', COALESCE(SUM(v = 0), 0)) FROM "+counterTable,
		fmt.Sprintf("%d:%d", p.Keys, p.Keys)); err != nil {
		return nil, err
	}
	a := &HistoryRun{rec: consistency.NewRecorder(), l: l, targets: targets, readers: readers, p: p}
	a.startClients(ctx, func(ctx context.Context, i int) { counterClient(ctx, l, a.client(i), p, a.rec, uint64(i)) })
	return a, nil
}

// counterClient adds to a counter (three in four operations) or reads one
// until ctx ends (clientLoop).
func counterClient(ctx context.Context, l Lab, e route, p HistoryParams, rec *consistency.Recorder, seed uint64) {
	r := rand.New(rand.NewPCG(seed, uint64(time.Now().UnixNano())))
	clientLoop(ctx, l, e, p.SyncWait, rec, func() (consistency.Op, func(context.Context, *sql.Conn) consistency.Op) {
		k := r.IntN(p.Keys)
		if r.IntN(4) == 0 {
			return consistency.Op{F: consistency.FReadCounter, Data: &consistency.CounterOp{Key: k}}, func(ctx context.Context, c *sql.Conn) consistency.Op {
				v, code := readCounter(ctx, c, k)
				if code != 0 {
					return consistency.Op{Type: "fail", Error: code, Data: &consistency.CounterOp{Key: k}}
				}
				return consistency.Op{Type: "ok", Data: &consistency.CounterOp{Key: k, Value: v, Read: true}}
			}
		}
		inc := &consistency.CounterOp{Key: k, Delta: 1 + r.IntN(5)}
		return consistency.Op{F: consistency.FIncr, Data: inc}, func(ctx context.Context, c *sql.Conn) consistency.Op {
			if _, err := c.ExecContext(ctx, "UPDATE "+counterTable+" SET v = v + ? WHERE k = ?", inc.Delta, k); err != nil {
				typ, code := commitFailed(err)
				return consistency.Op{Type: typ, Error: code, Data: inc}
			}
			return consistency.Op{Type: "ok", Data: inc}
		}
	})
}

// readCounter reads one counter (and 0, or the error's number).
func readCounter(ctx context.Context, c *sql.Conn, k int) (int, int) {
	var v int
	if err := c.QueryRowContext(ctx, "SELECT v FROM "+counterTable+" WHERE k = ?", k).Scan(&v); err != nil {
		return 0, errorNumber(err)
	}
	return v, 0
}

// finalCounterRead reads every counter on conn, as process (one read
// after another); it says whether every one succeeded.
func (a *HistoryRun) finalCounterRead(ctx context.Context, conn *sql.Conn, process int, node string) bool {
	ok := true
	for k := 0; k < a.p.Keys; k++ {
		a.rec.Record(consistency.Op{Process: process, Type: "invoke", Node: node, F: consistency.FReadCounter, Data: &consistency.CounterOp{Key: k}})
		v, code := readCounter(ctx, conn, k)
		done := &consistency.CounterOp{Key: k, Value: v, Read: code == 0}
		typ := "ok"
		if code != 0 {
			typ, ok = "fail", false
		}
		a.rec.Record(consistency.Op{Process: process, Type: typ, Node: node, F: consistency.FReadCounter, Error: code, Data: done})
	}
	return ok
}

// counterFigures are the counter's own, and the reads' freshness.
var counterFigures = []Figure{
	committedPerS("Increments and reads"),
	ownFigure("lost_increments", "Amount acknowledged that the last read of each counter (after its last acknowledged increment) missed, summed over the counters", "lost", 1),
	counted("stale_counter_reads", "Counter reads below what the increments acknowledged before they began add up to", "stale-counter"),
	counted("too_high_reads", "Counter reads above what every increment that may have committed adds up to", "counter-too-high"),
	stalePct,
	behindP99,
}
