package chaos

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/sqlfake"
	"github.com/hadrill/hadrill/internal/supervise"
)

// A disconnect checks every name first (a balancer, an unknown name, a
// server down or paused: all named at once, nothing killed), stops there
// in a dry run, then kills the application account's connections on each
// node (and the replication account's with --replication), a connection
// that ended meanwhile not counted, and records the fault.
func TestDisconnect(t *testing.T) {
	p := &plan.Plan{Lab: "d", Nodes: []plan.Node{{Name: "db1"}, {Name: "db2"}, {Name: "db3"}},
		LoadBalancers: []plan.LB{{Name: "lb", Instances: []plan.LBInstance{{Host: "lb"}}}}}
	s := startSleepers(t, "db1", "db3", "db2")
	s.sql = &sqlfake.Servers{
		Answer: func(server, q string) *sqlfake.Result {
			if strings.HasPrefix(q, "SELECT ID FROM information_schema.PROCESSLIST") {
				return &sqlfake.Result{Columns: []string{"ID"}, Rows: [][]string{{"11"}, {"12"}}}
			}
			return nil
		},
		Fail: func(server, stmt string) error {
			if server == "db3" && stmt == "KILL CONNECTION 12" {
				return &mysql.MySQLError{Number: 1094, Message: "Unknown thread id: 12"}
			}
			return nil
		},
	}
	if err := syscall.Kill(s.pids["db2"], syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100 && !supervise.Paused(s.pids["db2"]); i++ { // the kernel stops it soon after the signal
		time.Sleep(10 * time.Millisecond)
	}
	l := newFakeLab(t, p, s)
	err := Disconnect{Names: []string{"lb", "db9", "db2"}}.Inject(context.Background(), l)
	for _, w := range []string{"NODE: lb is a load balancer host", `NODE: "db9" is not a node (nodes: db1, db2, db3)`, "NODE: db2's server is paused"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("%q missing from %v", w, err)
		}
	}
	if err := (Disconnect{Names: []string{"db1"}}).Inject(fault.Dry(context.Background()), l); err != nil || len(s.sql.Log()) != 0 {
		t.Fatalf("a dry disconnect: %v, sent %v", err, s.sql.Log())
	}
	if err := (Disconnect{Names: []string{"db1"}}).Inject(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	if err := (Disconnect{Names: []string{"db3"}, Replication: true}).Inject(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	want := "db1: SELECT ID FROM information_schema.PROCESSLIST WHERE USER IN (app) AND ID <> CONNECTION_ID()\n" +
		"db1: KILL CONNECTION 11\ndb1: KILL CONNECTION 12\n" +
		"db3: SELECT ID FROM information_schema.PROCESSLIST WHERE USER IN (app, repl) AND ID <> CONNECTION_ID()\n" +
		"db3: KILL CONNECTION 11\ndb3: KILL CONNECTION 12"
	if got := strings.Join(s.sql.Log(), "\n"); got != want {
		t.Errorf("sent\n%s\nwant\n%s", got, want)
	}
	if got := l.labels(); got != "disconnect db1; disconnect db3 with replication" {
		t.Errorf("fault log %q", got)
	}
}
