package workload

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/server"
	"github.com/hadrill/hadrill/internal/workload/workloadtest"
)

func TestResolveTargets(t *testing.T) {
	dir := t.TempDir()
	app, creds := filepath.Join(dir, "app"), filepath.Join(dir, "creds.cnf")
	if err := os.WriteFile(app, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(creds, []byte("[client]\nuser = bob\npassword = pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	open, writable := filepath.Join(dir, "open.cnf"), filepath.Join(dir, "writable.cnf")
	for f, mode := range map[string]os.FileMode{open: 0o644, writable: 0o666} {
		if err := os.WriteFile(f, []byte("[client]\nuser = bob\npassword = pw\n"), mode); err != nil || os.Chmod(f, mode) != nil {
			t.Fatal(err)
		}
	}
	l := workloadtest.Lab{P: &plan.Plan{Lab: "t", Secrets: plan.Secrets{App: app},
		Nodes:         []plan.Node{{Name: "db1", Address: "198.18.0.11", Port: 3306}},
		LoadBalancers: []plan.LB{{Name: "front", Address: "198.18.0.101", Port: 3306}}}}
	for _, c := range []struct {
		target, creds, host, user string
		port                      int
	}{
		{"lb", "", "198.18.0.101", "app", 3306},
		{"front", "", "198.18.0.101", "app", 3306},
		{"db1", "", "198.18.0.11", "app", 3306},
		{"mysql://198.18.9.9:3307", creds, "198.18.9.9", "bob", 3307},
	} {
		e, err := resolve(l, c.target, c.creds)
		if err != nil || e.Host != c.host || e.Port != c.port || e.User != c.user {
			t.Errorf("%s: %+v %v", c.target, e, err)
		}
	}
	for _, c := range []struct{ target, creds, want string }{
		{"db9", "", `--target: unknown target "db9" in lab t (known: lb, front, db1)`},
		{"mysql://nohost", creds, "--target: expected mysql://HOST:PORT"},
		{"mysql://h:1", "", "--credentials: required"},
		{"mysql://h:1", filepath.Join(dir, "none"), "--credentials:"},
		{"mysql://h:1", open, "holds a password and others may read it (mode 0644); chmod 600"},
		{"mysql://h:1", writable, "may be written by others (mode 0666): the MySQL client ignores such a file"},
	} {
		if _, err := resolve(l, c.target, c.creds); !hderr.IsUser(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.target, err, c.want)
		}
	}
}

func TestStatusRows(t *testing.T) {
	t0 := time.Now()
	nodes := []*plan.Node{{Name: "db1"}, {Name: "db2"}}
	snaps := []Snapshot{
		{At: t0, Nodes: map[string]server.Status{"db1": {State: server.Synced, Status: map[string]string{"wsrep_local_recv_queue": "3"}}, "db2": {State: server.Down}}},
		{At: t0.Add(1500 * time.Millisecond), Nodes: map[string]server.Status{"db1": {State: server.Synced}}},
	}
	rows := StatusRows(snaps, nodes)
	if len(rows) != 4 || rows[0][2] != "Synced" || rows[0][4] != "3" || rows[1][2] != "down" || rows[2][0] != "1.5" || rows[3][2] != "" {
		t.Errorf("rows %q", rows)
	}
	if len(rows[0]) != len(SampleColumns) {
		t.Errorf("%d columns, header has %d", len(rows[0]), len(SampleColumns))
	}
}
