package workload

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/stats"
)

// Receipt is what a semi-sync acknowledgement promises, measured: n
// autocommit INSERTs on a semi-sync primary while its replica's applier
// (the SQL thread) is stopped, so receiving a transaction and committing
// it are told apart. A semi-sync that waited for the replica's commit
// would time out (the primary then counts the commits as async); one
// that waits for receipt acknowledges them with nothing applied.
type Receipt struct {
	Primary string `json:"primary"`
	Replica string `json:"replica"`
	Commits int    `json:"commits"`
	// AckedSemiSync are the commits the replica acknowledged
	// (Rpl_semi_sync_master_yes_tx's increase), Async those the primary
	// returned without its ack (Rpl_semi_sync_master_no_tx's).
	AckedSemiSync int64 `json:"acked_semi_sync"`
	Async         int64 `json:"async"`
	// OnReplicaAtAck are the rows readable on the replica once every
	// commit had returned (its applier stopped: none, unless the
	// acknowledgement waited for them).
	OnReplicaAtAck int     `json:"on_replica_at_ack"`
	AvgMs          float64 `json:"avg_ms"` // a commit's mean time
	P99Ms          float64 `json:"p99_ms"`
	// AppliedS is how long the replica took, its applier started again,
	// to show every row.
	AppliedS float64 `json:"applied_s"`
}

// AckedUnapplied is the share of the commits the replica acknowledged
// without having them committed when they returned: the semi-sync
// acknowledgements that promised receipt only.
func (r Receipt) AckedUnapplied() float64 {
	if r.Commits == 0 {
		return 0
	}
	unapplied := int64(r.Commits - r.OnReplicaAtAck)
	return float64(max(0, min(r.AckedSemiSync, unapplied))) / float64(r.Commits)
}

// SemiSyncReceipt runs the receipt test: the table made on primary and
// seen on replica, the replica's applier stopped, n timed autocommit
// INSERTs on primary, the rows on replica counted, the semi-sync
// counters read; then the applier started again (also on failure or
// interruption) and the rows waited for.
func SemiSyncReceipt(ctx context.Context, l Lab, primary, replica Endpoint, n int, command []string, log io.Writer) (_ *ProbeOutcome, err error) {
	run, err := NewRun(ctx, l, results.SemiSyncReceipt, command, map[string]any{"primary": primary.Name, "replica": replica.Name, "commits": n})
	if err != nil {
		return nil, err
	}
	defer abandonIfFailed(l, run, &err)
	r, err := receipt(ctx, l, primary, replica, n, log)
	if err != nil {
		return nil, err
	}
	return storeProbe(ctx, l, run, []Receipt{r})
}

func receipt(ctx context.Context, l Lab, primary, replica Endpoint, n int, log io.Writer) (Receipt, error) {
	r := Receipt{Primary: primary.Name, Replica: replica.Name, Commits: n}
	pn, ok1 := l.Plan().Node(primary.Name)
	rn, ok2 := l.Plan().Node(replica.Name)
	if !ok1 || !ok2 {
		return r, fmt.Errorf("the receipt test writes on a node and stops another's applier: %s and %s must be nodes of the lab", primary.Name, replica.Name)
	}
	w, rd, closeAll, err := pair(ctx, l, primary, replica)
	if err != nil {
		return r, err
	}
	defer closeAll()
	padm, radm := l.Admin(pn), l.Admin(rn)
	defer padm.Close()
	defer radm.Close()
	v, err := mariadb.Vars(ctx, padm, "rpl_semi_sync_master_enabled")
	if err != nil {
		return r, fmt.Errorf("%s: %w", primary.Name, err)
	}
	if v["rpl_semi_sync_master_enabled"] != "1" && v["rpl_semi_sync_master_enabled"] != "ON" {
		return r, fmt.Errorf("%s is not a semi-sync primary (rpl_semi_sync_master_enabled is %s): the receipt test needs one", primary.Name, v["rpl_semi_sync_master_enabled"])
	}
	// the table must be on the replica before its applier stops
	for end := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := rd.ExecContext(ctx, "SELECT 1 FROM app.hd_visibility LIMIT 0"); err == nil {
			break
		} else if ctx.Err() != nil || time.Now().After(end) {
			return r, fmt.Errorf("%s: the test's table did not reach it within 60 s: %w", replica.Name, err)
		}
	}
	counters := func() (yes, no int64, err error) {
		st, err := mariadb.Status(ctx, padm, "rpl_semi_sync_master_%_tx")
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %w", primary.Name, err)
		}
		yes, _ = strconv.ParseInt(st["rpl_semi_sync_master_yes_tx"], 10, 64)
		no, _ = strconv.ParseInt(st["rpl_semi_sync_master_no_tx"], 10, 64)
		return yes, no, nil
	}
	fmt.Fprintf(log, "%s: stopping the applier (the SQL thread; it still receives)\n", replica.Name)
	if err := mariadb.Exec(ctx, radm, "STOP SLAVE SQL_THREAD"); err != nil {
		return r, fmt.Errorf("%s: %w", replica.Name, err)
	}
	started := false
	start := func(ctx context.Context) error {
		if started {
			return nil
		}
		started = true
		return mariadb.Exec(ctx, radm, "START SLAVE SQL_THREAD")
	}
	defer func() { _ = start(context.WithoutCancel(ctx)) }()
	yes0, no0, err := counters()
	if err != nil {
		return r, err
	}
	batch := time.Now().UnixNano()
	var ms []float64
	for i := 0; i < n && ctx.Err() == nil; i++ {
		t := time.Now()
		if _, err := w.ExecContext(ctx, "INSERT INTO app.hd_visibility (batch, at) VALUES (?, NOW(6))", batch); err != nil {
			return r, fmt.Errorf("%s: %w", primary.Name, err)
		}
		ms = append(ms, float64(time.Since(t).Microseconds())/1000)
	}
	if err := rd.QueryRowContext(ctx, "SELECT COUNT(*) FROM app.hd_visibility WHERE batch = ?", batch).Scan(&r.OnReplicaAtAck); err != nil {
		return r, fmt.Errorf("%s: %w", replica.Name, err)
	}
	yes1, no1, err := counters()
	if err != nil {
		return r, err
	}
	r.AckedSemiSync, r.Async = yes1-yes0, no1-no0
	sorted := slices.Sorted(slices.Values(ms))
	var sum float64
	for _, x := range ms {
		sum += x
	}
	if len(ms) > 0 {
		r.AvgMs, r.P99Ms = sum/float64(len(ms)), stats.Percentile(sorted, 99)
	}
	if err := start(ctx); err != nil {
		return r, fmt.Errorf("%s: starting the applier again: %w", replica.Name, err)
	}
	t := time.Now()
	for seen := 0; seen < len(ms); time.Sleep(5 * time.Millisecond) {
		if err := rd.QueryRowContext(ctx, "SELECT COUNT(*) FROM app.hd_visibility WHERE batch = ?", batch).Scan(&seen); err != nil {
			return r, fmt.Errorf("%s: %w", replica.Name, err)
		}
		if time.Since(t) > 60*time.Second {
			return r, fmt.Errorf("%d of %d rows on %s 60 s after its applier started again", seen, len(ms), replica.Name)
		}
	}
	r.AppliedS = time.Since(t).Seconds()
	fmt.Fprintf(log, "%d commits on %s: %d acknowledged by %s, %d without it, %d rows there when they returned\n", len(ms), primary.Name, r.AckedSemiSync, replica.Name, r.Async, r.OnReplicaAtAck)
	return r, nil
}
