package mariadb

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/hadrill/hadrill/internal/sqlfake"
)

func TestNativeHash(t *testing.T) {
	// SELECT PASSWORD('password') on MariaDB 10.11
	if got := NativeHash("password"); got != "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19" {
		t.Fatalf("NativeHash(password) = %s", got)
	}
}

// TestCreateUsersThroughViewChange: statements a Galera member refuses
// while its view re-forms (1205, 1213, 1047) are sent again until they
// pass, within usersRetry; any other error, or refusals past it, fail
// with the server's word.
func TestCreateUsersThroughViewChange(t *testing.T) {
	defer func(r, w time.Duration) { usersRetry, usersWait = r, w }(usersRetry, usersWait)
	usersRetry, usersWait = 200*time.Millisecond, 5*time.Millisecond
	u := Users{App: "app", AppPassword: "a", Check: "chk", CheckPassword: "c", Repl: "repl", ReplPassword: "r"}
	for _, c := range []struct {
		name   string
		refuse int // how many times the first statement is refused
		number uint16
		ok     bool
	}{
		{"no refusal", 0, 0, true},
		{"a lock wait timeout as the view re-forms", 2, 1205, true},
		{"a deadlock", 1, 1213, true},
		{"out of the primary component for a moment", 3, 1047, true},
		{"refused for longer than the retry", 1 << 30, 1205, false},
		{"access denied", 1, 1045, false},
	} {
		refused := 0
		fake := &sqlfake.Servers{Fail: func(_, stmt string) error {
			if strings.HasPrefix(stmt, "CREATE DATABASE IF NOT EXISTS app") && refused < c.refuse {
				refused++
				return &mysql.MySQLError{Number: c.number, Message: "refused"}
			}
			return nil
		}}
		db := fake.DB("db1")
		err := CreateUsers(context.Background(), db, u, false)
		db.Close()
		sent := 0
		for _, s := range fake.Sent("db1") {
			if strings.HasPrefix(s, "GRANT REPLICATION SLAVE") {
				sent++
			}
		}
		switch {
		case c.ok && (err != nil || sent != 1):
			t.Errorf("%s: %v, the last statement sent %d times", c.name, err, sent)
		case !c.ok && (err == nil || !strings.Contains(err.Error(), "CREATE DATABASE IF") || sent != 0):
			t.Errorf("%s: %v, the last statement sent %d times, want the refusal", c.name, err, sent)
		}
		if c.number == 1045 && refused != 1 {
			t.Errorf("%s: tried %d times, want once", c.name, refused)
		}
	}
}
