package workload

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/hadrill/hadrill/internal/replication"
	"github.com/hadrill/hadrill/internal/results"
)

// Conflict is what two writable servers replicating into each other (a
// ring of primaries) make of the same rows written on both at once: each
// increments every row, one commit an increment; once each has applied the
// other's writes, their rows are compared.
type Conflict struct {
	A    string `json:"a"`
	B    string `json:"b"`
	Keys string `json:"keys"` // shared (both write the same rows) or own (each its own)
	Rows int    `json:"rows"` // rows written
	// Acked are the increments each server acknowledged, summed.
	Acked int `json:"acked"`
	// WriteS is the time both took to write; SettleS, from the last
	// acknowledgement until each had applied everything the other wrote.
	WriteS  float64 `json:"write_s"`
	SettleS float64 `json:"settle_s"`
	// Diverged are the rows whose contents differ between the two once
	// both settled; ChecksumA/B are each one's checksum of the rows, its
	// row count and sum of the rows' CRC32 (equal
	// when nothing diverged).
	Diverged  int    `json:"diverged_rows"`
	ChecksumA string `json:"checksum_a"`
	ChecksumB string `json:"checksum_b"`
	// Lost are acknowledged increments that no longer count on a server
	// (the more of the two): a row one server incremented and the other's
	// copy of the row then overwrote.
	Lost int `json:"lost_writes"`
}

// Key sets of a conflict test.
const (
	KeysShared = "shared"
	KeysOwn    = "own"
)

// conflictTable holds each test's rows under a batch of its own.
const conflictTable = "app.hd_conflict"

// conflictProc increments rows first … first+rows-1 of a batch in turn,
// writes times, each in a transaction of its own, and returns how many it
// committed.
const (
	conflictProc     = "app.hd_conflict_writes"
	conflictProcText = "CREATE OR REPLACE PROCEDURE " + conflictProc + ` (IN b BIGINT, IN first INT, IN nrows INT, IN writes INT, IN who VARCHAR(64))
BEGIN
  DECLARE j INT DEFAULT 0;
  WHILE j < writes DO
    UPDATE ` + conflictTable + ` SET n = n + 1, origin = who WHERE batch = b AND k = first + MOD(j, nrows);
    SET j = j + 1;
  END WHILE;
  SELECT j;
END`
)

// Conflicts writes on a and b at once, writes increments on each side
// (spread over rows), and compares what each holds once both settled.
func Conflicts(ctx context.Context, l Lab, a, b Endpoint, keys string, rows, writes int, command []string, log io.Writer) (_ *ProbeOutcome, err error) {
	run, err := NewRun(ctx, l, results.Conflict, command, map[string]any{"a": a.Name, "b": b.Name, "keys": keys, "rows": rows, "writes": writes})
	if err != nil {
		return nil, err
	}
	defer abandonIfFailed(l, run, &err)
	fmt.Fprintf(log, "%d increments on each of %s and %s over %d %s rows, then comparing them\n", writes, a.Name, b.Name, rows, keys)
	c, err := conflict(ctx, l, a, b, keys, rows, writes)
	if err != nil && ctx.Err() == nil {
		return nil, err
	}
	var out []Conflict
	if ctx.Err() == nil {
		out = append(out, c)
	}
	return storeProbe(ctx, l, run, out)
}

// row is one row of a conflict test as a server holds it.
type row struct {
	N      int64
	Origin string
}

