package drill

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/lb"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/spec"
	"github.com/hadrill/hadrill/internal/workload"
)

// auditWait is how long the audit waits for a lagging node to catch up
// before counting an acknowledged write as lost there.
const auditWait = 10 * time.Second

func (d *drill) judge(ctx context.Context, ops []Op, start, end time.Time) {
	r := d.res
	for _, o := range ops {
		switch {
		case o.Write && o.OK():
			r.Writes++
			r.WritesAcked++
		case o.Write:
			r.Writes++
			r.WritesFailed++
		case o.OK():
			r.Reads++
		default:
			r.Reads++
			r.ReadsFailed++
		}
	}
	r.Codes = Codes(ops, start)
	r.Phases = Phases(ops, start, d.faultAt, d.wholeAt, end)
	r.FaultAt = d.faultAt
	if d.lb != nil && !d.faultAt.IsZero() {
		b := lb.Balancer{LB: d.lb, Plan: d.l.Plan(), Hosts: d.l.Host}
		if ev := b.Events(ctx, d.faultAt.Add(-time.Second), end); len(ev) > 0 {
			r.Balancer = &BalancerLog{Name: d.lb.Name, Events: ev}
		}
	}
	if !d.faultAt.IsZero() {
		r.Gap = ClientGap(ops, d.faultAt)
		if t := WritesBack(ops, d.faultAt, r.Gap); !t.IsZero() {
			r.WritesBackS = secs(t.Sub(d.faultAt))
		} else if t := firstAckAfter(ops, d.faultAt); !t.IsZero() {
			r.WritesBackS = secs(t.Sub(d.faultAt))
		}
		if d.sc.reformed != nil {
			d.sc.reformed(d, r)
		}
		if !d.wholeAt.IsZero() {
			r.SyncedS = secs(d.wholeAt.Sub(d.faultAt))
		}
	}
	// a fenced node is out of service: audited and compared are the others
	var compared []*plan.Node
	for _, n := range d.nodes {
		if why := d.l.Fenced()[n.Name]; why != "" && d.cluster.Kind == spec.KindPrimary {
			if r.Fenced == nil {
				r.Fenced = map[string]string{}
			}
			r.Fenced[n.Name] = why
			continue
		}
		compared = append(compared, n)
	}
	acked := Acked(ops)
	r.Audit = AuditNodes(ctx, d.l, compared, r.RunID, acked, auditWait)
	for _, name := range slices.Sorted(maps.Keys(r.Fenced)) {
		r.Audit = append(r.Audit, NodeAudit{Node: name, State: NodeFenced, Reason: r.Fenced[name]})
	}
	r.Lost = lostOf(r.Audit)
	r.LostCount = lostWrites(r.Lost)
	sums := settledChecksums(func() Checksums { return ChecksumVerdict(checksums(ctx, d.l, compared)) },
		func() { sleep(ctx, checksumSettle) }, d.logf)
	r.Checksums, r.ChecksumsUnread, r.ChecksumsAgree = sums.Read, sums.Unread, sums.Agree
	other := append([]string(nil), d.problems...)
	if !d.faultAt.IsZero() && !r.Interrupted {
		switch {
		case r.WritesBackS == nil:
			other = append(other, fmt.Sprintf("writes never resumed after the fault: none acknowledged in the %.1f s from %s to the end of the traffic",
				r.Gap.Seconds, r.Gap.From.Sub(start).Round(time.Millisecond)))
		case r.Gap.Open:
			other = append(other, fmt.Sprintf("writes did not resume within the drill: they came back %.2f s after the fault, then none was acknowledged in the last %.1f s of the traffic",
				*r.WritesBackS, r.Gap.Seconds))
		}
	}
	r.Verdict = Decide(r.Audit, sums.Differ, len(sums.Unread), other, r.Interrupted)
	r.Problems = append(other, auditProblems(r.Audit)...)
	if r.LostCount > 0 && len(r.SemiSyncFallbacks) > 0 {
		r.Problems = append(r.Problems, "semi-sync fell back to async ("+strings.Join(r.SemiSyncFallbacks, "; ")+
			"): commits acknowledged then were on the primary alone, and a failover gives them up")
	}
	if len(sums.Differ) > 0 {
		r.Problems = append(r.Problems, fmt.Sprintf("nodes disagree on tables %s (CHECKSUM TABLE)", strings.Join(sums.Differ, ", ")))
	}
	if len(sums.Unread) > 0 {
		r.Problems = append(r.Problems, "checksums not read on "+joinSorted(sums.Unread))
	}
	r.Passed = r.Verdict == VerdictPassed
}

func firstAckAfter(ops []Op, at time.Time) time.Time {
	var first time.Time
	for _, o := range ops {
		if o.Write && o.OK() && !o.Sent.Before(at) && (first.IsZero() || o.Done.Before(first)) {
			first = o.Done
		}
	}
	return first
}

