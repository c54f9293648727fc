// Package server is a database server seen from outside: its daemon (start,
// wait until it serves, stop), its pid, its administrative connection and
// the state it reports (a closed vocabulary, read by one probe for every
// role).
package server

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
	"github.com/hadrill/hadrill/internal/supervise"
)

// Deadlines. Galera needs evs/pc timeouts (5-30 s) to give up on peers, and
// a state transfer of a small lab takes seconds; these leave room for both.
const (
	ReadyDeadline = 90 * time.Second
	StopGrace     = 60 * time.Second
)

// State is what a server is doing, as hadrill reports it: Galera's own
// wsrep_local_state_comment for a cluster member that answered (Synced,
// Donor/Desynced, Joining, Joined, Initialized), else one of these.
type State string

const (
	Down         State = "down"         // no server process
	Paused       State = "paused"       // stopped by a fault (SIGSTOP)
	Unresponsive State = "unresponsive" // runs, but did not answer in time
	Running      State = "running"      // a server outside Galera that answered
	Synced       State = "Synced"       // a Galera member serving
)

// Answering reports whether the server answered the probe.
func (s State) Answering() bool { return s != Down && s != Paused && s != Unresponsive }

// Wrap turns argv into the command that runs it on a host.
type Wrap func(host string, argv []string) []string

// Daemon is the node's mariadbd under supervision.
func Daemon(n *plan.Node, wrap Wrap, extra ...string) supervise.Daemon {
	argv := append([]string{"mariadbd", "--defaults-file=" + n.ConfigFile}, extra...)
	d := n.Server
	return supervise.Daemon{Name: n.Name + " mariadbd", Argv: wrap(n.Host, argv), Dir: d.Dir, LogFile: d.LogFile,
		PidFile: d.PidFile, Marker: d.Marker}
}

// Pid is the node's server pid while it runs, else 0.
func Pid(n *plan.Node) int {
	return supervise.Daemon{PidFile: n.Server.PidFile, Marker: n.Server.Marker}.Pid()
}

// Alive reports whether the node's server runs.
func Alive(n *plan.Node) bool { return Pid(n) != 0 }

// Admin opens a root-equivalent pool to a node over its unix socket as the
// OS user (unix_socket authentication); close it.
func Admin(n *plan.Node, user string) *sql.DB { return mariadb.Admin(n.Socket, user) }

// Status is what a node says of itself: its state and, for a Galera member
// that answered, its wsrep_% status variables.
type Status struct {
	State  State
	Status map[string]string
}

// Primary reports whether a Galera node is in a primary component.
func (s Status) Primary() bool {
	return strings.EqualFold(s.Status["wsrep_cluster_status"], "Primary")
}

