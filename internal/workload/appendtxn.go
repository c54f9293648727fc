package workload

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/hadrill/hadrill/internal/consistency"
	"github.com/hadrill/hadrill/internal/results"
)

// HistoryParams are a history workload's: which, how many clients for how
// long, over how many keys (accounts, for bank), and where (Targets: each
// client its endpoint, round-robin); SyncWait, when ≥ 0, is each
// session's wsrep_sync_wait; Model is what the history is checked against.
type HistoryParams struct {
	// Workload is append (list-append, the default) or bank (transfers
	// between Keys accounts).
	Workload string        `json:"workload,omitempty"`
	Clients  int           `json:"clients"`
	Time     time.Duration `json:"time_ns"`
	Keys     int           `json:"keys"`
	MaxOps   int           `json:"max_ops"`
	SyncWait int           `json:"wsrep_sync_wait"` // -1: the server's own
	Model    string        `json:"model"`
	Targets  []string      `json:"targets"`
	// ReadTargets, when set, take the read-only transactions (ResolveReads):
	// each client its own in turn, on a second session.
	ReadTargets []string `json:"read_targets,omitempty"`
}

// Problems are what is wrong with the parameters of a history run, each
// naming its flag and what was expected (none: nothing).
func (p HistoryParams) Problems() []string {
	var out []string
	if p.Time < time.Second || p.Time > time.Hour {
		out = append(out, fmt.Sprintf("--time: expected 1s to 1h, got %v", p.Time))
	}
	if p.Clients < 1 || p.Clients > 256 {
		out = append(out, fmt.Sprintf("--clients: expected 1 to 256, got %d", p.Clients))
	}
	if !IsHistory(p.Workload) {
		out = append(out, fmt.Sprintf("--workload: expected one of %s, got %q", strings.Join(HistoryWorkloads, ", "), p.Workload))
	} else if why := HistoryKeysProblem(p.Workload, p.Keys); why != "" {
		out = append(out, "--keys: "+why)
	}
	if p.MaxOps < 1 || p.MaxOps > 16 {
		out = append(out, fmt.Sprintf("--max-ops: expected 1 to 16 micro-operations a transaction, got %d", p.MaxOps))
	}
	if p.SyncWait < -1 || p.SyncWait > 15 {
		out = append(out, fmt.Sprintf("--sync-wait: expected -1 (the server's own) or 0 to 15, got %d", p.SyncWait))
	}
	if why := consistency.ModelProblem(p.Model); why != "" {
		out = append(out, why)
	}
	return out
}

// ConsistencyOutcome is a consistency run: its id and what the check
// found.
type ConsistencyOutcome struct {
	RunID       string              `json:"run_id"`
	Interrupted bool                `json:"interrupted"`
	Params      HistoryParams       `json:"params"`
	Check       *consistency.Result `json:"check"`
}

// HistoryFile is a consistency run's history, in the run's directory.
const HistoryFile = "history.jsonl"

// appendTable holds each key's list as comma-separated values.
const appendTable = "app.hd_append"

// HistoryRun is a history workload running (list-append, bank or set): its
// clients and their history so far.
type HistoryRun struct {
	rec    *consistency.Recorder
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// what the final reads need: where the clients ran, and the workload
	l       Lab
	targets []Endpoint
	readers []Endpoint // where read-only transactions go (none: the targets)
	p       HistoryParams
	keys    *keyspace // list-append: the keys used
	finalOK int       // final reads that succeeded
}

// StartAppend makes the workload's table (emptied) and starts its clients,
// each on its endpoint in turn, until Stop or ctx ends: transactions of 1
// to MaxOps micro-operations over Keys keys at once (each retired for a
// new one after AppendsPerKey values), each appending a value unique to
// its key or reading the key's whole list; every operation recorded as invoked and
// then ok, fail (surely not committed: the server refused or rolled it
// back) or info (unknown: the connection went while it committed; that
// client goes on as a new process).
func StartAppend(ctx context.Context, l Lab, targets, readers []Endpoint, p HistoryParams) (*HistoryRun, error) {
	db, err := targets[0].Open(l)
	if err != nil {
		return nil, err
	}
	_, err = db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS "+appendTable+" (k INT PRIMARY KEY, v MEDIUMTEXT NOT NULL) ENGINE=InnoDB")
	if err == nil {
		_, err = db.ExecContext(ctx, "DELETE FROM "+appendTable)
	}
	db.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", targets[0].Name, err)
	}
	if err := settled(ctx, l, append(slices.Clone(targets), readers...), "SELECT COUNT(*) FROM "+appendTable, "0"); err != nil {
		return nil, err
	}
	a := &HistoryRun{rec: consistency.NewRecorder(), l: l, targets: targets, readers: readers, p: p, keys: newKeyspace(p.Keys, AppendsPerKey)}
	a.startClients(ctx, func(ctx context.Context, i int) { appendClient(ctx, l, a.client(i), p, a.rec, a.keys, uint64(i)) })
	return a, nil
}