func secs(d time.Duration) *float64 {
	v := float64(d.Milliseconds()) / 1000
	return &v
}

func ids(list []int64) string {
	var s []string
	for i, id := range list {
		if i == 10 {
			s = append(s, fmt.Sprintf("… %d more", len(list)-10))
			break
		}
		s = append(s, strconv.FormatInt(id, 10))
	}
	return strings.Join(s, ", ")
}

// AuditNodes reads the acknowledged ids of run back on each node directly
// and judges each node (verified, missing, unverified). Nodes that are not
// yet verified are read again until wait has passed: a lagging node may
// catch up, a restarting one may come back.
func AuditNodes(ctx context.Context, l Lab, nodes []*plan.Node, run string, acked []int64, wait time.Duration) []NodeAudit {
	start := time.Now()
	for end := start.Add(wait); ; time.Sleep(250 * time.Millisecond) {
		reads := map[string]Read{}
		for _, n := range nodes {
			reads[n.Name] = idsOn(ctx, l, n, run)
		}
		audit := AuditOf(acked, reads)
		if settled(audit) || ctx.Err() != nil {
			return audit
		}
		if time.Now().After(end) {
			// a replica of a primary cluster that lacks writes while its
			// position is behind the most advanced node's is late, not
			// shown lost: waited for up to lateWait (one whose connection
			// the fault left dead may reconnect only some 20 s after the
			// heal). A Galera member applies what it certified, and its
			// GTID positions may differ in domains of its own: not read so.
			if len(nodes) == 0 || nodes[0].Kind != spec.KindPrimary {
				return audit
			}
			pos := positions(ctx, l, nodes)
			late := Late(audit, pos)
			if len(late) == 0 || ctx.Err() != nil {
				return audit
			}
			if time.Since(start) > lateWait {
				return Lagging(audit, late, pos, lateWait)
			}
		}
	}
}

// lateWait is how long the audit waits for nodes whose replication is
// behind.
const lateWait = 90 * time.Second

// positions are the nodes' GTID positions (@@gtid_current_pos), "" for a
// node that could not be read.
func positions(ctx context.Context, l Lab, nodes []*plan.Node) map[string]string {
	out := map[string]string{}
	for _, n := range nodes {
		db := l.Admin(n)
		qctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		var pos string
		if err := db.QueryRowContext(qctx, "SELECT @@gtid_current_pos").Scan(&pos); err == nil {
			out[n.Name] = pos
		}
		cancel()
		db.Close()
	}
	return out
}

func idsOn(ctx context.Context, l Lab, n *plan.Node, run string) Read {
	db := l.Admin(n)
	defer db.Close()
	qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	rows, err := db.QueryContext(qctx, "SELECT id FROM app.hd_drill WHERE run = ?", run)
	if gone := Gone(err); gone != "" {
		return Read{IDs: map[int64]bool{}, Gone: gone}
	}
	if err != nil {
		return Read{Err: err}
	}
	defer rows.Close()
	have := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return Read{Err: err}
		}
		have[id] = true
	}
	if err := rows.Err(); err != nil {
		return Read{Err: err}
	}
	return Read{IDs: have}
}

// checksumSettle is how long nodes whose checksums differ are given before
// they are read again, and checksumReads how many readings a drill takes
// at most: the nodes are read one after another, and a commit still in
// flight when the writers stopped (its client gave up on it, the server had
// not) may land between two of them. A difference that stays is the
// finding.
const (
	checksumSettle = time.Second
	checksumReads  = 3
)

// settledChecksums reads the nodes' checksums (read) until they agree or
// checksumReads readings were taken, wait between two, saying (logf) each
// reading that differed.
func settledChecksums(read func() Checksums, wait func(), logf func(string, ...any)) Checksums {
	sums := read()
	for n := 1; len(sums.Differ) > 0 && n < checksumReads; n++ {
		logf("nodes disagree on tables %s at reading %d of at most %d: read again in %v (a commit in flight when the writers stopped may still land)",
			strings.Join(sums.Differ, ", "), n, checksumReads, checksumSettle)
		wait()
		sums = read()
	}
	return sums
}

// checksums runs CHECKSUM TABLE on every table of the app schema on each
// node; a node where any of it fails is unread, with the reason.
func checksums(ctx context.Context, l Lab, nodes []*plan.Node) map[string]Sums {
	out := map[string]Sums{}
	for _, n := range nodes {
		out[n.Name] = checksumsOn(ctx, l, n)
	}
	return out
}

