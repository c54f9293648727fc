// Package sqlfake is a recording database/sql driver for unit tests of the
// rooms that talk to servers through a narrow interface (replication,
// backup): each pool is one named server; statements are recorded, and
// queries are answered from canned results. It is never used against a
// lab: integration tests use real servers.
package sqlfake

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"io"
	"strings"
	"sync"
)

// Result is a canned answer to a query.
type Result struct {
	Columns []string
	Rows    [][]string
}

// Servers is a set of fake servers, each reached by name.
type Servers struct {
	mu sync.Mutex
	// Answer returns the answer of server to query (nil: no rows).
	Answer func(server, query string) *Result
	// Fail, when set, is the error a statement sent to server meets (nil:
	// it succeeds).
	Fail func(server, stmt string) error
	// QueryFail, when set, is the error a query sent to server meets
	// (nil: Answer answers it).
	QueryFail func(server, query string) error
	log       []string
}

// DB opens a pool to one fake server.
func (s *Servers) DB(server string) *sql.DB { return sql.OpenDB(connector{s, server}) }

// Log is every statement and query sent, as "server: text", in order.
func (s *Servers) Log() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log...)
}

// Sent lists what one server was sent.
func (s *Servers) Sent(server string) []string {
	var out []string
	for _, l := range s.Log() {
		if rest, ok := strings.CutPrefix(l, server+": "); ok {
			out = append(out, rest)
		}
	}
	return out
}

func (s *Servers) record(server, text string) {
	s.mu.Lock()
	s.log = append(s.log, server+": "+text)
	s.mu.Unlock()
}

type connector struct {
	s      *Servers
	server string
}

func (c connector) Connect(context.Context) (driver.Conn, error) { return conn(c), nil }
func (c connector) Driver() driver.Driver                        { return drv{} }

type drv struct{}

func (drv) Open(string) (driver.Conn, error) {
	return nil, fmt.Errorf("sqlfake: open through Servers.DB")
}

type conn connector

func (c conn) Prepare(q string) (driver.Stmt, error) { return stmt{c, q}, nil }
func (c conn) Close() error                          { return nil }
func (c conn) Begin() (driver.Tx, error)             { return nil, fmt.Errorf("sqlfake: no transactions") }

func (c conn) ExecContext(_ context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	c.s.record(c.server, withArgs(q, args))
	if c.s.Fail != nil {
		if err := c.s.Fail(c.server, withArgs(q, args)); err != nil {
			return nil, err
		}
	}
	return driver.RowsAffected(0), nil
}

func (c conn) QueryContext(_ context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	text := withArgs(q, args)
	c.s.record(c.server, text)
	if c.s.QueryFail != nil {
		if err := c.s.QueryFail(c.server, text); err != nil {
			return nil, err
		}
	}
	var r *Result
	if c.s.Answer != nil {
		r = c.s.Answer(c.server, text)
	}
	if r == nil {
		r = &Result{Columns: []string{"x"}}
	}
	return &rows{r: r}, nil
}

func withArgs(q string, args []driver.NamedValue) string {
	for _, a := range args {
		q = strings.Replace(q, "?", fmt.Sprintf("%v", a.Value), 1)
	}
	return q
}

type stmt struct {
	c conn
	q string
}

func (s stmt) Close() error  { return nil }
func (s stmt) NumInput() int { return -1 }
func (s stmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.c.ExecContext(context.Background(), s.q, named(args))
}
func (s stmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.c.QueryContext(context.Background(), s.q, named(args))
}

func named(args []driver.Value) []driver.NamedValue {
	out := make([]driver.NamedValue, len(args))
	for i, a := range args {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	return out
}

type rows struct {
	r *Result
	i int
}

func (r *rows) Columns() []string { return r.r.Columns }
func (r *rows) Close() error      { return nil }
func (r *rows) Next(dest []driver.Value) error {
	if r.i >= len(r.r.Rows) {
		return io.EOF
	}
	for j, v := range r.r.Rows[r.i] {
		b := make([]byte, len(v)) // as a server sends it: "" is an empty value, not NULL
		copy(b, v)
		dest[j] = b
	}
	r.i++
	return nil
}
