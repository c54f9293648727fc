package settle

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/replication"
	"github.com/hadrill/hadrill/internal/server"
	"github.com/hadrill/hadrill/internal/spec"
	"github.com/hadrill/hadrill/internal/sqlfake"
)

// fakeLab is a Galera cluster of three whose writes fail until a number of
// tries, db2 asking for flow control meanwhile, its logs volume full.
type fakeLab struct {
	p       *plan.Plan
	sql     *sqlfake.Servers
	mu      sync.Mutex
	said    []string
	primary bool
	down    map[string]bool
	starts  int
}

func (f *fakeLab) Plan() *plan.Plan           { return f.p }
func (f *fakeLab) Admin(n *plan.Node) *sql.DB { return f.sql.DB(n.Name) }
func (f *fakeLab) Alive(n *plan.Node) bool    { return !f.down[n.Name] }
func (f *fakeLab) StartStopped(context.Context) error {
	f.starts++
	clear(f.down)
	return nil
}
func (f *fakeLab) Replication() *replication.Manager { return nil }
func (f *fakeLab) Fenced() map[string]string         { return nil }
func (f *fakeLab) ServerLog(_ context.Context, n *plan.Node) string {
	if n.Name == "db3" {
		return "2026-11-27 22:42:29 0 [Warning] WSREP: Donor 0593d36d is no longer in the group. State transfer cannot be completed, need to abort.\n"
	}
	return "2026-11-27  3:52:22 2 [Warning] mariadbd: Disk is full writing 'binlog.000001' (Errcode: 28). Waiting for someone to free space..."
}
func (f *fakeLab) DiskFaults(n *plan.Node) map[string]string {
	if n.Name == "db2" {
		return map[string]string{"logs": "full"}
	}
	return nil
}
func (f *fakeLab) Probe(_ context.Context, n *plan.Node) server.Status {
	st := map[string]string{"wsrep_cluster_status": "Primary", "wsrep_local_state_comment": "Synced"}
	if !f.primary {
		st["wsrep_cluster_status"] = "non-Primary"
	}
	if n.Name == "db2" && f.primary {
		st["wsrep_flow_control_requested"], st["wsrep_flow_control_active"], st["wsrep_local_recv_queue"] = "true", "true", "29"
	}
	return server.Status{State: server.Synced, Status: st}
}
func (f *fakeLab) Logf(format string, a ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.said = append(f.said, fmt.Sprintf(format, a...))
}

func galera3() *plan.Plan {
	p := &plan.Plan{Clusters: []plan.Cluster{{Name: "db", Kind: spec.KindGalera, Nodes: []string{"db1", "db2", "db3"}}}}
	for _, n := range []string{"db1", "db2", "db3"} {
		p.Nodes = append(p.Nodes, plan.Node{Name: n, Cluster: "db", Kind: spec.KindGalera})
	}
	return p
}

