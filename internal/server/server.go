// Package server is a database server seen from outside: its daemon (start,
// wait until it serves, stop), its pid, its administrative connection and
// the state it reports (a closed vocabulary, read by one probe for every
// role).
package server

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/netns"
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
	Unreachable  State = "unreachable"  // its host did not answer
	Paused       State = "paused"       // stopped by a fault (SIGSTOP)
	Unresponsive State = "unresponsive" // runs, but did not answer in time
	Running      State = "running"      // a server outside Galera that answered
	Synced       State = "Synced"       // a Galera member serving
	// DonorDesynced: a Galera member donating a state transfer (or
	// desynced by wsrep_desync=ON), not serving.
	DonorDesynced State = "Donor/Desynced"
	// Inconsistent: a Galera member its cluster voted out, having failed
	// to apply a write set the others applied; it stays out until its
	// server restarts.
	Inconsistent State = "Inconsistent"
)

// Answering reports whether the server answered the probe.
func (s State) Answering() bool {
	return s != Down && s != Paused && s != Unresponsive && s != Unreachable
}

// Hosts gives the host a node's server runs on.
type Hosts func(name string) host.Host

// Daemon is the node's mariadbd as its host runs it (extra: more server
// options, e.g. --wsrep-new-cluster).
func Daemon(n *plan.Node, extra ...string) host.Daemon {
	return n.Server.Named(n.Name+" mariadbd", append([]string{"mariadbd", "--defaults-file=" + n.ConfigFile}, extra...))
}

// Process is the node's server process as its host reports it.
func Process(ctx context.Context, h host.Host, n *plan.Node) (host.Process, error) {
	p, err := h.Process(ctx, Daemon(n))
	if err != nil {
		return p, fmt.Errorf("%s: %w", n.Name, err)
	}
	return p, nil
}

// Admin opens a root-equivalent pool to a node over its unix socket,
// dialed through its host as the host's socket user (unix_socket
// authentication); close it.
func Admin(n *plan.Node, h host.Host) *sql.DB {
	return mariadb.Admin("hd-admin:"+h.Name()+":"+n.Socket, func(ctx context.Context, socket string) (net.Conn, error) {
		return h.Dial(ctx, "unix", socket)
	}, n.Socket, h.SocketUser())
}

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

// Servers is what probing needs of a lab's servers: an administrative
// pool (close it) and the server's process.
type Servers interface {
	Admin(n *plan.Node) *sql.DB
	Process(n *plan.Node) (host.Process, error)
}

