// Package agent is the per-node health agent: an HTTP endpoint a load
// balancer asks whether the node may take traffic (Percona clustercheck's
// contract), plus liveness and Prometheus metrics.
package agent

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/hadrill/hadrill/internal/galera"
	"github.com/hadrill/hadrill/internal/replication"
	"github.com/hadrill/hadrill/internal/supervise"
)

// Options configure an agent.
type Options struct {
	Node         string
	Listen       string
	Socket       string // the server's unix socket
	User         string // health-check user (no privileges needed)
	PasswordFile string // 0600 file holding its password
	DrainFile    string // exists => drained
	DeposedFile  string // exists => another node was made the primary: no writes (/primary)
	PidFile      string // the server's pidfile, for liveness
	// ServerMarker ends an argument of the server's command line: a pid
	// the pidfile names is the server's only when it does (a pid reused
	// by another process is not the server). Empty: any live pid.
	ServerMarker string
	Timeout      time.Duration
	Cache        time.Duration
	// BusyGrace is how long a server that runs but does not answer
	// within Timeout (busy, not paused or gone) keeps the verdict it last
	// answered (0: none): a load balancer then keeps a node slowed by its
	// load instead of shutting its sessions, and still drops a dead or
	// paused one at once, a silent one after the grace.
	BusyGrace           time.Duration
	AvailableWhenDonor  bool
	ReadOnlyUnavailable bool
}

// BusyGrace is the agent's default Options.BusyGrace: under a heavy
// benchmark a 1-CPU node's server answered the probe's status query in
// 2 to 200 ms, and now and then not within 300 ms; a node that does not
// answer for 2 s while it runs is taken for hung.
const BusyGrace = 2 * time.Second

// Result is one probe's outcome.
type Result struct {
	galera.Verdict
	Node     string          `json:"node"`
	Snapshot galera.Snapshot `json:"-"`
	Reached  bool            `json:"-"` // the server answered
	At       time.Time       `json:"checked_at"`
	Took     time.Duration   `json:"-"`
	ProbeMS  float64         `json:"probe_ms"`
}

// Prober reads the node and judges it, caching the result for o.Cache and
// letting concurrent callers share one probe.
type Prober struct {
	o    Options
	mu   sync.Mutex
	last *Result
	// good is the last verdict the server answered, goodPid the process
	// that answered it; goodRepl the last replication snapshot, at goodAt,
	// from goodReplPid. A busy server keeps them; any other failure, or
	// another process, forgets them.
	good        *Result
	goodPid     int
	goodRepl    *replication.Snapshot
	goodAt      time.Time
	goodReplPid int
	db          *sql.DB
	dbpw        string
	hold        galera.Hold // since when the node keeps the cluster paused
}

// NewProber returns a prober; it never fails: problems show as 503 reasons.
func NewProber(o Options) *Prober { return &Prober{o: o} }

// Check returns the cached verdict, or probes the node.
func (p *Prober) Check(ctx context.Context) Result {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last != nil && time.Since(p.last.At) < p.o.Cache {
		return *p.last
	}
	r := p.probe(ctx)
	p.last = &r
	return r
}

// A result is dated when it became known, so callers that queued behind a
// slow probe (a hung server) reuse its answer instead of waiting out
// another timeout.
func (p *Prober) probe(ctx context.Context) Result {
	start := time.Now()
	r := Result{Node: p.o.Node}
	snap, err := p.read(ctx)
	r.At = time.Now()
	r.Took = r.At.Sub(start)
	r.ProbeMS = float64(r.Took.Microseconds()) / 1000
	drained := p.drained()
	if err != nil {
		r.Verdict = galera.Unreachable(err)
		if drained {
			r.Verdict = galera.Judge(galera.Snapshot{}, galera.HealthOptions{Drained: true})
		} else if v, ok := busy(err, p.same(p.goodPid), p.good, r.At, p.o.BusyGrace); ok {
			r.Verdict = v
		} else {
			p.good = nil
		}
		return r
	}
	defer func(pid int) { p.good, p.goodPid = &r, pid }(p.runningPid())
	r.Reached, r.Snapshot = true, snap
	p.hold.Observe(galera.FlowOf(snap.Status), r.At)
	r.Verdict = galera.Judge(snap, galera.HealthOptions{AvailableWhenDonor: p.o.AvailableWhenDonor,
		ReadOnlyUnavailable: p.o.ReadOnlyUnavailable, Drained: drained, Held: p.hold.For(r.At)})
	return r
}

