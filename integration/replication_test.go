package integration

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

type replStatus struct {
	Nodes []struct {
		Name, Role, State string
		Pid               int
		GTID              string `json:"gtid_binlog_pos"`
		Replication       []struct {
			Channel, Source string
			IO              string   `json:"io_thread"`
			SQL             string   `json:"sql_thread"`
			Lag             *float64 `json:"lag_seconds"`
			SemiSync        bool     `json:"semi_sync"`
			LastError       string   `json:"last_error"`
			SlavePos        string   `json:"gtid_slave_pos"`
		} `json:"replication"`
		SemiSync *struct {
			Enabled bool
			Status  string
			Clients int
			AsyncTx int `json:"async_tx"`
		} `json:"semi_sync"`
	} `json:"nodes"`
}

func (e *env) repl(lab string) replStatus {
	e.t.Helper()
	var s replStatus
	e.statusInto(lab, &s)
	return s
}

// val runs a query returning one value on a node.
func (e *env) val(lab, node, query string) string {
	e.t.Helper()
	out := e.sql(lab, node, query)
	return out[strings.LastIndex(out, "\n")+1:]
}

// waitRow waits until query on node returns want; it returns how long that took.
func (e *env) waitRow(lab, node, query, want string, limit time.Duration) time.Duration {
	e.t.Helper()
	t0 := time.Now()
	for {
		r := e.run("sql", node, "--name", lab, "-e", query) // may fail for a moment (a load balancer switching)
		out := strings.TrimSpace(r.stdout)
		got := out[strings.LastIndex(out, "\n")+1:]
		if r.code == 0 && got == want {
			return time.Since(t0)
		}
		if time.Since(t0) > limit {
			e.t.Fatalf("%s on %s: got %q, want %q after %v", query, node, got, want, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPrimaryReplica: semi-sync primary + 2 replicas: roles, a write seen on
// every replica within 1 s, heartbeat lag, switchover, errant GTIDs refused,
// semi-sync falling back to async when the replicas vanish.
func TestPrimaryReplica(t *testing.T) {
	t.Parallel() // no timing bound a test beside it could break
	e := newEnv(t)
	f := e.writeSpec("ss.yaml", `clusters:
  - {name: db, kind: primary, nodes: 3, mode: semi-sync, ack_timeout: 500ms}
load_balancers:
  - {name: lb, cluster: db}
`)
	e.ok("up", "--name", "itss", "--file", f)
	e.ok("sql", "lb", "--name", "itss", "-e", "CREATE TABLE app.t (id INT PRIMARY KEY); INSERT INTO app.t VALUES (1)")
	for _, n := range []string{"db2", "db3"} {
		if d := e.waitRow("itss", n, "SELECT COUNT(*) FROM app.t", "1", 5*time.Second); d > time.Second {
			t.Errorf("write visible on %s after %v (target 1 s)", n, d)
		}
	}
	time.Sleep(time.Second) // a heartbeat or two
	s := e.repl("itss")
	roles := map[string]string{}
	for _, n := range s.Nodes {
		roles[n.Name] = n.Role
		if n.Name == "db1" && (n.SemiSync == nil || n.SemiSync.Status != "ON" || n.SemiSync.Clients != 2) {
			t.Errorf("db1 semi-sync: %+v", n.SemiSync)
		}
		if n.Name != "db1" {
			if len(n.Replication) != 1 || n.Replication[0].Source != "db1" || n.Replication[0].IO != "Yes" ||
				n.Replication[0].SQL != "Yes" || n.Replication[0].Lag == nil || *n.Replication[0].Lag > 2 || !n.Replication[0].SemiSync {
				t.Errorf("%s replication: %+v", n.Name, n.Replication)
			}
		}
	}
	if roles["db1"] != "primary" || roles["db2"] != "replica" || roles["db3"] != "replica" {
		t.Fatalf("roles %v", roles)
	}

	// Bad input changes nothing.
	for _, bad := range [][]string{{"promote", "db1"}, {"promote", "nosuch"}, {"promote"}} {
		if r := e.run(append(bad, "--name", "itss")...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", bad, r.code, r.stderr)
		}
	}

	// Switchover: writes go to db2 through the load balancer; everyone follows it.
	e.ok("promote", "db2", "--name", "itss")
	e.waitRow("itss", "lb", "SELECT @@server_id", "102", 5*time.Second)
	e.ok("sql", "lb", "--name", "itss", "-e", "INSERT INTO app.t VALUES (2)")
	for _, n := range []string{"db1", "db3"} {
		e.waitRow("itss", n, "SELECT COUNT(*) FROM app.t", "2", 5*time.Second)
	}
	s = e.repl("itss")
	for _, n := range s.Nodes {
		want := "replica"
		if n.Name == "db2" {
			want = "primary"
		} else if len(n.Replication) != 1 || n.Replication[0].Source != "db2" {
			t.Errorf("%s after switchover: %+v", n.Name, n.Replication)
		}
		if n.Role != want {
			t.Errorf("%s role %s, want %s", n.Name, n.Role, want)
		}
	}

	// An errant transaction on db3 (written behind replication's back) blocks its promotion.
	e.ok("sql", "db3", "--name", "itss", "-e", "INSERT INTO app.t VALUES (999)")
	r := e.run("promote", "db3", "--name", "itss")
	if r.code != 2 || !strings.Contains(r.stderr, "errant") || !strings.Contains(r.stderr, "nothing was changed") {
		t.Errorf("promote with errant GTIDs: exit %d\n%s", r.code, r.stderr)
	}
	if got := e.val("itss", "lb", "SELECT @@server_id"); got != "102" {
		t.Errorf("after a refused promotion the primary is %s", got)
	}

	// The replicas vanish: the primary waits ack_timeout once, then runs
	// async, and says so. The first commit to wait may be ours or the
	// keeper's heartbeat: a fall-back (counted by the server) happens only
	// after a commit waited ack_timeout in vain.
	e.ok("stop", "db1", "db3", "--name", "itss")
	e.ok("sql", "lb", "--name", "itss", "-e", "INSERT INTO app.t VALUES (3)")
	if off := e.val("itss", "db2", "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME='RPL_SEMI_SYNC_MASTER_NO_TIMES'"); off == "0" {
		t.Errorf("semi-sync never fell back to async")
	}
	for _, n := range e.repl("itss").Nodes {
		if n.Name == "db2" && (n.SemiSync == nil || n.SemiSync.Status != "OFF" || n.SemiSync.AsyncTx < 1) {
			t.Errorf("db2 semi-sync after losing its replicas: %+v", n.SemiSync)
		}
	}
	e.ok("down", "--name", "itss")
}

// TestDRChannel: galera3 → standalone DR server. A write reaches DR (within
// 5 s: a busy machine's bound; alone it takes milliseconds); kill -9 of the
// channel's source node under a steady writer: the channel is re-pointed
// within 10 s and DR holds exactly the cluster's rows
// (nothing lost, nothing applied twice); dr repoint on demand; backups and
// point-in-time restore, with bad targets refused, and a warning when a
// node's clock was off while the events replayed were written.
func TestDRChannel(t *testing.T) {
	t.Parallel() // it mostly waits; its timing bounds are loose for a busy machine
	e := newEnv(t)
	e.ok("up", "--name", "itdr", "--preset", "dr-standalone")
	e.ok("sql", "lb", "--name", "itdr", "-e", "CREATE TABLE app.w (id INT PRIMARY KEY)")
	if d := e.waitRow("itdr", "drdb1", "SELECT COUNT(*) FROM information_schema.tables WHERE table_name='w'", "1", 10*time.Second); d > 5*time.Second {
		t.Errorf("write visible on DR after %v (bound 5 s)", d)
	}

	// A steady writer through the load balancer; kill -9 the channel's source.
	var acked []int
	write := func(id int) {
		if r := e.run("sql", "lb", "--name", "itdr", "-e", fmt.Sprintf("INSERT INTO app.w VALUES (%d)", id)); r.code == 0 {
			acked = append(acked, id)
		}
	}
	id := 0
	for ; id < 20; id++ {
		write(id)
	}
	var src int
	for _, n := range e.repl("itdr").Nodes {
		if n.Name == "db1" {
			src = n.Pid
		}
	}
	if err := syscall.Kill(src, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	var moved time.Duration
	// writes go on for 4 s, and until the channel moved (at most 10 s)
	for ; time.Since(killed) < 4*time.Second || (moved == 0 && time.Since(killed) < 10*time.Second); id++ {
		write(id)
		if moved == 0 {
			for _, n := range e.repl("itdr").Nodes {
				if n.Name == "drdb1" && len(n.Replication) == 1 && n.Replication[0].Source != "db1" && n.Replication[0].IO == "Yes" {
					moved = time.Since(killed)
				}
			}
		}
	}
	if moved == 0 || moved > 10*time.Second {
		t.Fatalf("the DR channel was not re-pointed within the writes (%v)", moved)
	}
	t.Logf("DR channel re-pointed %v after kill -9 of its source; %d of %d writes acknowledged", moved, len(acked), id)
	all := e.val("itdr", "db2", "SELECT GROUP_CONCAT(id ORDER BY id) FROM app.w")
	e.waitRow("itdr", "drdb1", "SELECT GROUP_CONCAT(id ORDER BY id) FROM app.w", all, 10*time.Second)
	for _, a := range acked {
		if !strings.Contains(","+all+",", ","+strconv.Itoa(a)+",") {
			t.Errorf("acknowledged write %d is missing", a)
		}
	}
	// the DR replica reaches the cluster's position (db2's, read again
	// until they meet: a Galera member may still be applying)
	var pos, at string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		pos, at = e.val("itdr", "db2", "SELECT @@gtid_binlog_pos"), e.val("itdr", "drdb1", "SELECT @@gtid_slave_pos")
		if pos == at || time.Now().After(deadline) {
			break
		}
	}
	if pos != at {
		t.Errorf("10 s after the writes: drdb1 at %s, the cluster (db2) at %s", at, pos)
	}
	for _, n := range e.repl("itdr").Nodes {
		if n.Name == "drdb1" && (n.Replication[0].SQL != "Yes" || n.Replication[0].LastError != "") {
			t.Errorf("DR channel after the move: %+v", n.Replication[0])
		}
	}

	// On demand, and bad input.
	e.ok("start", "db1", "--name", "itdr")
	e.ok("dr", "repoint", "--name", "itdr", "--to", "db3")
	for _, n := range e.repl("itdr").Nodes {
		if n.Name == "drdb1" && n.Replication[0].Source != "db3" {
			t.Errorf("dr repoint --to db3: source %s", n.Replication[0].Source)
		}
	}
	for _, bad := range [][]string{{"dr", "repoint", "nosuch"}, {"dr", "repoint", "--to", "drdb1"}} {
		if r := e.run(append(bad, "--name", "itdr")...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", bad, r.code, r.stderr)
		}
	}

	// Point-in-time restore lands between two known writes.
	if r := e.run("restore", "--name", "itdr", "--to", "2026-01-01 00:00:00"); r.code != 2 || !strings.Contains(r.stderr, "no backup") {
		t.Errorf("restore without a backup: exit %d\n%s", r.code, r.stderr)
	}
	e.ok("backup", "db2", "--name", "itdr")
	e.ok("sql", "lb", "--name", "itdr", "-e", "CREATE TABLE app.pitr (v VARCHAR(8)); INSERT INTO app.pitr VALUES ('first')")
	time.Sleep(1100 * time.Millisecond)
	target := time.Now().Format("2006-01-02 15:04:05")
	time.Sleep(1100 * time.Millisecond)
	e.ok("sql", "lb", "--name", "itdr", "-e", "INSERT INTO app.pitr VALUES ('second')")
	time.Sleep(1500 * time.Millisecond) // archived
	for _, bad := range [][]string{
		{"--to", "2020-01-01 00:00:00"}, {"--to", time.Now().Add(time.Hour).Format("2006-01-02 15:04:05")},
		{"--to", "soon"}, {"--to", target, "--as", "Bad-Name"}, {"--to", target, "--cluster", "nosuch"},
	} {
		if r := e.run(append([]string{"restore", "--name", "itdr", "--as", "itdrr"}, bad...)...); r.code != 2 {
			t.Errorf("restore %v: exit %d, want 2\n%s", bad, r.code, r.stderr)
		}
	}
	if r := e.run("status", "--name", "itdrr"); r.code != 2 {
		t.Fatalf("a refused restore left lab itdrr behind")
	}
	t0 := time.Now()
	e.ok("restore", "--name", "itdr", "--to", target, "--as", "itdrr")
	if d := time.Since(t0); d > 60*time.Second {
		t.Errorf("restore took %v (bound 60 s on a busy machine)", d)
	}
	if got := e.val("itdrr", "db1", "SELECT GROUP_CONCAT(v) FROM app.pitr"); got != "first" {
		t.Errorf("restored to %s: app.pitr holds %q, want first only", target, got)
	}
	if got := e.val("itdrr", "db1", "SELECT COUNT(*) FROM app.w"); got != strconv.Itoa(strings.Count(all, ",")+1) {
		t.Errorf("restored app.w has %s rows", got)
	}
	e.ok("down", "--name", "itdrr")

	// a node's clock an hour ahead while the events to replay were written: a restore to a time
	// still runs, and says that their times are off there (a GTID target is exact)
	e.ok("fault", "clock", "db3", "+1h", "--name", "itdr")
	e.ok("sql", "lb", "--name", "itdr", "-e", "INSERT INTO app.pitr VALUES ('third')")
	time.Sleep(1100 * time.Millisecond)
	target = time.Now().Format("2006-01-02 15:04:05")
	time.Sleep(1100 * time.Millisecond)
	e.ok("sql", "lb", "--name", "itdr", "-e", "INSERT INTO app.pitr VALUES ('fourth')")
	time.Sleep(1500 * time.Millisecond) // archived
	if r := e.run("restore", "--name", "itdr", "--to", target, "--as", "itdrr"); r.code != 0 || !strings.Contains(r.stderr, "db3's clock was +1h0m0s") ||
		!strings.Contains(r.stderr, "give a GTID target") {
		t.Errorf("a restore to a time over a clock fault: exit %d, want 0 with a warning naming db3's clock\n%s", r.code, r.stderr)
	}
	e.ok("down", "--name", "itdrr")
	e.ok("down", "--name", "itdr")
}

// TestDRCluster: galera3 → a second Galera cluster: the receiving node
// applies, Galera spreads it to its peers.
func TestDRCluster(t *testing.T) {
	t.Parallel() // no timing bound a test beside it could break
	e := newEnv(t)
	e.ok("up", "--name", "itdc", "--preset", "dr-cluster")
	e.ok("sql", "lb", "--name", "itdc", "-e", "CREATE TABLE app.t (id INT PRIMARY KEY); INSERT INTO app.t VALUES (1)")
	for _, n := range []string{"dr1", "dr2", "dr3"} {
		if d := e.waitRow("itdc", n, "SELECT COUNT(*) FROM app.t", "1", 5*time.Second); d > time.Second {
			t.Errorf("write visible on %s after %v (target 1 s)", n, d)
		}
	}
	e.ok("down", "--name", "itdc")
}
