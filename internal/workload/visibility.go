package workload

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/stats"
)

// Visibility is how long after its commit was acknowledged on From a row
// became readable on To.
type Visibility struct {
	From     string  `json:"from"`
	To       string  `json:"to"`
	SyncWait int     `json:"wsrep_sync_wait"`
	Count    int     `json:"count"`
	P50      float64 `json:"p50"`
	P95      float64 `json:"p95"`
	P99      float64 `json:"p99"`
	Max      float64 `json:"max_ms"`
	Polls    float64 `json:"polls_avg"` // reads per sample until visible (1 = at the first read)
}

// Bulk is seed 003's test: N rows written one commit at a time on From;
// how long until all are visible on To.
type Bulk struct {
	From       string  `json:"from"`
	To         string  `json:"to"`
	Rows       int     `json:"rows"`
	WriteS     float64 `json:"write_s"`      // writing all rows on From
	VisibleS   float64 `json:"visible_s"`    // from the first write until all are on To
	AfterLastS float64 `json:"after_last_s"` // from the last acknowledgement until all are on To
}

// ProbeOutcome is what the probes print with --output json.
type ProbeOutcome struct {
	RunID       string `json:"run_id"`
	Interrupted bool   `json:"interrupted"`
	Results     any    `json:"results"`
}

// VisibilityLag writes count rows on from and polls to after each
// acknowledgement, once with wsrep_sync_wait=0 and once with causal reads.
func VisibilityLag(ctx context.Context, l Lab, from, to Endpoint, count int, command []string, log io.Writer) (_ *ProbeOutcome, err error) {
	run, err := NewRun(ctx, l, results.Visibility, command, map[string]any{"from": from.Name, "to": to.Name, "count": count})
	if err != nil {
		return nil, err
	}
	defer abandonIfFailed(l, run, &err)
	var out []Visibility
	for _, wait := range []int{0, 1} {
		fmt.Fprintf(log, "%d writes on %s, read back on %s with wsrep_sync_wait=%d\n", count, from.Name, to.Name, wait)
		v, err := visibility(ctx, l, from, to, count, wait)
		if err != nil && ctx.Err() == nil {
			return nil, err
		}
		if v.Count > 0 {
			out = append(out, v)
		}
	}
	return storeProbe(ctx, l, run, out)
}

func visibility(ctx context.Context, l Lab, from, to Endpoint, count, wait int) (Visibility, error) {
	v := Visibility{From: from.Name, To: to.Name, SyncWait: wait}
	w, r, closeAll, err := pair(ctx, l, from, to)
	if err != nil {
		return v, err
	}
	defer closeAll()
	if _, err := r.ExecContext(ctx, fmt.Sprintf("SET SESSION wsrep_sync_wait = %d", wait)); err != nil {
		return v, fmt.Errorf("%s: %w", to.Name, err)
	}
	var lags []float64
	polls := 0
	for i := 0; i < count && ctx.Err() == nil; i++ {
		var id int64
		res, err := w.ExecContext(ctx, "INSERT INTO app.hd_visibility (at) VALUES (NOW(6))")
		if err != nil {
			return v, fmt.Errorf("%s: %w", from.Name, err)
		}
		acked := time.Now()
		id, _ = res.LastInsertId()
		for n := 1; ctx.Err() == nil; n++ {
			var one int
			err := r.QueryRowContext(ctx, "SELECT 1 FROM app.hd_visibility WHERE id = ?", id).Scan(&one)
			if err == nil {
				lags, polls = append(lags, float64(time.Since(acked).Microseconds())/1000), polls+n
				break
			}
			if err != sql.ErrNoRows {
				return v, fmt.Errorf("%s: %w", to.Name, err)
			}
			if time.Since(acked) > 30*time.Second {
				return v, fmt.Errorf("row %d written on %s not visible on %s after 30 s", id, from.Name, to.Name)
			}
		}
	}
	if len(lags) == 0 {
		return v, nil
	}
	sort.Float64s(lags)
	v.Count, v.P50, v.P95, v.P99, v.Max = len(lags), stats.Percentile(lags, 50), stats.Percentile(lags, 95), stats.Percentile(lags, 99), lags[len(lags)-1]
	v.Polls = float64(polls) / float64(len(lags))
	return v, nil
}