// Probe reads a node's state over db (its admin pool) within timeout,
// proc being its process as its host reported it (err: the host did not
// answer).
func Probe(ctx context.Context, db *sql.DB, n *plan.Node, proc host.Process, err error, timeout time.Duration) Status {
	switch {
	case err != nil:
		return Status{State: Unreachable}
	case proc.Pid == 0:
		return Status{State: Down}
	case proc.Paused:
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
	servers Servers
	mu      sync.Mutex
	m       map[string]*sql.DB
}

// NewConns starts an empty set of pools opened by s; Close them.
func NewConns(s Servers) *Conns {
	return &Conns{servers: s, m: map[string]*sql.DB{}}
}

// Probe reads the node's state over its pool within timeout.
func (c *Conns) Probe(ctx context.Context, n *plan.Node, timeout time.Duration) Status {
	proc, err := c.servers.Process(n)
	return Probe(ctx, c.DB(n), n, proc, err, timeout)
}

// DB is the node's pool, opened on first use.
func (c *Conns) DB(n *plan.Node) *sql.DB {
	c.mu.Lock()
	defer c.mu.Unlock()
	if db := c.m[n.Name]; db != nil {
		return db
	}
	db := c.servers.Admin(n)
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

// Start launches one node's mariadbd on its host (extra: more server
// options, e.g. --wsrep-new-cluster), its my.cnf written first. A previous
// process, killed a moment ago perhaps, is waited for until it has gone and
// released its ports.
func Start(ctx context.Context, h host.Host, n *plan.Node, extra ...string) error {
	if err := h.WriteFile(ctx, n.ConfigFile, []byte(n.Config), 0o644); err != nil {
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	d := Daemon(n, extra...)
	_, err := h.ReadFile(ctx, ClockFile(n))
	clocked := err == nil
	if clocked { // a node whose clock was moved keeps its own clock
		d.Argv = Clocked(n, d.Argv)
		if err := ForgetFakeTime(n.Dir, false); err != nil {
			return fmt.Errorf("%s: %w", n.Name, err)
		}
	}
	endLeftTransfer(ctx, h, n)
	pid, started, err := h.Ensure(ctx, d)
	if err != nil {
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	if clocked && started {
		return rememberFakeTime(n.Dir, pid)
	}
	return nil
}

// ErrOutOfCluster is the start of a Galera member that left its cluster
// as it joined (state Inconsistent): it stays out until its server is
// restarted.
var ErrOutOfCluster = errors.New("out of its cluster")

// OutOfCluster is ErrOutOfCluster said of one node, with why (WhyOut):
// whoever restarts it knows which node from the error itself, not from a
// probe of a server that may be too busy to answer in time.
type OutOfCluster struct{ Node, Why string }

func (e *OutOfCluster) Error() string {
	return ErrOutOfCluster.Error() + ": left its cluster as it joined (state Inconsistent; " + e.Why + ")"
}
func (e *OutOfCluster) Is(target error) bool { return target == ErrOutOfCluster }

// OutOfClusterNodes are the nodes err says left their cluster as they
// joined (every OutOfCluster in its tree, errors.Join's included).
func OutOfClusterNodes(err error) []string {
	var out []string
	var walk func(error)
	walk = func(err error) {
		switch e := err.(type) {
		case nil:
		case *OutOfCluster:
			out = append(out, e.Node)
		case interface{ Unwrap() []error }:
			for _, x := range e.Unwrap() {
				walk(x)
			}
		case interface{ Unwrap() error }:
			walk(e.Unwrap())
		}
	}
	walk(err)
	return out
}

// WaitReady waits until the node serves: Synced and ready for Galera
// members, answering queries otherwise. When the server exits instead, the
// error carries its log's own error lines.
func WaitReady(ctx context.Context, h host.Host, n *plan.Node) error {
	db := Admin(n, h)
	defer db.Close()
	err := host.WaitReady(ctx, h, Daemon(n), ReadyDeadline, 50*time.Millisecond, func(ctx context.Context) error {
		qctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		if n.Kind != spec.KindGalera {
			return db.PingContext(qctx)
		}
		st, err := mariadb.Status(qctx, db, "wsrep_%")
		if err != nil {
			return err
		}
		if State(st["wsrep_local_state_comment"]) == Inconsistent { // out until restarted: no wait ends it
			return supervise.Final(&OutOfCluster{Node: n.Name, Why: WhyOut(ctx, h, n)})
		}
		if State(st["wsrep_local_state_comment"]) != Synced || st["wsrep_ready"] != "ON" {
			return fmt.Errorf("state %s, cluster %s, ready %s", st["wsrep_local_state_comment"], st["wsrep_cluster_status"], st["wsrep_ready"])
		}
		return nil
	})
	if err != nil {
		if b, rerr := h.ReadFile(context.WithoutCancel(ctx), n.LogFile); rerr == nil { // also when a peer's failure ended the wait
			if t := mariadb.LogTail(string(b), 4); t != "" {
				err = fmt.Errorf("%w\n%s's error log (%s on %s) says:\n%s", err, n.Name, n.LogFile, h.Name(), t)
			}
			if why := mariadb.DamagedAfterSST(string(b)); why != "" {
				err = fmt.Errorf("%w\n%s: %s", err, n.Name, why)
			}
		}
	}
	return err
}

// StartAll starts several servers at once and waits for all of them. The
// first failure cancels the other waits: a cluster member that died dooms
// its peers' start, and its own error is the one that names the cause.
func StartAll(ctx context.Context, hosts Hosts, nodes []*plan.Node, extra map[string][]string) error {
	for _, n := range nodes {
		if err := Start(ctx, hosts(n.Host), n, extra[n.Name]...); err != nil {
			return err
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	for _, n := range nodes {
		g.Go(func() error { return WaitReady(gctx, hosts(n.Host), n) })
	}
	return g.Wait()
}

// Stop stops one node: TERM (a clean Galera leave), KILL after grace.
func Stop(ctx context.Context, h host.Host, n *plan.Node, grace time.Duration) error {
	if err := h.Stop(ctx, Daemon(n), grace); err != nil {
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	return nil
}

// StopAll stops nodes in parallel.
func StopAll(ctx context.Context, hosts Hosts, nodes []*plan.Node, grace time.Duration) error {
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = Stop(ctx, hosts(n.Host), n, grace) }()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// ClockFile holds a node's clock offset (and drift) for libfaketime: a
// server started while it exists runs under libfaketime and reads it again
// every second, so its wall clock moves live; CLOCK_MONOTONIC stays the
// machine's, as when NTP steps a real clock.
func ClockFile(n *plan.Node) string { return filepath.Join(n.Dir, "faketime.rc") }

// FakeTimeLib is Debian's libfaketime for multithreaded programs.
const FakeTimeLib = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1"

// Clocked runs argv under libfaketime, its offset read from the node's
// clock file.
func Clocked(n *plan.Node, argv []string) []string {
	return append([]string{"env", "LD_PRELOAD=" + FakeTimeLib, "FAKETIME_TIMESTAMP_FILE=" + ClockFile(n),
		"FAKETIME_DONT_FAKE_MONOTONIC=1", "FAKETIME_CACHE_DURATION=1"}, argv...)
}

// A process started under libfaketime makes a semaphore and a shared
// memory segment of its own in /dev/shm (named by its pid), and removes
// them only when it exits by itself: a server killed (a crash fault, down)
// would leave them. Each node records the pids of its servers started
// under it (clock faults run on this computer only), and its own leftovers
// are removed once those servers are gone.

// fakeTimePids is the record of a node directory's servers started under
// libfaketime.
func fakeTimePids(dir string) string { return filepath.Join(dir, "faketime.pids") }

// ShmDir is where libfaketime keeps its semaphores and shared memory.
var ShmDir = "/dev/shm"

// FakeTimeFiles are what a process of that pid makes under libfaketime.
func FakeTimeFiles(pid int) []string {
	return []string{filepath.Join(ShmDir, fmt.Sprintf("faketime_shm_%d", pid)), filepath.Join(ShmDir, fmt.Sprintf("sem.faketime_sem_%d", pid))}
}

func rememberFakeTime(dir string, pid int) error {
	f, err := os.OpenFile(fakeTimePids(dir), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(f, pid)
	return errors.Join(err, f.Close())
}

// ForgetFakeTime removes libfaketime's files of a node directory's
// recorded servers that no longer run (all of them with all: the lab goes,
// its servers were ended), and keeps the record of the others. A pid that
// now runs another program under libfaketime is not the node's any more:
// its files are that program's.
func ForgetFakeTime(dir string, all bool) error {
	b, err := os.ReadFile(fakeTimePids(dir))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var kept []string
	var errs []error
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			continue
		}
		env, alive := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		ours := alive == nil && bytes.Contains(env, []byte("FAKETIME_TIMESTAMP_FILE="+filepath.Join(dir, "faketime.rc")))
		if ours && !all {
			kept = append(kept, f)
			continue
		}
		if alive == nil && bytes.Contains(env, []byte("FAKETIME_")) && !ours {
			continue // the pid is another's now
		}
		for _, file := range FakeTimeFiles(pid) {
			if err := os.Remove(file); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	if len(kept) == 0 {
		errs = append(errs, os.Remove(fakeTimePids(dir)))
	} else {
		errs = append(errs, os.WriteFile(fakeTimePids(dir), []byte(strings.Join(kept, "\n")+"\n"), 0o644))
	}
	return errors.Join(errs...)
}

// StoppedBecause reads why a server that is down stopped: from its error
// log, its last run's errors since the last heal (a fault healed earlier is
// not why it stopped later); when those say nothing, the fault of the log
// that ended it (a kill -9 writes no line); "" when neither says (a clean
// stop).
func StoppedBecause(ctx context.Context, h host.Host, n *plan.Node, recs []fault.Record) string {
	log := logTail(ctx, h, n)
	if log == "" {
		return ""
	}
	why := mariadb.StoppedBecause(log, fault.LastHeal(recs))
	if started, ok := mariadb.RunStarted(log); ok && why == "" {
		why = fault.Ended(recs, n.Name, started)
	}
	if sst := mariadb.DamagedAfterSST(log); sst != "" {
		why = strings.TrimPrefix(why+"; "+sst, "; ")
	}
	return why
}

// WhyOut says why a Galera member in state Inconsistent is out of its
// cluster, from its error log: the primary component it rejoined had
// applied fewer write sets than it had (Galera's words), or its cluster
// voted it out (the error it met, when the log says).
func WhyOut(ctx context.Context, h host.Host, n *plan.Node) string {
	voted, reversed := VotedOut(ctx, h, n)
	if reversed != "" {
		return "it left its cluster: the primary component it rejoined had applied fewer write sets than it had (" + reversed + ")"
	}
	return strings.TrimSuffix("its cluster voted it out (it failed to apply a write set the others applied; "+voted, "; ") + ")"
}

// Out says whether a running Galera member is out of its cluster: in
// state Inconsistent, or too busy to answer a probe (Unresponsive) while
// its log's last run says its cluster voted it out or it left (voted,
// reversed: VotedOut's). Galera keeps such a member out until it restarts.
func Out(st State, voted, reversed string) bool {
	return st == Inconsistent || st == Unresponsive && (voted != "" || reversed != "")
}

// VotedOut says why a Galera member's cluster voted it out, from its
// error log ("" when it does not say); Reversed, that it left because the
// primary component it rejoined had applied fewer write sets than it had.
func VotedOut(ctx context.Context, h host.Host, n *plan.Node) (voted, reversed string) {
	log := logTail(ctx, h, n)
	return mariadb.VotedOut(log), mariadb.Reversed(log)
}

// logTail is the last 256K of a server's error log ("" when unread): its
// last runs, which is what the log's readers look at.
func logTail(ctx context.Context, h host.Host, n *plan.Node) string {
	b, err := h.ReadFile(ctx, n.LogFile)
	if err != nil {
		return ""
	}
	if len(b) > 256<<10 {
		b = b[len(b)-256<<10:]
	}
	return string(b)
}

// Reachable reports whether a TCP connection to addr (host:port) made
// from inside network namespace ns is accepted within timeout: whether
// that host reaches it over the lab's network, which an administrative
// connection through a server's socket does not show. The connection is
// closed at once.
func Reachable(ctx context.Context, ns, addr string, timeout time.Duration) bool {
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := netns.Dial(dctx, ns, "tcp", addr)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// OnHosts is a lab's database servers, each through its host: an admin
// pool, its process, whether one runs, its pid, a clean stop, a kill, a
// signal, the host itself (where a node's tools run). It is the view of
// the servers the rooms are given (replication, backup, faults).
type OnHosts struct{ Hosts func(name string) host.Host }

func (s OnHosts) Admin(n *plan.Node) *sql.DB { return Admin(n, s.Hosts(n.Host)) }
func (s OnHosts) Process(n *plan.Node) (host.Process, error) {
	return Process(context.Background(), s.Hosts(n.Host), n)
}
func (s OnHosts) Alive(n *plan.Node) bool { return s.Pid(n) != 0 }

// Depose writes a node's deposed file on its host (deposed), or removes
// it: while it exists the node's agent refuses it writes. Nothing for a
// node without one (not of a primary cluster, or of a lab planned before).
func (s OnHosts) Depose(ctx context.Context, n *plan.Node, deposed bool) error {
	if n.DeposedFile == "" {
		return nil
	}
	return host.Mark(ctx, s.Hosts(n.Host), n.DeposedFile, deposed)
}

// AbortConnections aborts every TCP connection from the node's host to
// addr, attempts in progress included (the kernel's socket destroy): one
// to a host that no longer answers fails at once instead of after its
// timeout.
func (s OnHosts) AbortConnections(ctx context.Context, n *plan.Node, addr string) error {
	_, err := s.Hosts(n.Host).Run(ctx, []string{"ss", "-K", "dst", addr}, nil)
	return err
}
func (s OnHosts) Pid(n *plan.Node) int {
	p, _ := s.Process(n)
	return p.Pid
}
func (s OnHosts) Stop(n *plan.Node) error {
	return Stop(context.Background(), s.Hosts(n.Host), n, StopGrace)
}
func (s OnHosts) Kill(n *plan.Node) error {
	return s.Hosts(n.Host).Kill(context.Background(), Daemon(n))
}
func (s OnHosts) Signal(n *plan.Node, sig syscall.Signal) error {
	return s.Hosts(n.Host).Signal(context.Background(), Daemon(n), sig)
}
func (s OnHosts) Host(name string) host.Host { return s.Hosts(name) }

// DonorScript is the state transfer script a Galera member runs while it
// donates (mariabackup's; it writes its own pid file in the datadir), a
// helper in the server's process group: killing it ends it and what it
// started, never the server.
func DonorScript(n *plan.Node) host.Daemon { return transferScript(n, "donor") }

func transferScript(n *plan.Node, role string) host.Daemon {
	return host.Daemon{Name: n.Name + " state transfer (" + role + ")", PidFile: filepath.Join(n.DataDir, "wsrep_sst.pid"), Marker: "--role " + role, Helper: true}
}

// endLeftTransfer ends a state transfer script a member's previous server
// left running when it died on its own (an abort, the OOM killer): its
// listener would hold the transfer's port, and the next join would fail.
func endLeftTransfer(ctx context.Context, h host.Host, n *plan.Node) {
	if _, err := h.ReadFile(ctx, filepath.Join(n.DataDir, "wsrep_sst.pid")); err != nil {
		return
	}
	if p, err := h.Process(ctx, Daemon(n)); err != nil || p.Pid != 0 {
		return
	}
	for _, role := range []string{"joiner", "donor"} {
		_ = h.Kill(ctx, transferScript(n, role))
	}
}

// DonatingTo is the joiner a Galera member still donates a state transfer
// to, from its error log ("" when none).
func DonatingTo(ctx context.Context, h host.Host, n *plan.Node) string {
	return mariadb.DonatingTo(logTail(ctx, h, n), n.Name)
}