// startClients runs client(ctx, i) for each of the run's clients, until
// Stop ends them.
func (a *HistoryRun) startClients(ctx context.Context, client func(ctx context.Context, i int)) {
	var runCtx context.Context
	runCtx, a.cancel = context.WithCancel(ctx)
	for i := 0; i < a.p.Clients; i++ {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			client(runCtx, i)
		}()
	}
}

// route is where one client sends its transactions: its writes (and
// transactions that write) to one endpoint, its read-only transactions
// to another (the same when there is no read target).
type route struct{ write, read Endpoint }

// client is client i's route: the targets and the readers each in turn.
func (a *HistoryRun) client(i int) route {
	r := route{write: a.targets[i%len(a.targets)]}
	r.read = r.write
	if len(a.readers) > 0 {
		r.read = a.readers[i%len(a.readers)]
	}
	return r
}

// Started is when the history's clock started.
func (a *HistoryRun) Started() time.Time { return a.rec.Start() }

// FinalReads is how many of Stop's final reads succeeded: with one, an
// append no read saw is lost, not merely unseen by a lagging node.
func (a *HistoryRun) FinalReads() int { return a.finalOK }

// Stop ends the clients (an operation in flight then has an unknown
// outcome), reads every key once more through each target (finalReads)
// and returns the history.
func (a *HistoryRun) Stop() []consistency.Op {
	a.cancel()
	a.wg.Wait()
	a.finalReads()
	return a.rec.Ops()
}

// finalReadTime bounds the final reads (a node that does not answer is
// left out: its read is recorded as failed or unknown).
const finalReadTime = 10 * time.Second

// finalReads reads every key (every balance) once more through each
// target after the clients stopped, with wsrep_sync_wait=1 where the
// server has it, each as a process of its own. Without them an append
// acknowledged near the end, read only by a lagging node's stale read,
// would look lost; with them, "lost" means absent from reads made once
// every node had applied everything committed before them.
func (a *HistoryRun) finalReads() {
	ctx, cancel := context.WithTimeout(context.Background(), finalReadTime)
	defer cancel()
	for _, e := range a.targets {
		db, err := e.Open(a.l)
		if err != nil {
			continue
		}
		process := a.rec.Process()
		conn, err := db.Conn(ctx)
		if err != nil {
			db.Close()
			continue
		}
		_, _ = conn.ExecContext(ctx, "SET SESSION wsrep_sync_wait = 1") // a server without Galera refuses it: its reads are its own anyway
		if historyOf(a.p.Workload).finalRead(a, ctx, conn, process, e.Name) {
			a.finalOK++
		}
		conn.Close()
		db.Close()
	}
}

// finalAppendRead reads every key in one transaction.
func (a *HistoryRun) finalAppendRead(ctx context.Context, conn *sql.Conn, process int, node string) bool {
	keys := a.keys.all()
	mops := make([]consistency.Mop, len(keys))
	for i, k := range keys {
		mops[i] = consistency.Mop{F: "r", Key: k}
	}
	a.rec.Record(consistency.Op{Process: process, Type: "invoke", Node: node, Value: mops})
	done, typ, code := transact(ctx, conn, mops)
	a.rec.Record(consistency.Op{Process: process, Type: typ, Node: node, Error: code, Value: done})
	return typ == "ok"
}