// BulkReplication writes each row count on from, one commit per row, and
// times until the last row is readable on to.
func BulkReplication(ctx context.Context, l Lab, from, to Endpoint, rows []int, command []string, log io.Writer) (_ *ProbeOutcome, err error) {
	run, err := NewRun(ctx, l, results.BulkReplication, command, map[string]any{"from": from.Name, "to": to.Name, "rows": rows})
	if err != nil {
		return nil, err
	}
	defer abandonIfFailed(l, run, &err)
	var out []Bulk
	for _, n := range rows {
		fmt.Fprintf(log, "%d rows on %s, waiting for them on %s\n", n, from.Name, to.Name)
		b, err := bulk(ctx, l, from, to, n)
		if err != nil && ctx.Err() == nil {
			return nil, err
		}
		if ctx.Err() != nil {
			break
		}
		out = append(out, b)
	}
	return storeProbe(ctx, l, run, out)
}

func bulk(ctx context.Context, l Lab, from, to Endpoint, n int) (Bulk, error) {
	b := Bulk{From: from.Name, To: to.Name, Rows: n}
	w, r, closeAll, err := pair(ctx, l, from, to)
	if err != nil {
		return b, err
	}
	defer closeAll()
	batch := time.Now().UnixNano()
	t0 := time.Now()
	for i := 0; i < n && ctx.Err() == nil; i++ {
		if _, err := w.ExecContext(ctx, "INSERT INTO app.hd_visibility (batch, at) VALUES (?, NOW(6))", batch); err != nil {
			return b, fmt.Errorf("%s: %w", from.Name, err)
		}
	}
	last := time.Now()
	for ctx.Err() == nil {
		var seen int
		if err := r.QueryRowContext(ctx, "SELECT COUNT(*) FROM app.hd_visibility WHERE batch = ?", batch).Scan(&seen); err != nil {
			return b, fmt.Errorf("%s: %w", to.Name, err)
		}
		if seen >= n {
			break
		}
		if time.Since(last) > 60*time.Second {
			return b, fmt.Errorf("%d of %d rows visible on %s 60 s after the last write", seen, n, to.Name)
		}
		time.Sleep(time.Millisecond)
	}
	done := time.Now()
	b.WriteS, b.VisibleS, b.AfterLastS = last.Sub(t0).Seconds(), done.Sub(t0).Seconds(), done.Sub(last).Seconds()
	return b, nil
}

// pair opens one connection to each side and makes sure the table exists.
func pair(ctx context.Context, l Lab, from, to Endpoint) (*sql.Conn, *sql.Conn, func(), error) {
	wdb, _ := from.Open(l)
	rdb, _ := to.Open(l)
	closeAll := func() { wdb.Close(); rdb.Close() }
	w, err := wdb.Conn(ctx)
	if err != nil {
		closeAll()
		return nil, nil, nil, fmt.Errorf("%s: %w", from.Name, err)
	}
	r, err := rdb.Conn(ctx)
	if err != nil {
		w.Close()
		closeAll()
		return nil, nil, nil, fmt.Errorf("%s: %w", to.Name, err)
	}
	all := func() { w.Close(); r.Close(); closeAll() }
	if _, err := w.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS app.hd_visibility (id BIGINT AUTO_INCREMENT PRIMARY KEY, batch BIGINT, at TIMESTAMP(6), KEY (batch)) ENGINE=InnoDB"); err != nil {
		all()
		return nil, nil, nil, fmt.Errorf("%s: %w", from.Name, err)
	}
	return w, r, all, nil
}

func storeProbe(ctx context.Context, l Lab, run *results.Run, res any) (*ProbeOutcome, error) {
	err := Finish(l, run, ctx.Err() != nil, res)
	return &ProbeOutcome{RunID: run.ID, Interrupted: run.Interrupted, Results: res}, err
}