// read takes one snapshot within the timeout.
func (p *Prober) read(ctx context.Context) (galera.Snapshot, error) {
	db, err := p.conn()
	if err != nil {
		return galera.Snapshot{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, p.o.Timeout)
	defer cancel()
	snap := galera.Snapshot{Status: map[string]string{}, Variables: map[string]string{}}
	if err := query(ctx, db, "SELECT LOWER(VARIABLE_NAME), VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME LIKE 'WSREP%'", snap.Status); err != nil {
		return snap, timeoutReason(ctx, err, p.o.Timeout)
	}
	q := "SELECT LOWER(VARIABLE_NAME), VARIABLE_VALUE FROM information_schema.GLOBAL_VARIABLES WHERE VARIABLE_NAME IN ('" +
		strings.ToUpper(strings.Join(galera.SnapshotVariables, "','")) + "')"
	if err := query(ctx, db, q, snap.Variables); err != nil {
		return snap, timeoutReason(ctx, err, p.o.Timeout)
	}
	return snap, nil
}

func timeoutReason(ctx context.Context, err error, d time.Duration) error {
	if ctx.Err() != nil {
		return &slowError{d}
	}
	return err
}

// slowError is a server that did not answer within the probe's timeout.
type slowError struct{ d time.Duration }

func (e *slowError) Error() string {
	return fmt.Sprintf("no answer within %v (server hung or overloaded)", e.d)
}

// busy is the verdict of a probe the server did not answer in time while
// the process that last answered runs still (same: not paused, not gone,
// not restarted): the verdict it last answered, if that was at most grace
// ago and admitted it, said as busy. A probe that failed otherwise
// (refused, no socket), a paused, missing or other process, an old or
// unfavourable last answer: no (ok false).
func busy(err error, same bool, good *Result, now time.Time, grace time.Duration) (galera.Verdict, bool) {
	if good == nil || !good.OK || !keeps(err, same, good.At, now, grace) {
		return galera.Verdict{}, false
	}
	v := good.Verdict
	v.Reason += fmt.Sprintf(" (busy: %v; it last answered %.1f s ago, and a running server keeps that answer for %v)", err, now.Sub(good.At).Seconds(), grace)
	return v, true
}

// keeps says whether a server that failed a probe with err keeps what it
// answered at then: it did not answer in time (or the timeout broke the
// connection), the process that answered runs still (same), and then is
// at most grace ago.
func keeps(err error, same bool, then, now time.Time, grace time.Duration) bool {
	var slow *slowError
	timedOut := errors.As(err, &slow) || errors.Is(err, mysql.ErrInvalidConn) || errors.Is(err, driver.ErrBadConn)
	return timedOut && same && !then.IsZero() && now.Sub(then) <= grace
}

// runningPid is the server's process when it runs: it exists, is the
// server, and is not stopped (a paused fault's SIGSTOP); 0 otherwise, and
// without a pidfile to read.
func (p *Prober) runningPid() int {
	pid := serverPid(p.o.PidFile, p.o.ServerMarker)
	if pid <= 0 || supervise.Paused(pid) {
		return 0
	}
	return pid
}

// same says whether the process that answered (pid) is the server that
// runs now.
func (p *Prober) same(pid int) bool { return pid != 0 && p.runningPid() == pid }

func query(ctx context.Context, db *sql.DB, q string, into map[string]string) error {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return err
		}
		into[k] = v
	}
	return rows.Err()
}

// conn (re)opens the connection pool when the password file changes.
func (p *Prober) conn() (*sql.DB, error) {
	b, err := os.ReadFile(p.o.PasswordFile)
	if err != nil {
		return nil, fmt.Errorf("credentials file unreadable: %v", err)
	}
	pw := strings.TrimSpace(string(b))
	if p.db != nil && pw == p.dbpw {
		return p.db, nil
	}
	if p.db != nil {
		p.db.Close()
	}
	c := mysql.NewConfig()
	c.User, c.Passwd, c.Net, c.Addr = p.o.User, pw, "unix", p.o.Socket
	c.Timeout, c.ReadTimeout, c.WriteTimeout = p.o.Timeout, p.o.Timeout, p.o.Timeout
	conn, err := mysql.NewConnector(c)
	if err != nil {
		return nil, err
	}
	p.db, p.dbpw = sql.OpenDB(conn), pw
	p.db.SetMaxOpenConns(1)
	p.db.SetMaxIdleConns(1)
	return p.db, nil
}

// deposed reports whether the keeper made another node of the node's
// primary cluster the primary (its deposed file exists): /primary answers
// 503 then, even while the server is still writable.
func (p *Prober) deposed() bool { return marked(p.o.DeposedFile) }

// drained reports whether the operator drained the node (its drain file
// exists): every endpoint answers 503 then, whatever the node's role.
func (p *Prober) drained() bool { return marked(p.o.DrainFile) }

// marked reports whether a switch kept as a file (host.Mark) is on.
func marked(path string) bool {
	if path == "" {
		return false
	}
	_, err := os.Stat(path)
	return err == nil
}
