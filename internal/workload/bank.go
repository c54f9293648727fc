package workload

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/consistency"
)

// bankTable holds the bank workload's accounts.
const bankTable = "app.hd_bank"

// OpeningBalance is what each account of the bank workload starts with.
const OpeningBalance = 100

// StartBank opens p.Keys accounts of OpeningBalance each (the table made
// and emptied first, the opening recorded as the history's init line) and
// starts the clients, each on its endpoint in turn, until Stop or ctx
// ends: three in four operations move 1 to 5 between two accounts, reading
// both balances and writing the new ones (refused, as fail, when it would
// overdraw), the others read every balance in one statement. Outcomes are
// recorded as the list-append workload's are.
func StartBank(ctx context.Context, l Lab, targets, readers []Endpoint, p HistoryParams) (*HistoryRun, error) {
	db, err := targets[0].Open(l)
	if err != nil {
		return nil, err
	}
	err = execAll(ctx, db, "CREATE TABLE IF NOT EXISTS "+bankTable+" (id INT PRIMARY KEY, balance BIGINT NOT NULL) ENGINE=InnoDB",
		"DELETE FROM "+bankTable)
	opening := map[int]int{}
	var rows []string
	for i := 0; i < p.Keys; i++ {
		opening[i] = OpeningBalance
		rows = append(rows, fmt.Sprintf("(%d, %d)", i, OpeningBalance))
	}
	if err == nil {
		err = execAll(ctx, db, "INSERT INTO "+bankTable+" (id, balance) VALUES "+strings.Join(rows, ", "))
	}
	db.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", targets[0].Name, err)
	}
	// every account at its opening balance on every target (a total alone
	// would not tell an earlier run's accounts from these)
	if err := settled(ctx, l, append(slices.Clone(targets), readers...), fmt.Sprintf("SELECT CONCAT(COUNT(*), ':', COALESCE(SUM(balance = %d), 0)) FROM %s", OpeningBalance, bankTable),
		fmt.Sprintf("%d:%d", p.Keys, p.Keys)); err != nil {
		return nil, err
	}
	a := &HistoryRun{rec: consistency.NewRecorder(), l: l, targets: targets, readers: readers, p: p}
	a.rec.Record(consistency.Op{Process: a.rec.Process(), Type: "ok", F: consistency.FInit, Data: &consistency.Bank{Balances: opening}})
	a.startClients(ctx, func(ctx context.Context, i int) { bankClient(ctx, l, a.client(i), p, a.rec, uint64(i)) })
	return a, nil
}

// settled waits until every target answers query with want: the table a
// history workload just made and emptied (or filled) is so on every node
// its clients use, not only on the one that changed it. Without it a node
// still applying the change (a Galera node's applier is behind its commit,
// a replica lags) shows the first reads an earlier run's rows, whose values
// this run appends again.
func settled(ctx context.Context, l Lab, targets []Endpoint, query, want string) error {
	for _, e := range targets {
		db, err := e.Open(l)
		if err != nil {
			return err
		}
		var got string
		for end := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			err = db.QueryRowContext(ctx, query).Scan(&got)
			if err == nil && got == want || ctx.Err() != nil {
				break
			}
			if time.Now().After(end) {
				db.Close()
				return fmt.Errorf("%s: the workload's table not ready there within 30s (%q answered %q, want %q; %v)", e.Name, query, got, want, err)
			}
		}
		db.Close()
	}
	return ctx.Err()
}

