package integration

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFullOutageRecover: kill -9 of every node, then `hadrill recover`:
// one cluster of all nodes with every row, writes through the LB again.
func TestFullOutageRecover(t *testing.T) {
	t.Parallel() // it mostly waits: see active
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

	// a node holding no state (the zero state UUID: a crash during its state
	// transfer) is never chosen nor forced: the others start, it joins them
	// by a full state transfer
	for _, n := range e.status("itrec").Nodes {
		syscall.Kill(n.Pid, syscall.SIGKILL)
	}
	waitFor(t, func() bool { return e.states("itrec") == "db1=down db2=down db3=down" })
	grastate := filepath.Join(e.home, "labs", "itrec", "nodes", "db3", "data", "grastate.dat")
	if err := os.WriteFile(grastate, []byte("# GALERA saved state\nversion: 2.1\nuuid:    00000000-0000-0000-0000-000000000000\nseqno:   -1\nsafe_to_bootstrap: 0\n"), 0o660); err != nil {
		t.Fatal(err)
	}
	if r := e.run("recover", "--name", "itrec", "--force", "db3"); r.code != 2 || !strings.Contains(r.stderr, "--force db3: it holds no cluster state") {
		t.Errorf("recover --force of the node holding no state: exit %d\n%s", r.code, r.stderr)
	}
	r := e.run("recover", "--name", "itrec")
	if r.code != 0 || !strings.Contains(r.stderr, "db3 holds no state (the zero state UUID") || !strings.Contains(r.stderr, "db3 joins by a full state transfer") ||
		strings.Contains(r.stderr, "--force") {
		t.Fatalf("recover beside a node holding no state: exit %d\n%s", r.code, r.stderr)
	}
	e.waitWhole("itrec", "db1=Synced db2=Synced db3=Synced", time.Minute)
	if got := e.sql("itrec", "db3", "SELECT COUNT(*) FROM app.r"); got != "COUNT(*)\n4" {
		t.Errorf("db3 after its state transfer holds %q rows", got)
	}
}