func conflict(ctx context.Context, l Lab, a, b Endpoint, keys string, rows, writes int) (Conflict, error) {
	c := Conflict{A: a.Name, B: b.Name, Keys: keys, Rows: rows}
	w, r, closeAll, err := pair(ctx, l, a, b)
	if err != nil {
		return c, err
	}
	defer closeAll()
	sides := []struct {
		name string
		conn *sql.Conn
	}{{a.Name, w}, {b.Name, r}}
	if _, err := w.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS "+conflictTable+
		" (batch BIGINT NOT NULL, k INT NOT NULL, n BIGINT NOT NULL, origin VARCHAR(64) NOT NULL, PRIMARY KEY (batch, k)) ENGINE=InnoDB"); err != nil {
		return c, fmt.Errorf("%s: %w", a.Name, err)
	}
	if _, err := w.ExecContext(ctx, conflictProcText); err != nil {
		return c, fmt.Errorf("%s: %w", a.Name, err)
	}
	// every row made on a, until b has them all
	batch := time.Now().UnixNano()
	total := rows
	if keys == KeysOwn {
		total = 2 * rows
	}
	for k := 0; k < total; k++ {
		if _, err := w.ExecContext(ctx, "INSERT INTO "+conflictTable+" VALUES (?, ?, 0, '')", batch, k); err != nil {
			return c, fmt.Errorf("%s: %w", a.Name, err)
		}
	}
	if err := settle(ctx, w, r, a.Name, b.Name); err != nil {
		return c, err
	}
	// both write at once, each on its own server, as an application next
	// to each would (a procedure's loop: a commit per increment, no round
	// trip to this client between them); with own keys, b writes rows a
	// does not
	t0 := time.Now()
	acked := make([]int, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, s := range sides {
		first := 0
		if keys == KeysOwn {
			first = i * rows
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.conn.QueryRowContext(ctx, "CALL "+conflictProc+"(?, ?, ?, ?, ?)", batch, first, rows, writes, s.name).Scan(&acked[i])
			if err != nil {
				errs[i] = fmt.Errorf("%s: %w", s.name, err)
			}
		}()
	}
	wg.Wait()
	last := time.Now()
	for _, err := range errs {
		if err != nil {
			return c, err
		}
	}
	c.Acked, c.WriteS = acked[0]+acked[1], last.Sub(t0).Seconds()
	if err := settle(ctx, w, r, a.Name, b.Name); err != nil {
		return c, err
	}
	if err := settle(ctx, r, w, b.Name, a.Name); err != nil {
		return c, err
	}
	c.SettleS = time.Since(last).Seconds()
	held := make([]map[int]row, 2)
	for i, s := range sides {
		if held[i], err = readBatch(ctx, s.conn, batch); err != nil {
			return c, fmt.Errorf("%s: %w", s.name, err)
		}
	}
	c.Diverged, c.Lost = compare(held[0], held[1], c.Acked)
	for i, s := range sides {
		var sum sql.NullString
		if err := s.conn.QueryRowContext(ctx, "SELECT CONCAT(COUNT(*), '-', SUM(CRC32(CONCAT_WS('#', k, n, origin)))) FROM "+conflictTable+" WHERE batch = ?", batch).Scan(&sum); err != nil {
			return c, fmt.Errorf("%s: %w", s.name, err)
		}
		if i == 0 {
			c.ChecksumA = sum.String
		} else {
			c.ChecksumB = sum.String
		}
	}
	return c, nil
}

// compare counts the rows two servers hold differently (a row one lacks
// counts too), and the acknowledged increments missing from the server
// that counts fewer.
func compare(a, b map[int]row, acked int) (diverged, lost int) {
	sum := func(m map[int]row) (s int64) {
		for _, r := range m {
			s += r.N
		}
		return s
	}
	for k, ra := range a {
		if rb, ok := b[k]; !ok || rb != ra {
			diverged++
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			diverged++
		}
	}
	lost = acked - int(min(sum(a), sum(b)))
	return diverged, max(lost, 0)
}

func readBatch(ctx context.Context, db *sql.Conn, batch int64) (map[int]row, error) {
	rs, err := db.QueryContext(ctx, "SELECT k, n, origin FROM "+conflictTable+" WHERE batch = ?", batch)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	out := map[int]row{}
	for rs.Next() {
		var k int
		var x row
		if err := rs.Scan(&k, &x.N, &x.Origin); err != nil {
			return nil, err
		}
		out[k] = x
	}
	return out, rs.Err()
}

// settleTimeout bounds how long a server may take to apply another's writes.
const settleTimeout = 60 * time.Second

// settle waits until to has applied everything from wrote in from's own
// GTID domain (its own writes, not those it applied from others).
func settle(ctx context.Context, from, to *sql.Conn, fromName, toName string) error {
	var domain uint32
	var binlog string
	if err := from.QueryRowContext(ctx, "SELECT @@gtid_domain_id, @@gtid_binlog_pos").Scan(&domain, &binlog); err != nil {
		return fmt.Errorf("%s: %w", fromName, err)
	}
	pos, err := replication.ParsePosition(binlog)
	if err != nil {
		return fmt.Errorf("%s: %w", fromName, err)
	}
	own := pos.Only([]uint32{domain}).String()
	if own == "" {
		return nil
	}
	var res sql.NullInt64
	if err := to.QueryRowContext(ctx, "SELECT MASTER_GTID_WAIT(?, ?)", own, settleTimeout.Seconds()).Scan(&res); err != nil {
		return fmt.Errorf("%s: %w", toName, err)
	}
	if !res.Valid || res.Int64 != 0 {
		return fmt.Errorf("%s has not applied %s's writes (%s) after %v: is its replication from %s running? (hadrill status)", toName, fromName, own, settleTimeout, fromName)
	}
	return nil
}
