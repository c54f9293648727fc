package mariadb

import (
	"context"
	"crypto/rand"
	"crypto/sha1"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// NativeHash is the mysql_native_password hash of a password, as
// PASSWORD() computes it: '*' and the upper-case hex of SHA1(SHA1(pw)).
// Accounts are created with it (IDENTIFIED BY PASSWORD '*…'), so the
// statement that reaches the binary log, galera.cache and the binlog
// archive carries no plaintext password.
func NativeHash(password string) string {
	first := sha1.Sum([]byte(password))
	second := sha1.Sum(first[:])
	return "*" + strings.ToUpper(hex.EncodeToString(second[:]))
}

// Users are the accounts every lab has, with their passwords.
type Users struct {
	App, AppPassword     string
	Check, CheckPassword string
	Repl, ReplPassword   string
}

// CreateUsers creates the application user (all privileges on the app,
// sbtest and hd_slap schemas), the health-check user (SLAVE MONITOR only: it reads
// status, variables and replication state) and the replication user. Passwords travel only
// inside the statements, never in argv or logs.
//
// local keeps the statements out of the binary log (sql_log_bin=0): every
// node of a primary cluster gets the same accounts without transactions of
// its own, so no node holds GTIDs the others lack.
//
// The statements are idempotent and sent again, for up to usersRetry, while
// the server refuses them for a moment as a Galera member does when its
// cluster's view re-forms (a member evicted for an instant on a busy
// machine: a DDL then answers 1205 or 1213, or 1047 until the member is
// back in the primary component); any other error ends it at once.
func CreateUsers(ctx context.Context, db *sql.DB, u Users, local bool) error {
	deadline := time.Now().Add(usersRetry)
	for {
		err := createUsers(ctx, db, u, local)
		if err == nil || !viewChanging(err) || time.Now().Add(usersWait).After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(usersWait):
		}
	}
}

// usersRetry is how long CreateUsers sends its statements again while the
// server refuses them for a view change; usersWait is the wait between
// tries.
var usersRetry, usersWait = 30 * time.Second, time.Second

// viewChanging says whether err is a Galera member's passing refusal of a
// statement while its cluster's view re-forms: a lock wait timeout or a
// deadlock a DDL meets then (1205, 1213), or the member out of the primary
// component for the moment (1047, "WSREP has not yet prepared node for
// application use").
func viewChanging(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == 1205 || me.Number == 1213 || me.Number == 1047)
}

func createUsers(ctx context.Context, db *sql.DB, u Users, local bool) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if local {
		if _, err := conn.ExecContext(ctx, "SET SESSION sql_log_bin=0"); err != nil {
			return err
		}
	}
	return Exec(ctx, conn,
		"CREATE DATABASE IF NOT EXISTS app",
		"CREATE DATABASE IF NOT EXISTS sbtest",
		fmt.Sprintf("CREATE OR REPLACE USER '%s'@'%%' IDENTIFIED BY PASSWORD '%s'", u.App, NativeHash(u.AppPassword)),
		fmt.Sprintf("GRANT ALL PRIVILEGES ON app.* TO '%s'@'%%'", u.App),
		fmt.Sprintf("GRANT ALL PRIVILEGES ON sbtest.* TO '%s'@'%%'", u.App),
		fmt.Sprintf("GRANT ALL PRIVILEGES ON hd_slap.* TO '%s'@'%%'", u.App),   // mariadb-slap's scratch schema (dropped and recreated per run)
		fmt.Sprintf("GRANT ALL PRIVILEGES ON employees.* TO '%s'@'%%'", u.App), // the generated employees dataset (hadrill bench slap --dataset)
		fmt.Sprintf("CREATE OR REPLACE USER '%s'@'localhost' IDENTIFIED BY PASSWORD '%s'", u.Check, NativeHash(u.CheckPassword)),
		fmt.Sprintf("GRANT SLAVE MONITOR ON *.* TO '%s'@'localhost'", u.Check), // SHOW ALL SLAVES STATUS, for /replica
		fmt.Sprintf("CREATE OR REPLACE USER '%s'@'%%' IDENTIFIED BY PASSWORD '%s'", u.Repl, NativeHash(u.ReplPassword)),
		fmt.Sprintf("GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '%s'@'%%'", u.Repl),
	)
}

// Password generates a random password of letters and digits (safe to quote).
func Password() string {
	const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}