func checksumsOn(ctx context.Context, l Lab, n *plan.Node) Sums {
	pool := l.Admin(n)
	defer pool.Close()
	qctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	db, err := pool.Conn(qctx)
	if err != nil {
		return Sums{Err: err}
	}
	defer db.Close()
	// a Galera member Synced may still be applying the last write sets:
	// its first read waits until it applied what the cluster committed
	// before it (a server without Galera refuses the variable: its own
	// data is all there is)
	_, _ = db.ExecContext(qctx, "SET SESSION wsrep_sync_wait = 1")
	rows, err := db.QueryContext(qctx, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'app' ORDER BY 1")
	if err != nil {
		return Sums{Err: err}
	}
	var tables []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return Sums{Err: err}
		}
		tables = append(tables, t)
	}
	rows.Close()
	sums := map[string]string{}
	for _, t := range tables {
		var name string
		var sum *string
		// the causal read first (wsrep_sync_wait covers reads, not CHECKSUM TABLE)
		if rows, err := db.QueryContext(qctx, "SELECT 1 FROM app.`"+t+"` LIMIT 1"); err == nil {
			rows.Close()
		}
		if err := db.QueryRowContext(qctx, "CHECKSUM TABLE app.`"+t+"`").Scan(&name, &sum); err != nil {
			return Sums{Err: fmt.Errorf("CHECKSUM TABLE app.%s: %w", t, err)}
		}
		if sum == nil {
			return Sums{Err: fmt.Errorf("CHECKSUM TABLE app.%s: no checksum (table missing or unreadable)", t)}
		}
		sums["app."+t] = *sum
	}
	return Sums{Tables: sums}
}

// store saves the run: results, the timeline (per 0.25 s, as rates per
// second) and every operation (for `drill audit`).
func (d *drill) store(run *results.Run, ops []Op, end time.Time) error {
	if err := workload.Finish(d.l, run, d.res.Interrupted, d.res); err != nil {
		return err
	}
	const w = 250 * time.Millisecond
	var rows [][]string
	for _, b := range Timeline(ops, run.Started, w, end) {
		rows = append(rows, []string{f(b.T), f(float64(b.WritesOK) * 4), f(float64(b.WritesErr) * 4), f(float64(b.ReadsOK) * 4), f(float64(b.ReadsErr) * 4), codes(b.Codes)})
	}
	if err := results.WriteCSV(d.l.Home(), run.ID, TimelineFile, TimelineHeader, rows); err != nil {
		return err
	}
	return writeOps(d.l.Home(), run.ID, ops)
}

// writeOps writes a drill's operations (ops.csv: op, id, sent_ns, done_ns,
// code), which its audit reads.
func writeOps(home, id string, ops []Op) error {
	var orows [][]string
	for _, o := range ops {
		kind := "read"
		if o.Write {
			kind = "write"
		}
		done := ""
		if !o.Done.IsZero() {
			done = strconv.FormatInt(o.Done.UnixNano(), 10)
		}
		orows = append(orows, []string{kind, strconv.FormatInt(o.ID, 10), strconv.FormatInt(o.Sent.UnixNano(), 10), done, o.Code})
	}
	return results.WriteCSV(home, id, OpsFile, []string{"op", "id", "sent_ns", "done_ns", "code"}, orows)
}

// Unfinished is what a drill's run says until the drill judges what it
// saw: a drill whose process is killed leaves it, with the operations
// acknowledged until then (written every half second) for `drill audit`.
const Unfinished = "the drill did not finish: its process ended before it judged what it saw (killed?); " +
	"what it acknowledged until then is kept (hadrill drill audit RUN_ID), and what it broke may still be broken (hadrill status; hadrill fault heal)"

// provisional stores the run as unfinished, and keeps its operations
// written as they complete, until stop is called.
func (d *drill) provisional(run *results.Run) (stop func()) {
	res := *d.res
	res.Interrupted, res.Verdict, res.Problems = true, VerdictInterrupted, []string{Unfinished}
	r := *run
	r.Interrupted = true
	r.Results, _ = json.Marshal(res)
	if err := results.Save(d.l.Home(), &r); err != nil {
		return func() {}
	}
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-done:
				return
			case <-time.After(500 * time.Millisecond):
				_ = writeOps(d.l.Home(), run.ID, d.t.snapshot())
			}
		}
	}()
	return func() { close(done); <-stopped }
}

// Files of a drill run.
const (
	TimelineFile = "timeline.csv"
	OpsFile      = "ops.csv"
	// LogFile: what the drill and its lab said as it ran (kept by a study,
	// whose drills print nothing).
	LogFile = "drill.log"
)

// TimelineHeader are timeline.csv's columns.
var TimelineHeader = []string{"t_s", "writes_ok_per_s", "write_errors_per_s", "reads_ok_per_s", "read_errors_per_s", "error_codes"}

func f(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func codes(m map[string]int) string {
	var s []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		s = append(s, fmt.Sprintf("%s:%d", k, m[k]))
	}
	return strings.Join(s, " ")
}