// TestWritesWaitsAndSaysWhy (the labs review's finding 3): heal returns
// only once the cluster commits a write again, and says what held it: the
// member that asks for flow control, its full volume, MariaDB's minute.
func TestWritesWaitsAndSaysWhy(t *testing.T) {
	tries := 0
	f := &fakeLab{p: galera3(), primary: true, sql: &sqlfake.Servers{Fail: func(server, stmt string) error {
		if strings.HasPrefix(stmt, "REPLACE INTO hd_meta.heal") {
			if tries++; tries < 3 {
				return errors.New("context deadline exceeded")
			}
		}
		return nil
	}}}
	if err := Writes(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	said := strings.Join(f.said, "\n")
	for _, want := range []string{"cluster db takes no writes yet (db2 asks the cluster to pause replication (flow control: 29 write sets wait to be applied there)",
		"its logs volume is full", "it found its disk full and waits: the server tries the write again once a minute", "cluster db takes writes again"} {
		if !strings.Contains(said, want) {
			t.Errorf("no %q in:\n%s", want, said)
		}
	}
	// a cluster with no primary component is said, not waited for
	f = &fakeLab{p: galera3(), sql: &sqlfake.Servers{Fail: func(string, string) error { return errors.New("1047 WSREP has not yet prepared node") }}}
	if err := Writes(context.Background(), f); err != nil || !strings.Contains(strings.Join(f.said, "\n"), "none of its members is in a primary component (hadrill recover gives it one)") {
		t.Errorf("%v %v", err, f.said)
	}
}

// TestMemberStoppedAfterHeal: a member that stops while the cluster's
// writes are awaited (its rejoin aborted) is started again, at most
// twice, and said; one the heal left down is not.
func TestMemberStoppedAfterHeal(t *testing.T) {
	var f *fakeLab
	tries := 0
	f = &fakeLab{p: galera3(), primary: true, down: map[string]bool{}, sql: &sqlfake.Servers{Fail: func(server, stmt string) error {
		if !strings.HasPrefix(stmt, "REPLACE INTO hd_meta.heal") {
			return nil
		}
		if tries++; tries < 3 {
			f.down["db3"] = true // it stops again each time: started twice, then waited for
			return errors.New("context deadline exceeded")
		}
		return nil
	}}}
	if err := Writes(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	said := strings.Join(f.said, "\n")
	if f.starts != 2 || !strings.Contains(said, "cluster db: db3 (its donor left the group during its state transfer, which Galera then abandons) stopped after the heal started it: started again") {
		t.Errorf("%d starts, said:\n%s", f.starts, said)
	}
	// left down by the heal itself: not started
	f = &fakeLab{p: galera3(), primary: true, down: map[string]bool{"db3": true}, sql: &sqlfake.Servers{}}
	if err := Writes(context.Background(), f); err != nil || f.starts != 0 {
		t.Errorf("a node the heal left down: %v, %d starts", err, f.starts)
	}
}

// TestEndStaleDumps: on the primary, only the binlog dump connections
// from the replica whose connection does not run are ended, whichever of
// its addresses they came from.
func TestEndStaleDumps(t *testing.T) {
	s := &sqlfake.Servers{Answer: func(server, q string) *sqlfake.Result {
		if server == "db1" && strings.Contains(q, "Binlog Dump") {
			return &sqlfake.Result{Columns: []string{"ID", "HOST"}, Rows: [][]string{{"11", "198.18.1.12:40112"}, {"12", "198.19.1.12:40500"}, {"13", "198.18.1.13:40113"}}}
		}
		return nil
	}}
	f := &fakeLab{p: galera3(), sql: s}
	primary := &plan.Node{Name: "db1"}
	replica := &plan.Node{Name: "db2", Address: "198.18.1.12", ClusterAddress: "198.19.1.12"}
	if n := endStaleDumps(context.Background(), f, primary, replica); n != 2 {
		t.Errorf("ended %d, want 2", n)
	}
	sent := strings.Join(s.Sent("db1"), "\n")
	if !strings.Contains(sent, "KILL CONNECTION 11") || !strings.Contains(sent, "KILL CONNECTION 12") || strings.Contains(sent, "KILL CONNECTION 13") {
		t.Errorf("sent:\n%s", sent)
	}
}

// TestRestartIO: a replica whose new connection got nowhere has its IO
// thread stopped and started again, and the wait's message says what the
// thread did and last failed on.
func TestRestartIO(t *testing.T) {
	s := &sqlfake.Servers{}
	f := &fakeLab{p: galera3(), sql: s}
	if err := restartIO(context.Background(), f, &plan.Node{Name: "db2"}); err != nil {
		t.Fatal(err)
	}
	if sent := strings.Join(s.Sent("db2"), "\n"); sent != "STOP SLAVE '' IO_THREAD\nSTART SLAVE '' IO_THREAD" {
		t.Errorf("sent:\n%s", sent)
	}
	for _, c := range []struct {
		r    replication.ReplicaInfo
		want string
	}{
		{replication.ReplicaInfo{IO: "Yes", IOState: "Waiting for master to send event"}, ""},
		{replication.ReplicaInfo{IO: "Preparing", IOState: "Registering slave on master"}, ": Registering slave on master"},
		{replication.ReplicaInfo{IO: "Connecting", IOState: "Connecting to master", LastError: "error reconnecting to master"}, ": Connecting to master; last error: error reconnecting to master"},
		{replication.ReplicaInfo{IO: "Yes", SQL: "Yes", GTIDSlavePos: "1-101-62", GTIDIOPos: "1-101-62"}, ""},
		{replication.ReplicaInfo{IO: "Yes", SQL: "No", GTIDSlavePos: "1-101-62", GTIDIOPos: "1-101-77"}, ": received up to 1-101-77; applier No"},
	} {
		if got := ioWhy(c.r); got != c.want {
			t.Errorf("%+v: %q, want %q", c.r, got, c.want)
		}
	}
}