// WriteHistory stores a history as the run's history.jsonl (whole or not
// at all).
func WriteHistory(home, runID string, ops []consistency.Op) error {
	dir := results.RunDir(home, runID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(dir, HistoryFile)
	f, err := os.Create(path + ".tmp")
	if err != nil {
		return err
	}
	if err := errors.Join(consistency.Write(f, ops), f.Close()); err != nil {
		os.Remove(path + ".tmp")
		return err
	}
	return os.Rename(path+".tmp", path)
}

// Consistency runs p's history workload for p.Time, stores its history
// with the run and checks it.
func Consistency(ctx context.Context, l Lab, targets, readers []Endpoint, p HistoryParams, command []string, log io.Writer) (_ *ConsistencyOutcome, err error) {
	run, err := NewRun(ctx, l, results.Consistency, command, p)
	if err != nil {
		return nil, err
	}
	defer abandonIfFailed(l, run, &err)
	reads := ""
	if len(p.ReadTargets) > 0 {
		reads = ", read-only transactions through " + strings.Join(p.ReadTargets, ", ")
	}
	w := historyOf(p.Workload)
	fmt.Fprintf(log, "%s: %d clients for %v%s, through %s%s\n", w.name, p.Clients, p.Time, w.over(p), strings.Join(p.Targets, ", "), reads)
	a, err := w.start(ctx, l, targets, readers, p)
	if err != nil {
		return nil, err
	}
	sleepCtx(ctx, p.Time)
	ops := a.Stop()
	if err := WriteHistory(l.Home(), run.ID, ops); err != nil {
		return nil, err
	}
	res, err := consistency.Check(context.WithoutCancel(ctx), ops, p.Model) // what an interrupted run recorded is checked still
	if err != nil {
		return nil, err
	}
	out := &ConsistencyOutcome{RunID: run.ID, Interrupted: ctx.Err() != nil, Params: p, Check: res}
	return out, Finish(l, run, out.Interrupted, out)
}

// appendClient runs list-append transactions of 1 to MaxOps
// micro-operations until ctx ends (clientLoop).
// With a read target apart from the writes, half the transactions only
// read (they go there).
func appendClient(ctx context.Context, l Lab, e route, p HistoryParams, rec *consistency.Recorder, ks *keyspace, seed uint64) {
	r := rand.New(rand.NewPCG(seed, uint64(time.Now().UnixNano())))
	split := e.read != e.write
	clientLoop(ctx, l, e, p.SyncWait, rec, func() (consistency.Op, func(context.Context, *sql.Conn) consistency.Op) {
		var mops []consistency.Mop
		readOnly := split && r.IntN(2) == 0
		for j := 0; j <= r.IntN(p.MaxOps); j++ {
			k := ks.pick(r)
			if !readOnly && r.IntN(2) == 0 {
				mops = append(mops, consistency.Mop{F: "append", Key: k, Value: ks.value(k)})
			} else {
				mops = append(mops, consistency.Mop{F: "r", Key: k})
			}
		}
		return consistency.Op{Value: mops}, func(ctx context.Context, c *sql.Conn) consistency.Op {
			done, typ, code := transact(ctx, c, mops)
			return consistency.Op{Type: typ, Error: code, Value: done}
		}
	})
}

// clientLoop is one client of a history workload: until ctx ends, it takes
// the next operation (its invocation, and how to run it on a session),
// records it invoked, runs it and records how it completed, as one
// process after another (a new one after each unknown outcome); a session
// that broke, or whose operation's outcome is unknown, is replaced.
//
// A client with a read target apart from its writes holds a session on
// each and sends each read-only transaction to the reads' session: one
// process, as one application thread behind a read/write split (what it
// wrote and then did not read is a stale read of its own).
func clientLoop(ctx context.Context, l Lab, e route, syncWait int, rec *consistency.Recorder,
	next func() (consistency.Op, func(context.Context, *sql.Conn) consistency.Op)) {
	sessions := []*clientSession{{e: e.write}}
	if e.read != e.write {
		sessions = append(sessions, &clientSession{e: e.read})
	}
	for _, s := range sessions {
		s.db, _ = s.e.Open(l)
		defer s.close()
	}
	process := rec.Process()
	var inv consistency.Op
	var run func(context.Context, *sql.Conn) consistency.Op
	for ctx.Err() == nil {
		if run == nil {
			inv, run = next()
		}
		s := sessions[0]
		if len(sessions) > 1 && consistency.ReadOnly(inv) {
			s = sessions[1]
		}
		if s.conn == nil {
			c, err := session(ctx, s.db, syncWait)
			if err != nil {
				sleepCtx(ctx, 50*time.Millisecond) // the server is away: try again
				continue
			}
			s.conn = c
		}
		inv.Process, inv.Type, inv.Node = process, "invoke", s.e.Name
		inv = rec.Record(inv)
		done := run(ctx, s.conn)
		run = nil
		if ctx.Err() != nil && done.Type != "ok" { // the run ended under it: its outcome is unknown
			done.Type = "info"
		}
		done.Process, done.Node, done.F = process, s.e.Name, inv.F
		rec.Record(done)
		if done.Type == "info" || done.Error != 0 && broken(done.Error) {
			s.conn.Close()
			s.conn = nil
		}
		if done.Type == "info" {
			process = rec.Process()
		}
	}
}

// clientSession is one of a client's sessions: its endpoint, pool and
// connection (nil: to be opened).
type clientSession struct {
	e    Endpoint
	db   *sql.DB
	conn *sql.Conn
}

func (s *clientSession) close() {
	if s.conn != nil {
		s.conn.Close()
	}
	s.db.Close()
}

// broken says whether an error number leaves the session unusable.
func broken(code int) bool { return code >= 2000 } // client-side errors: the connection

// transact runs one transaction: its micro-operations as done (reads with
// their lists), and ok, fail or info with the error's number (client-side
// errors as 2013). After each statement it asks the server whether the
// transaction is still open: a Galera node may end a local transaction
// (a brute-force abort by a replicated write set) and run the session's
// next statements outside any transaction. Such a transaction is recorded
// as info with error Escaped, holding only the statement that may have run
// on its own: the ones before it ran inside the transaction (the server
// said so after each) and went with it, the ones after were never sent.
// When the question itself fails after an append (a node that just left
// the primary component answers 1047), the append may have been such a
// statement: info too. A transaction cut short records what was sent, up
// to the statement that failed; what was never sent is not in the history
// (a read would otherwise seem to see the transaction half-committed).
func transact(ctx context.Context, c *sql.Conn, mops []consistency.Mop) ([]consistency.Mop, string, int) {
	done := make([]consistency.Mop, len(mops))
	copy(done, mops)
	wrote := false
	sent := 0 // the statements sent so far
	fail := func(err error) ([]consistency.Mop, string, int) {
		return mops[:max(sent, 1)], statementFailed(wrote, err), rollback(ctx, c, err)
	}
	if _, err := c.ExecContext(ctx, "BEGIN"); err != nil {
		return fail(err)
	}
	for i, m := range mops {
		sent = i + 1
		if m.F == "append" {
			if _, err := c.ExecContext(ctx, "INSERT INTO "+appendTable+" (k, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE v = CONCAT(v, ',', ?)", m.Key, m.Value, m.Value); err != nil {
				return fail(err)
			}
			wrote = true
		} else {
			var v sql.NullString
			err := c.QueryRowContext(ctx, "SELECT v FROM "+appendTable+" WHERE k = ?", m.Key).Scan(&v)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return fail(err)
			}
			list, perr := parseList(v.String)
			if perr != nil {
				return fail(perr)
			}
			done[i] = consistency.Mop{F: "r", Key: m.Key, List: list, Read: true}
		}
		in, err := inTransaction(ctx, c)
		if err != nil && m.F == "append" {
			// the server may have ended the transaction before this append
			// without a word, and the append then committed on its own
			return mops[:sent], "info", rollback(ctx, c, err)
		}
		if err != nil {
			return fail(err)
		}
		if !in { // ended under us: this statement may have run on its own
			return mops[i : i+1], "info", Escaped
		}
	}
	if _, err := c.ExecContext(ctx, "COMMIT"); err != nil {
		typ, code := commitFailed(err)
		return mops, typ, code
	}
	return done, "ok", 0
}