// Probe reads a node's state over db (its admin pool) within timeout.
func Probe(ctx context.Context, db *sql.DB, n *plan.Node, timeout time.Duration) Status {
	pid := Pid(n)
	switch {
	case pid == 0:
		return Status{State: Down}
	case supervise.Paused(pid):
		return Status{State: Paused}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if n.Kind == spec.KindPrimary {
		return probeReplication(ctx, db)
	}
	if n.Kind != spec.KindGalera {
		if err := db.PingContext(ctx); err != nil {
			return Status{State: Unresponsive}
		}
		return Status{State: Running}
	}
	st, err := mariadb.Status(ctx, db, "wsrep_%")
	if err != nil {
		return Status{State: Unresponsive}
	}
	return Status{State: State(st["wsrep_local_state_comment"]), Status: st}
}

// Keys of a primary cluster member's Status: read_only (1 or 0), and its
// own replication connection's source address and threads ("" without one).
const (
	KeyReadOnly = "read_only"
	KeySource   = "source_host"
	KeyIO       = "io_thread"
	KeySQL      = "sql_thread"
)

// probeReplication reads a primary cluster member's role: read_only and
// its replication connection.
func probeReplication(ctx context.Context, db *sql.DB) Status {
	var ro string
	if err := db.QueryRowContext(ctx, "SELECT @@read_only").Scan(&ro); err != nil {
		return Status{State: Unresponsive}
	}
	st := Status{State: Running, Status: map[string]string{KeyReadOnly: ro}}
	chans, err := mariadb.Replicas(ctx, db)
	if err != nil {
		return Status{State: Unresponsive}
	}
	for _, c := range chans {
		if c["connection_name"] == "" {
			st.Status[KeySource], st.Status[KeyIO], st.Status[KeySQL] = c["master_host"], c["slave_io_running"], c["slave_sql_running"]
		}
	}
	return st
}

// Writable reports whether a primary cluster member takes writes: not
// read-only and not replicating.
func (s Status) Writable() bool {
	return s.State == Running && s.Status[KeyReadOnly] == "0" && s.Status[KeySource] == ""
}

// Replicating reports whether a primary cluster member follows source
// (an address) with both threads running.
func (s Status) Replicating(source string) bool {
	return s.State == Running && s.Status[KeySource] == source && s.Status[KeyIO] == "Yes" && s.Status[KeySQL] == "Yes"
}

// Exec runs statements on a node through a new admin pool from admin; the
// error names the node.
func Exec(ctx context.Context, admin func(*plan.Node) *sql.DB, n *plan.Node, stmts ...string) error {
	db := admin(n)
	defer db.Close()
	if err := mariadb.Exec(ctx, db, stmts...); err != nil {
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	return nil
}

// Conns keeps one administrative pool per node for a series of queries
// (the keeper's loop, a sampler's); safe for concurrent use.
type Conns struct {
	open func(*plan.Node) *sql.DB
	mu   sync.Mutex
	m    map[string]*sql.DB
}

// NewConns starts an empty set of pools opened with open; Close them.
func NewConns(open func(*plan.Node) *sql.DB) *Conns {
	return &Conns{open: open, m: map[string]*sql.DB{}}
}

// DB is the node's pool, opened on first use.
func (c *Conns) DB(n *plan.Node) *sql.DB {
	c.mu.Lock()
	defer c.mu.Unlock()
	if db := c.m[n.Name]; db != nil {
		return db
	}
	db := c.open(n)
	c.m[n.Name] = db
	return db
}

// Close closes every pool.
func (c *Conns) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, db := range c.m {
		db.Close()
	}
	c.m = map[string]*sql.DB{}
}

// Start launches one node's mariadbd (extra: more server options, e.g.
// --wsrep-new-cluster), after its previous process, killed a moment ago
// perhaps, has gone and released its ports.
func Start(n *plan.Node, wrap Wrap, extra ...string) (*supervise.Proc, error) {
	if old := supervise.ReadPid(n.Server.PidFile); supervise.Present(old) && !supervise.WaitGone(old, 30*time.Second) {
		return nil, fmt.Errorf("%s: the previous server (pid %d) has not exited", n.Name, old)
	}
	if err := os.WriteFile(n.ConfigFile, []byte(n.Config), 0o644); err != nil {
		return nil, err
	}
	return Daemon(n, wrap, extra...).Start()
}

// WaitReady waits until the node serves: Synced and ready for Galera
// members, answering queries otherwise. When the server exits instead, the
// error carries its log's own error lines.
func WaitReady(ctx context.Context, n *plan.Node, p *supervise.Proc, user string) error {
	db := Admin(n, user)
	defer db.Close()
	err := p.WaitReady(ctx, ReadyDeadline, 50*time.Millisecond, func(ctx context.Context) error {
		qctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		if n.Kind != spec.KindGalera {
			return db.PingContext(qctx)
		}
		st, err := mariadb.Status(qctx, db, "wsrep_%")
		if err != nil {
			return err
		}
		if State(st["wsrep_local_state_comment"]) != Synced || st["wsrep_ready"] != "ON" {
			return fmt.Errorf("state %s, cluster %s, ready %s", st["wsrep_local_state_comment"], st["wsrep_cluster_status"], st["wsrep_ready"])
		}
		return nil
	})
	if err != nil {
		if t := mariadb.LogTail(n.LogFile, 4); t != "" {
			err = fmt.Errorf("%w\n%s's error log (%s) says:\n%s", err, n.Name, n.LogFile, t)
		}
	}
	return err
}

// StartAll starts several servers at once and waits for all of them. The
// first failure cancels the other waits: a cluster member that died dooms
// its peers' start, and its own error is the one that names the cause.
func StartAll(ctx context.Context, wrap Wrap, user string, nodes []*plan.Node, extra map[string][]string) error {
	procs := make([]*supervise.Proc, len(nodes))
	for i, n := range nodes {
		p, err := Start(n, wrap, extra[n.Name]...)
		if err != nil {
			return err
		}
		procs[i] = p
	}
	g, gctx := errgroup.WithContext(ctx)
	for i := range nodes {
		g.Go(func() error { return WaitReady(gctx, nodes[i], procs[i], user) })
	}
	return g.Wait()
}

// Stop stops one node: TERM (a clean Galera leave), KILL after grace.
func Stop(n *plan.Node, grace time.Duration) error {
	if pid := Pid(n); pid != 0 {
		if err := supervise.Stop(pid, grace); err != nil {
			return fmt.Errorf("%s: %w", n.Name, err)
		}
	}
	return nil
}

// StopAll stops nodes in parallel.
func StopAll(nodes []*plan.Node, grace time.Duration) error {
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = Stop(n, grace) }()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
