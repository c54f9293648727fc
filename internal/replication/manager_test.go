package replication

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
	"github.com/hadrill/hadrill/internal/sqlfake"
	"github.com/hadrill/hadrill/internal/state"
)

// fakeServers: which nodes run, a recording fake server per node, and
// each node's deposed mark as last set (absent: never touched).
type fakeServers struct {
	up      map[string]bool
	sql     *sqlfake.Servers
	deposed map[string]bool
}

func (f *fakeServers) Depose(_ context.Context, n *plan.Node, deposed bool) error {
	if f.deposed == nil {
		f.deposed = map[string]bool{}
	}
	f.deposed[n.Name] = deposed
	return nil
}

func (f *fakeServers) Admin(n *plan.Node) *sql.DB { return f.sql.DB(n.Name) }
func (f *fakeServers) Alive(n *plan.Node) bool    { return f.up[n.Name] }
func (f *fakeServers) Process(n *plan.Node) (host.Process, error) {
	if f.up[n.Name] {
		return host.Process{Pid: 1}, nil
	}
	return host.Process{}, nil
}

// semisync3: a semi-sync primary cluster db1 (primary), db2, db3.
func semisync3(t *testing.T) *plan.Plan {
	repl := filepath.Join(t.TempDir(), "repl.password")
	if err := os.WriteFile(repl, []byte("pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &plan.Plan{Lab: "t", Secrets: plan.Secrets{Repl: repl},
		Clusters: []plan.Cluster{{Name: "db", Kind: spec.KindPrimary, Mode: spec.ModeSemiSync, Primary: "db1", Nodes: []string{"db1", "db2", "db3"}}}}
	for i, name := range []string{"db1", "db2", "db3"} {
		p.Nodes = append(p.Nodes, plan.Node{Name: name, Cluster: "db", Kind: spec.KindPrimary, Address: "198.18.0.1" + string(rune('1'+i)), Port: 3306})
	}
	return p
}

// memRoles is a role record in memory.
type memRoles struct {
	r     state.Roles
	locks int
}

func (m *memRoles) Read() (state.Roles, error)             { return m.r, nil }
func (m *memRoles) Update(change func(*state.Roles)) error { change(&m.r); return nil }
func (m *memRoles) Lock(context.Context) (func(), error) {
	m.locks++
	return func() {}, nil
}

func manager(t *testing.T, answer func(server, query string) *sqlfake.Result) (*Manager, *fakeServers) {
	f := &fakeServers{up: map[string]bool{"db1": true, "db2": true, "db3": true}, sql: &sqlfake.Servers{Answer: answer}}
	return &Manager{Plan: semisync3(t), Servers: f}, f
}

// changes drops the queries that only read.
func changes(sent []string) []string {
	return slices.DeleteFunc(slices.Clone(sent), func(s string) bool {
		return strings.HasPrefix(s, "SELECT") || strings.HasPrefix(s, "SHOW")
	})
}

func has(sent []string, prefix string) bool {
	return slices.ContainsFunc(sent, func(s string) bool { return strings.HasPrefix(s, prefix) })
}

// states answers every node's gtid_binlog_state.
func states(st map[string]string, then func(server, q string) *sqlfake.Result) func(server, q string) *sqlfake.Result {
	return func(server, q string) *sqlfake.Result {
		if q == "SELECT @@gtid_binlog_state" {
			return &sqlfake.Result{Columns: []string{"s"}, Rows: [][]string{{st[server]}}}
		}
		if then != nil {
			return then(server, q)
		}
		return nil
	}
}

var same = map[string]string{"db1": "1-101-5", "db2": "1-101-5", "db3": "1-101-4"}

func TestEnsureGivesRoles(t *testing.T) {
	m, f := manager(t, states(same, nil))
	if err := m.Ensure(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := changes(f.sql.Sent("db1")); !slices.Equal(got, []string{"SET GLOBAL read_only=OFF", "SET GLOBAL rpl_semi_sync_master_enabled=ON"}) {
		t.Errorf("primary was sent %q", got)
	}
	if d, ok := f.deposed["db1"]; !ok || d || len(f.deposed) != 1 {
		t.Errorf("deposed marks %v: want the primary's cleared and no other touched", f.deposed)
	}
	for _, r := range []string{"db2", "db3"} {
		sent := f.sql.Sent(r)
		if len(sent) < 4 || sent[0] != "SET GLOBAL read_only=ON" || !has(sent, "CHANGE MASTER '' TO MASTER_HOST='198.18.0.11'") || !has(sent, "START SLAVE ''") {
			t.Errorf("replica %s was sent %q", r, sent)
		}
		if has(sent, "SET GLOBAL rpl_semi_sync_master_enabled=ON") {
			t.Errorf("semi-sync master switched on on replica %s (its SQL thread would wait for acknowledgements)", r)
		}
	}
}

func TestEnsureLeavesExistingConnectionsAndDownNodes(t *testing.T) {
	m, f := manager(t, states(same, func(server, q string) *sqlfake.Result {
		if q == "SHOW ALL SLAVES STATUS" && server == "db2" {
			return &sqlfake.Result{Columns: []string{"Connection_name", "Master_Host"}, Rows: [][]string{{"", "198.18.0.11"}}}
		}
		return nil
	}))
	f.up["db3"] = false
	if err := m.Ensure(context.Background()); err != nil {
		t.Fatal(err)
	}
	if sent := f.sql.Sent("db2"); has(sent, "CHANGE MASTER") {
		t.Errorf("an existing connection was re-pointed: %q", sent)
	}
	if sent := f.sql.Sent("db3"); len(sent) != 0 {
		t.Errorf("a down node was sent %q", sent)
	}
}

// A former primary that committed what the primary never received is
// fenced: read-only, its replication stopped, never pointed at the primary.
func TestEnsureFencesADivergedNodeAndRejoinsTheOthers(t *testing.T) {
	roles := &memRoles{r: state.Roles{Primaries: map[string]string{"db": "db2"}}}
	m, f := manager(t, states(map[string]string{"db1": "1-101-9", "db2": "1-101-7,1-102-8", "db3": "1-101-7"}, func(server, q string) *sqlfake.Result {
		if q == "SHOW ALL SLAVES STATUS" && server == "db3" { // still follows the old primary
			return &sqlfake.Result{Columns: []string{"Connection_name", "Master_Host"}, Rows: [][]string{{"", "198.18.0.11"}}}
		}
		return nil
	}))
	m.Roles = roles
	if err := m.Ensure(context.Background()); err != nil {
		t.Fatal(err)
	}
	if sent := f.sql.Sent("db1"); sent[0] != "SET GLOBAL read_only=ON" || has(sent, "CHANGE MASTER") || !has(sent, "STOP SLAVE ''") {
		t.Errorf("the diverged former primary was sent %q", sent)
	}
	if why := roles.r.Fenced["db1"]; !strings.Contains(why, "1-101-9") {
		t.Errorf("db1 fenced for %q", why)
	}
	if sent := f.sql.Sent("db3"); !has(sent, "SET GLOBAL gtid_slave_pos=@@gtid_binlog_pos") || !has(sent, "CHANGE MASTER '' TO MASTER_HOST='198.18.0.12'") {
		t.Errorf("db3 does not follow the new primary db2: %q", sent)
	}
	if sent := changes(f.sql.Sent("db2")); !slices.Equal(sent, []string{"SET GLOBAL read_only=OFF", "SET GLOBAL rpl_semi_sync_master_enabled=ON"}) {
		t.Errorf("the primary db2 was sent %q", sent)
	}
}

func TestEnsureWithThePrimaryDownKeepsReplicasReadOnly(t *testing.T) {
	m, f := manager(t, states(same, nil))
	f.up["db1"] = false
	if err := m.Ensure(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{"db2", "db3"} {
		if sent := changes(f.sql.Sent(r)); !slices.Equal(sent, []string{"SET GLOBAL read_only=ON"}) {
			t.Errorf("%s was sent %q", r, sent)
		}
	}
}

func TestPromoteRefusesBeforeChangingAnything(t *testing.T) {
	for _, c := range []struct {
		name, node, want string
		down             string
	}{
		{"unknown", "db9", `unknown node "db9"`, ""},
		{"already", "db1", "already the primary", ""},
		{"down", "db2", "db2 is down", "db2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, f := manager(t, nil)
			if c.down != "" {
				f.up[c.down] = false
			}
			err := m.Promote(context.Background(), c.node, false)
			if !hderr.IsUser(err) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want a user error with %q", err, c.want)
			}
			if log := f.sql.Log(); len(log) != 0 {
				t.Errorf("a refused promotion sent %q", log)
			}
		})
	}
}

// positions answers a switchover's questions: each node's GTID position,
// and the candidate's catch-up wait.
func positions(pos map[string]string) func(server, q string) *sqlfake.Result {
	return func(server, q string) *sqlfake.Result {
		switch {
		case q == "SELECT @@gtid_binlog_pos", q == "SELECT @@gtid_binlog_state": // one server per domain here: state = position
			return &sqlfake.Result{Columns: []string{"pos"}, Rows: [][]string{{pos[server]}}}
		case strings.HasPrefix(q, "SELECT MASTER_GTID_WAIT"):
			return &sqlfake.Result{Columns: []string{"r"}, Rows: [][]string{{"0"}}}
		}
		return nil
	}
}

func TestPromoteSwitchover(t *testing.T) {
	m, f := manager(t, positions(map[string]string{"db1": "1-101-5", "db2": "1-101-5", "db3": "1-101-5"}))
	roles := &memRoles{}
	m.Roles = roles
	if err := m.Promote(context.Background(), "db2", false); err != nil {
		t.Fatal(err)
	}
	if roles.r.Primaries["db"] != "db2" || m.PrimaryOf(&m.Plan.Clusters[0]) != "db2" || roles.locks != 1 {
		t.Errorf("primary recorded %v, now %s, locked %d times", roles.r.Primaries, m.PrimaryOf(&m.Plan.Clusters[0]), roles.locks)
	}
	if sent := f.sql.Sent("db1"); sent[0] != "SET GLOBAL read_only=ON" || !has(sent, "CHANGE MASTER '' TO MASTER_HOST='198.18.0.12'") {
		t.Errorf("old primary: read-only first, then follows db2; was sent %q", sent)
	}
	if sent := f.sql.Sent("db2"); !has(sent, "RESET SLAVE '' ALL") || !has(sent, "SET GLOBAL read_only=OFF") {
		t.Errorf("new primary was sent %q", sent)
	}
	if sent := f.sql.Sent("db3"); !has(sent, "CHANGE MASTER '' TO MASTER_HOST='198.18.0.12'") {
		t.Errorf("db3 does not follow db2: %q", sent)
	}
	if sent := f.sql.Sent("db2"); !has(sent, "SET GLOBAL rpl_semi_sync_master_enabled=ON") {
		t.Errorf("the new semi-sync primary, with db3 following, does not wait for it: %q", sent)
	}
	if d, ok := f.deposed["db2"]; !ok || d || !f.deposed["db1"] {
		t.Errorf("deposed marks %v: want db2's cleared, db1 deposed", f.deposed)
	}
}

// A former primary deposed by a failover and promoted again loses its
// deposed mark before it takes writes; a forced promotion with the old
// primary down marks it (its host may be reachable: should its server be
// started by hand, writable, its agent still refuses it writes).
func TestPromoteClearsAndSetsDeposedMarks(t *testing.T) {
	m, f := manager(t, positions(map[string]string{"db1": "1-101-5", "db2": "1-101-5", "db3": "1-101-5"}))
	m.Roles = &memRoles{}
	f.deposed = map[string]bool{"db2": true}
	f.up["db1"] = false
	if err := m.Promote(context.Background(), "db2", true); err != nil {
		t.Fatal(err)
	}
	if f.deposed["db2"] || !f.deposed["db1"] {
		t.Errorf("deposed marks %v: want db2's cleared, db1 deposed", f.deposed)
	}
}

// Promoted with no replica left to follow (the old primary down, the
// third node down too), a semi-sync primary writes without waiting.
func TestPromoteWithoutFollowers(t *testing.T) {
	m, f := manager(t, positions(map[string]string{"db1": "1-101-5", "db2": "1-101-5", "db3": "1-101-5"}))
	m.Roles = &memRoles{}
	f.up["db1"], f.up["db3"] = false, false
	if err := m.Promote(context.Background(), "db2", true); err != nil {
		t.Fatal(err)
	}
	if sent := f.sql.Sent("db2"); !has(sent, "SET GLOBAL rpl_semi_sync_master_enabled=OFF") || has(sent, "SET GLOBAL rpl_semi_sync_master_enabled=ON") {
		t.Errorf("a semi-sync primary with no one to acknowledge was sent %q", sent)
	}
}

func TestPromoteRefusesErrantAndRestoresTheWriter(t *testing.T) {
	m, f := manager(t, positions(map[string]string{"db1": "1-101-5", "db2": "1-101-5,2-102-1", "db3": "1-101-5"}))
	err := m.Promote(context.Background(), "db2", false)
	if !hderr.IsUser(err) || !strings.Contains(err.Error(), "errant") || !strings.Contains(err.Error(), "2-102-1") {
		t.Fatalf("want the errant GTID named, got %v", err)
	}
	if sent := f.sql.Sent("db1"); sent[len(sent)-1] != "SET GLOBAL read_only=OFF" {
		t.Errorf("the old primary must be writable again; its last statement was %q", sent[len(sent)-1])
	}
	if sent := f.sql.Sent("db2"); has(sent, "RESET SLAVE") {
		t.Errorf("the refused candidate was changed: %q", sent)
	}
}

// The keeper's heartbeats go on on the primary: a replica's own write and
// the primary's later ones share sequence numbers. The errant write is
// still seen (by server), not hidden by the primary being further along.
func TestPromoteSeesAnErrantWriteBehindTheHeartbeats(t *testing.T) {
	pos := map[string]string{"db1": "1-101-7", "db2": "1-101-5", "db3": "1-103-6"}
	st := map[string]string{"db1": "1-101-7", "db2": "1-101-5", "db3": "1-101-5,1-103-6"}
	m, _ := manager(t, func(server, q string) *sqlfake.Result {
		switch q {
		case "SELECT @@gtid_binlog_state":
			return &sqlfake.Result{Columns: []string{"s"}, Rows: [][]string{{st[server]}}}
		case "SELECT @@gtid_binlog_pos":
			return &sqlfake.Result{Columns: []string{"pos"}, Rows: [][]string{{pos[server]}}}
		}
		return positions(pos)(server, q)
	})
	err := m.Promote(context.Background(), "db3", false)
	if !hderr.IsUser(err) || !strings.Contains(err.Error(), "errant") || !strings.Contains(err.Error(), "1-103-6") {
		t.Fatalf("want the errant GTID 1-103-6 named, got %v", err)
	}
}

func TestRepointRefusals(t *testing.T) {
	m, _ := manager(t, nil)
	if err := m.Repoint(context.Background(), "", ""); !hderr.IsUser(err) || !strings.Contains(err.Error(), "no replication channels") {
		t.Errorf("no channels: %v", err)
	}
	m.Plan.Channels = []plan.Channel{{Name: "dr", From: "db", To: "dr", Receiver: "db3"}}
	if err := m.Repoint(context.Background(), "nope", ""); !hderr.IsUser(err) || !strings.Contains(err.Error(), `unknown channel "nope"`) {
		t.Errorf("unknown channel: %v", err)
	}
	if err := m.Repoint(context.Background(), "dr", ""); !hderr.IsUser(err) || !strings.Contains(err.Error(), "follows that cluster's primary") {
		t.Errorf("a channel from a primary cluster: %v", err)
	}
}

// A semi-sync primary with no replica to acknowledge (the others down or
// fenced) writes without waiting: every commit would otherwise wait the
// ack timeout and go on unacknowledged anyway.
func TestEnsureSemiSyncWithoutFollowers(t *testing.T) {
	m, f := manager(t, states(same, nil))
	f.up["db2"], f.up["db3"] = false, false
	if err := m.Ensure(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := changes(f.sql.Sent("db1")); !slices.Equal(got, []string{"SET GLOBAL read_only=OFF", "SET GLOBAL rpl_semi_sync_master_enabled=OFF"}) {
		t.Errorf("a primary without replicas was sent %q", got)
	}
	f.up["db3"] = true // one rejoins: its primary waits for it again
	n := len(f.sql.Sent("db1"))
	if err := m.Ensure(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := changes(f.sql.Sent("db1")[n:]); !slices.Equal(got, []string{"SET GLOBAL read_only=OFF", "SET GLOBAL rpl_semi_sync_master_enabled=ON"}) {
		t.Errorf("a primary with a replica again was sent %q", got)
	}
}
