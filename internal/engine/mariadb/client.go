package mariadb

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Admin opens a connection to a node as user over its unix socket, dialed
// by dial (name identifies the dialer, e.g. "hd-admin:db1"); unix_socket
// authentication: the OS account is the credential.
func Admin(name string, dial DialFunc, socket, user string) *sql.DB {
	register(name, dial)
	c := mysql.NewConfig()
	c.User, c.Net, c.Addr = user, name, socket
	c.Timeout, c.ReadTimeout, c.WriteTimeout = 2*time.Second, 30*time.Second, 30*time.Second
	return open(c)
}

// DialFunc dials an address (TCP, or a unix socket's path) from some host
// of the lab.
type DialFunc func(ctx context.Context, addr string) (net.Conn, error)

var (
	dialMu sync.Mutex
	dials  = map[string]DialFunc{}
)

// register makes name a network the driver dials with dial. The driver
// keeps the first function registered under a name for good, so it is
// given one that looks up the latest: a lab opened again in this process
// (its hosts connected anew) dials through its own connections.
func register(name string, dial DialFunc) {
	dialMu.Lock()
	defer dialMu.Unlock()
	if _, known := dials[name]; !known {
		mysql.RegisterDialContext(name, func(ctx context.Context, a string) (net.Conn, error) {
			dialMu.Lock()
			d := dials[name]
			dialMu.Unlock()
			return d(ctx, a)
		})
	}
	dials[name] = dial
}

// TCP opens a connection over TCP, dialed from a lab host (name identifies
// the dialer, e.g. "hd:lab:client"), with a user and password.
func TCP(name string, dial DialFunc, addr, user, password, dbname string) *sql.DB {
	register(name, dial)
	c := mysql.NewConfig()
	c.User, c.Passwd, c.Net, c.Addr, c.DBName = user, password, name, addr, dbname
	c.Timeout, c.ReadTimeout, c.WriteTimeout = 2*time.Second, 30*time.Second, 30*time.Second
	return open(c)
}

func open(c *mysql.Config) *sql.DB {
	conn, err := mysql.NewConnector(c)
	if err != nil { // only for malformed configs, which we never build
		panic(err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(2)
	db.SetConnMaxIdleTime(10 * time.Second)
	return db
}

// Status reads the global status variables matching a LIKE pattern into a
// map with lowercase names. (SHOW STATUS cannot take a placeholder.)
func Status(ctx context.Context, db *sql.DB, pattern string) (map[string]string, error) {
	rows, err := db.QueryContext(ctx,
		"SELECT VARIABLE_NAME, VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME LIKE ?", pattern)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		out[strings.ToLower(k)] = v
	}
	return out, rows.Err()
}

// Execer is a *sql.DB or one of its connections (*sql.Conn).
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Exec runs statements in order, stopping at the first error.
func Exec(ctx context.Context, db Execer, stmts ...string) error {
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", firstWords(s), err)
		}
	}
	return nil
}

// firstWords names a statement in errors without echoing secrets in it.
func firstWords(s string) string {
	f := strings.Fields(s)
	if len(f) > 3 {
		f = f[:3]
	}
	return strings.Join(f, " ")
}

// ReadSecret reads a generated password from its file (0600, in the lab's
// secrets directory).
func ReadSecret(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("secret %s: %w", path, err)
	}
	return strings.TrimSpace(string(b)), nil
}
