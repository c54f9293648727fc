package integration

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFullOutageRecover: kill -9 of every node, then `hadrill recover`:
// one cluster of all nodes with every row, writes through the LB again.
func TestFullOutageRecover(t *testing.T) {
	e := newEnv(t)
	e.ok("up", "--name", "itrec")
	e.ok("sql", "lb", "--name", "itrec", "-e", "CREATE TABLE app.r (id INT PRIMARY KEY); INSERT INTO app.r VALUES (1), (2), (3)")
	if r := e.run("recover", "--name", "itrec", "--force", "db9"); r.code != 2 || !strings.Contains(r.stderr, `"db9"`) {
		t.Errorf("recover --force of an unknown node: exit %d %s", r.code, r.stderr)
	}
	killed := time.Now()
	for _, n := range e.status("itrec").Nodes {
		syscall.Kill(n.Pid, syscall.SIGKILL)
	}
	e.ok("recover", "--name", "itrec")
	for {
		if r := e.run("sql", "lb", "--name", "itrec", "-e", "INSERT INTO app.r VALUES (4)"); r.code == 0 {
			break
		}
		if time.Since(killed) > time.Minute {
			t.Fatal("no write accepted through the LB a minute after the outage")
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("writes accepted through the LB %v after kill -9 of every node", time.Since(killed).Round(10*time.Millisecond))
	if s := e.states("itrec"); s != "db1=Synced db2=Synced db3=Synced" {
		t.Errorf("after recover: %s", s)
	}
	for _, n := range []string{"db1", "db2", "db3"} {
		if got := e.sql("itrec", n, "SELECT COUNT(*) FROM app.r"); got != "COUNT(*)\n4" {
			t.Errorf("%s holds %q rows", n, got)
		}
		if got := e.sql("itrec", n, "SHOW STATUS LIKE 'wsrep_cluster_size'"); !strings.HasSuffix(got, "3") {
			t.Errorf("%s: cluster size %q", n, got)
		}
	}
}