func execAll(ctx context.Context, db *sql.DB, stmts ...string) error {
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// bankClient runs transfers (three in four) and reads of every balance
// until ctx ends (clientLoop).
func bankClient(ctx context.Context, l Lab, e route, p HistoryParams, rec *consistency.Recorder, seed uint64) {
	r := rand.New(rand.NewPCG(seed, uint64(time.Now().UnixNano())))
	clientLoop(ctx, l, e, p.SyncWait, rec, func() (consistency.Op, func(context.Context, *sql.Conn) consistency.Op) {
		if r.IntN(4) == 0 || p.Keys < 2 {
			return consistency.Op{F: consistency.FRead, Data: &consistency.Bank{}}, func(ctx context.Context, c *sql.Conn) consistency.Op {
				done, typ, code := readBalances(ctx, c)
				return consistency.Op{Type: typ, Error: code, Data: done}
			}
		}
		from := r.IntN(p.Keys)
		t := consistency.Bank{From: from, To: (from + 1 + r.IntN(p.Keys-1)) % p.Keys, Amount: 1 + r.IntN(5)}
		return consistency.Op{F: consistency.FTransfer, Data: &t}, func(ctx context.Context, c *sql.Conn) consistency.Op {
			typ, code := transfer(ctx, c, t)
			return consistency.Op{Type: typ, Error: code, Data: &t}
		}
	})
}

// finalBankRead reads every balance in one statement.
func (a *HistoryRun) finalBankRead(ctx context.Context, conn *sql.Conn, process int, node string) bool {
	a.rec.Record(consistency.Op{Process: process, Type: "invoke", Node: node, F: consistency.FRead, Data: &consistency.Bank{}})
	done, typ, code := readBalances(ctx, conn)
	a.rec.Record(consistency.Op{Process: process, Type: typ, Node: node, F: consistency.FRead, Error: code, Data: done})
	return typ == "ok"
}

// session is a connection with the workload's wsrep_sync_wait (≥ 0).
func session(ctx context.Context, db *sql.DB, syncWait int) (*sql.Conn, error) {
	c, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	if syncWait >= 0 {
		if _, err := c.ExecContext(ctx, "SET SESSION wsrep_sync_wait = "+strconv.Itoa(syncWait)); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// transfer moves t.Amount in one transaction: both balances read, the new
// ones written (not balance = balance - n: a lost update then shows as
// money made or destroyed); refused (fail) when it would overdraw. After
// each statement the server is asked whether the transaction is still
// open, as transact does; when it cannot say, the outcome is unknown.
func transfer(ctx context.Context, c *sql.Conn, t consistency.Bank) (string, int) {
	fail := func(err error) (string, int) { return "fail", rollback(ctx, c, err) }
	if _, err := c.ExecContext(ctx, "BEGIN"); err != nil {
		return fail(err)
	}
	var from, to int64
	if err := c.QueryRowContext(ctx, "SELECT (SELECT balance FROM "+bankTable+" WHERE id = ?), (SELECT balance FROM "+bankTable+" WHERE id = ?)", t.From, t.To).Scan(&from, &to); err != nil {
		return fail(err)
	}
	if from < int64(t.Amount) {
		_, _ = c.ExecContext(ctx, "ROLLBACK")
		return "fail", 0 // it would overdraw: refused
	}
	for i, w := range [][2]int64{{from - int64(t.Amount), int64(t.From)}, {to + int64(t.Amount), int64(t.To)}} {
		if _, err := c.ExecContext(ctx, "UPDATE "+bankTable+" SET balance = ? WHERE id = ?", w[0], w[1]); err != nil {
			return statementFailed(i > 0, err), rollback(ctx, c, err)
		}
		in, err := inTransaction(ctx, c)
		if err != nil { // the write may have run, and committed, on its own (see transact)
			return "info", rollback(ctx, c, err)
		}
		if !in {
			return "info", Escaped
		}
	}
	if _, err := c.ExecContext(ctx, "COMMIT"); err != nil {
		return commitFailed(err)
	}
	return "ok", 0
}

// readBalances reads every balance in one statement of one transaction.
func readBalances(ctx context.Context, c *sql.Conn) (*consistency.Bank, string, int) {
	fail := func(err error) (*consistency.Bank, string, int) {
		return &consistency.Bank{}, "fail", rollback(ctx, c, err)
	}
	if _, err := c.ExecContext(ctx, "BEGIN"); err != nil {
		return fail(err)
	}
	rows, err := c.QueryContext(ctx, "SELECT id, balance FROM "+bankTable)
	if err != nil {
		return fail(err)
	}
	b := &consistency.Bank{Balances: map[int]int{}}
	for rows.Next() {
		var id, bal int
		if err := rows.Scan(&id, &bal); err != nil {
			rows.Close()
			return fail(err)
		}
		b.Balances[id] = bal
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fail(err)
	}
	if _, err := c.ExecContext(ctx, "COMMIT"); err != nil {
		return nil, "info", errorNumber(err) // a read-only transaction: its reads stand, but say unknown as the commit did not answer
	}
	return b, "ok", 0
}
