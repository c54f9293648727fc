package mariadb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// Source is where a replication connection reads from.
type Source struct {
	Host           string
	Port           int
	User, Password string
}

// Replicate (re)points the named replication connection ("" is the default
// one) at src by GTID, continuing from what this server has applied
// (gtid_slave_pos), and starts it. Retries every second; a heartbeat every
// second lets the replica notice a silent source.
func Replicate(ctx context.Context, db *sql.DB, conn string, src Source) error {
	q := quote(conn)
	if err := StopSlave(ctx, db, conn); err != nil {
		return err
	}
	return Exec(ctx, db,
		fmt.Sprintf("CHANGE MASTER %s TO MASTER_HOST='%s', MASTER_PORT=%d, MASTER_USER='%s', MASTER_PASSWORD='%s', "+
			"MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1, MASTER_HEARTBEAT_PERIOD=1", q, src.Host, src.Port, src.User, src.Password),
		"START SLAVE "+q)
}

// StopReplicating stops and forgets a replication connection.
func StopReplicating(ctx context.Context, db *sql.DB, conn string) error {
	q := quote(conn)
	if err := StopSlave(ctx, db, conn); err != nil {
		return err
	}
	return Exec(ctx, db, "RESET SLAVE "+q+" ALL")
}

// StopSlave stops a connection's threads and keeps its settings; one that
// does not exist is stopped already.
func StopSlave(ctx context.Context, db *sql.DB, conn string) error {
	_, err := db.ExecContext(ctx, "STOP SLAVE "+quote(conn))
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == 1617 { // ER_SLAVE_NOT_CONFIGURED / no such master connection
		return nil
	}
	return err
}

func quote(conn string) string { return "'" + strings.ReplaceAll(conn, "'", "") + "'" }

// Replicas reads SHOW ALL SLAVES STATUS: one map per connection, lowercase
// column names, NULL as "NULL".
func Replicas(ctx context.Context, db *sql.DB) ([]map[string]string, error) {
	rows, err := db.QueryContext(ctx, "SHOW ALL SLAVES STATUS")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []map[string]string
	for rows.Next() {
		vals := make([]sql.RawBytes, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		c := map[string]string{}
		for i, name := range cols {
			if vals[i] == nil {
				c[strings.ToLower(name)] = "NULL"
			} else {
				c[strings.ToLower(name)] = string(vals[i])
			}
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// Vars reads global variables by exact name.
func Vars(ctx context.Context, db *sql.DB, names ...string) (map[string]string, error) {
	out := map[string]string{}
	for _, n := range names {
		var v sql.NullString
		if err := db.QueryRowContext(ctx, "SELECT @@GLOBAL."+n).Scan(&v); err != nil {
			return nil, fmt.Errorf("@@%s: %w", n, err)
		}
		out[n] = v.String
	}
	return out, nil
}
