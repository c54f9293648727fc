package workload

import (
	"context"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/stats"
)

// Latency is the commit latency measured on one target.
type Latency struct {
	Target string  `json:"target"`
	Count  int     `json:"count"`
	Errors int     `json:"errors"`
	P50    float64 `json:"p50"`
	P95    float64 `json:"p95"`
	P99    float64 `json:"p99"`
	Avg    float64 `json:"avg_ms"`
	Max    float64 `json:"max_ms"`
}

// CommitOutcome is what `hadrill bench commit-latency --output json` prints.
type CommitOutcome struct {
	RunID       string    `json:"run_id"`
	Interrupted bool      `json:"interrupted"`
	Results     []Latency `json:"results"`
}

// CommitLatency times count single-row autocommit INSERTs on one
// connection to each target in turn (from the client host): the cost of a
// commit, replication included, as an application sees it.
func CommitLatency(ctx context.Context, l Lab, targets []Endpoint, count int, command []string, log io.Writer) (_ *CommitOutcome, err error) {
	run, err := NewRun(ctx, l, results.CommitLatency, command, map[string]any{"count": count})
	if err != nil {
		return nil, err
	}
	defer abandonIfFailed(l, run, &err)
	out := &CommitOutcome{RunID: run.ID}
	for i, e := range targets {
		fmt.Fprintf(log, "[%d/%d] %d autocommit INSERTs on %s\n", i+1, len(targets), count, e.Name)
		lat, err := commitsOn(ctx, l, e, count)
		if err != nil && ctx.Err() == nil {
			return nil, err
		}
		if lat.Count > 0 {
			out.Results = append(out.Results, lat)
		}
		if ctx.Err() != nil {
			break
		}
	}
	out.Interrupted = ctx.Err() != nil
	return out, Finish(l, run, out.Interrupted, out.Results)
}

func commitsOn(ctx context.Context, l Lab, e Endpoint, count int) (Latency, error) {
	res := Latency{Target: e.Name}
	db, err := e.Open(l)
	if err != nil {
		return res, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		return res, fmt.Errorf("%s: %w", e.Name, err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS app.hd_commit (id BIGINT AUTO_INCREMENT PRIMARY KEY, target VARCHAR(64), at TIMESTAMP(6)) ENGINE=InnoDB"); err != nil {
		return res, fmt.Errorf("%s: %w", e.Name, err)
	}
	var ms []float64
	for i := 0; i < count && ctx.Err() == nil; i++ {
		t0 := time.Now()
		_, err := conn.ExecContext(ctx, "INSERT INTO app.hd_commit (target, at) VALUES (?, NOW(6))", e.Name)
		d := time.Since(t0)
		if err != nil {
			res.Errors++
			continue
		}
		ms = append(ms, float64(d.Microseconds())/1000)
	}
	res.Count = len(ms)
	if len(ms) == 0 {
		return res, nil
	}
	sort.Float64s(ms)
	var sum float64
	for _, v := range ms {
		sum += v
	}
	res.P50, res.P95, res.P99 = stats.Percentile(ms, 50), stats.Percentile(ms, 95), stats.Percentile(ms, 99)
	res.Avg, res.Max = sum/float64(len(ms)), ms[len(ms)-1]
	return res, nil
}

// rank is the p-th percentile of sorted values (nearest rank).