// rollback ends a transaction a statement failed in and returns that
// error's number (the rollback outlives a cancelled ctx).
func rollback(ctx context.Context, c *sql.Conn, err error) int {
	_, _ = c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
	return errorNumber(err)
}

// inTransaction asks the server whether the session's transaction is
// still open: a Galera node may end a local transaction without an error
// (a brute-force abort), and the session's next statements then run on
// their own.
func inTransaction(ctx context.Context, c *sql.Conn) (bool, error) {
	var in int
	err := c.QueryRowContext(ctx, "SELECT @@in_transaction").Scan(&in)
	return in == 1, err
}

// commitFailed is what a failed COMMIT means: fail (surely rolled back: a
// certification failure, deadlock, lock wait timeout, a write on a row
// changed since the snapshot) or info (the commit may or may not have
// happened), with the error's number.
func commitFailed(err error) (string, int) {
	if rolledBack(err) {
		return "fail", errorNumber(err)
	}
	return "info", errorNumber(err)
}

// rolledBack says whether the server said it rolled the transaction back:
// a deadlock or certification failure (1213), a write on a row changed
// since the snapshot (1020), a lock wait timeout (1205). Error 1180 ("Got
// error 6 during COMMIT": the node left the primary component while it
// committed) is not such an answer: transactions answered so were read
// later.
func rolledBack(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == 1213 || me.Number == 1020 || me.Number == 1205)
}

// statementFailed is what a statement's error means for its transaction:
// fail before it wrote anything, or when the server said it rolled back;
// after a write, any other error (a node leaving the primary component
// answers 1047 mid-transaction, a connection lost) leaves the outcome
// unknown: transactions answered 1047 after an append were read later.
func statementFailed(wrote bool, err error) string {
	if wrote && !rolledBack(err) {
		return "info"
	}
	return "fail"
}

// Escaped is the error a transaction is recorded with when the server
// ended it before its commit without saying so (its statements after that
// ran outside it).
const Escaped = consistency.EscapedError

// parseList reads a key's stored list ("" is the empty list).
func parseList(s string) ([]int, error) {
	out := []int{}
	if s == "" {
		return out, nil
	}
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("stored list %q: %w", s, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// errorNumber is an error's server number, or 2013 (lost connection) for
// what happened on the client's side.
func errorNumber(err error) int {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return int(me.Number)
	}
	return 2013
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
