package integration

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestLifecycle: up, status contract, writes, node stop/start (rejoin, no
// second cluster), rolling restart, full clean stop/start, kill -9 of every
// node and start --all, bad node names, a taken lab name, down.
func TestLifecycle(t *testing.T) {
	t.Parallel() // it waits on its own lab, whose names no other test uses
	e := newEnv(t)
	e.ok("up", "--name", "itlife")
	st := e.status("itlife")
	if len(st.Nodes) != 3 || len(st.LoadBalancers) != 1 || st.Client.Netns != "hd-itlife-client" {
		t.Fatalf("status: %+v", st)
	}
	for _, n := range st.Nodes {
		if n.State != "Synced" || n.Pid == 0 || n.Kind != "galera" || n.Role != "galera" || n.Region != "main" ||
			n.Netns != "hd-itlife-"+n.Name || !strings.HasPrefix(n.Address, "198.1") || n.Port != 3306 {
			t.Errorf("node %+v", n)
		}
	}
	if fi, err := os.Stat(st.Client.DefaultsFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("client defaults file %s: %v %v", st.Client.DefaultsFile, fi.Mode(), err)
	}
	if b, _ := os.ReadFile(st.Client.DefaultsFile); !strings.Contains(string(b), "user     = app") {
		t.Errorf("defaults file has no application user:\n%s", b)
	}

	// The cluster formed with fast join retransmits but runs as its my.cnf says.
	for _, n := range []string{"db1", "db2", "db3"} {
		cnf, _ := os.ReadFile(filepath.Join(e.home, "labs", "itlife", "nodes", n, "my.cnf"))
		want := "PT1S"
		if m := regexp.MustCompile(`evs.join_retrans_period=(PT[0-9.]+S)`).FindSubmatch(cnf); m != nil {
			want = string(m[1])
		}
		if opts := e.sql("itlife", n, "SELECT @@wsrep_provider_options"); !strings.Contains(opts, "evs.join_retrans_period = "+want) {
			t.Errorf("%s does not run with its configured join timing %s: %s", n, want, opts)
		}
	}

	// Each server's temporary files are its own (a server starting removes
	// every #sql file in its tmpdir).
	for _, n := range []string{"db1", "db2"} {
		if got := e.sql("itlife", n, "SELECT @@tmpdir"); !strings.HasSuffix(got, "/nodes/"+n+"/tmp") {
			t.Errorf("%s's tmpdir: %q, want its own (nodes/%s/tmp)", n, got, n)
		}
	}

	// The application user writes over TCP from the client host; every node sees it.
	e.ok("sql", "db3", "--name", "itlife", "--app", "-e", "CREATE TABLE app.t (id INT PRIMARY KEY); INSERT INTO app.t VALUES (1)")
	for _, n := range []string{"db1", "db2", "db3"} {
		if got := e.sql("itlife", n, "SET SESSION wsrep_sync_wait=1; SELECT COUNT(*) FROM app.t"); got != "COUNT(*)\n1" { // a causal read: another node applies the write a moment later
			t.Errorf("%s sees %q", n, got)
		}
	}

	// Bad node names and a taken lab name are bad input, and change nothing.
	if r := e.run("stop", "--name", "itlife", "db9", "nope"); r.code != 2 || !strings.Contains(r.stderr, `"db9"`) || !strings.Contains(r.stderr, `"nope"`) {
		t.Errorf("unknown nodes: exit %d %s", r.code, r.stderr)
	}
	spec := e.writeSpec("other.yaml", "clusters:\n  - name: db\n    nodes: 1\n")
	if r := e.run("up", "--name", "itlife", "-f", spec); r.code != 2 || !strings.Contains(r.stderr, "already exists") {
		t.Errorf("taken name: exit %d %s", r.code, r.stderr)
	}
	if s := e.states("itlife"); s != "db1=Synced db2=Synced db3=Synced" {
		t.Fatalf("bad input changed the lab: %s", s)
	}

	// One node leaves and rejoins the running cluster (IST), with what it missed.
	e.ok("stop", "--name", "itlife", "db2")
	e.sql("itlife", "db1", "INSERT INTO app.t VALUES (2)")
	e.ok("start", "--name", "itlife", "db2")
	if got := e.sql("itlife", "db2", "SELECT COUNT(*) FROM app.t"); got != "COUNT(*)\n2" {
		t.Errorf("db2 after rejoin: %q", got)
	}
	if got := e.sql("itlife", "db2", "SHOW STATUS LIKE 'wsrep_cluster_size'"); !strings.HasSuffix(got, "3") {
		t.Errorf("db2 rejoined a cluster of %q, not the running one", got)
	}

	// A node whose saved position is ahead of its cluster's (write sets only
	// it applied, as a crash in the middle of a commit can leave) leaves
	// as it rejoins (Galera: "Reversing history … Data loss is possible"):
	// started again by a full state transfer, it has the cluster's data,
	// not a copy that kept its own write sets where the cluster has others.
	e.ok("stop", "--name", "itlife", "db2")
	grastate := filepath.Join(e.home, "labs", "itlife", "nodes", "db2", "data", "grastate.dat")
	if b, err := os.ReadFile(grastate); err != nil {
		t.Error(err)
	} else {
		ahead := regexp.MustCompile(`(?m)^seqno:\s*(\d+)`).ReplaceAllStringFunc(string(b), func(l string) string {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(l, "seqno:")))
			return "seqno:   " + strconv.Itoa(n+5)
		})
		if err := os.WriteFile(grastate, []byte(ahead), 0o644); err != nil {
			t.Error(err)
		}
	}
	e.sql("itlife", "db1", "INSERT INTO app.t VALUES (3)")
	if r := e.ok("start", "--name", "itlife", "db2"); !strings.Contains(r.stderr, "db2: it held write sets its cluster did not") ||
		!strings.Contains(r.stderr, "joins by a full state transfer") {
		t.Errorf("db2 ahead of its cluster: its start did not say it took a full state transfer\n%s", r.stderr)
	}
	if got := e.sql("itlife", "db2", "SELECT COUNT(*) FROM app.t"); got != "COUNT(*)\n3" {
		t.Errorf("db2 after rejoining by a full state transfer: %q", got)
	}

	// Rolling restart keeps the cluster whole.
	e.ok("restart", "--name", "itlife", "db1", "db3")
	if s := e.states("itlife"); s != "db1=Synced db2=Synced db3=Synced" {
		t.Errorf("after rolling restart: %s", s)
	}

	// A lone node of a fully stopped cluster refuses to bootstrap a second cluster.
	e.ok("stop", "--name", "itlife", "--all")
	if r := e.run("start", "--name", "itlife", "db3"); r.code != 2 || !strings.Contains(r.stderr, "start --all") {
		t.Errorf("lone start: exit %d %s", r.code, r.stderr)
	}
	e.ok("start", "--name", "itlife", "--all")

	// kill -9 of every node; start --all re-forms one cluster with all data
	// and with its Galera history (state UUID and seqno) intact.
	before := e.sql("itlife", "db1", "SHOW STATUS WHERE Variable_name IN ('wsrep_cluster_state_uuid', 'wsrep_last_committed')")
	for _, n := range e.status("itlife").Nodes {
		syscall.Kill(n.Pid, syscall.SIGKILL)
	}
	e.ok("start", "--name", "itlife", "--all")
	if s := e.states("itlife"); s != "db1=Synced db2=Synced db3=Synced" {
		t.Errorf("after full crash: %s", s)
	}
	if got := e.sql("itlife", "db3", "SELECT COUNT(*) FROM app.t"); got != "COUNT(*)\n3" {
		t.Errorf("rows after full crash: %q", got)
	}
	after := e.sql("itlife", "db3", "SHOW STATUS WHERE Variable_name IN ('wsrep_cluster_state_uuid', 'wsrep_last_committed')")
	if uuid(before) != uuid(after) || seqno(after) < seqno(before) {
		t.Errorf("Galera history lost in the full crash:\nbefore %q\nafter  %q", before, after)
	}
	if got := e.sql("itlife", "db1", "SHOW STATUS LIKE 'wsrep_cluster_size'"); !strings.HasSuffix(got, strconv.Itoa(3)) {
		t.Errorf("cluster size %q", got)
	}

	// Logs, and unknown names for every command that takes one.
	if r := e.ok("logs", "--name", "itlife", "db2", "-n", "5"); strings.Count(r.stdout, "\n") != 5 {
		t.Errorf("logs -n 5 printed:\n%s", r.stdout)
	}
	for _, args := range [][]string{{"logs", "db7"}, {"sql", "db7", "-e", "SELECT 1"}, {"restart", "db7"}} {
		if r := e.run(append(args, "--name", "itlife")...); r.code != 2 || !strings.Contains(r.stderr, `"db7"`) {
			t.Errorf("%v: exit %d %s", args, r.code, r.stderr)
		}
	}

	// down --keep-data stops the lab and removes its hosts; up starts it again with its data.
	e.ok("down", "--name", "itlife", "--keep-data")
	if ns, _ := filepath.Glob("/run/netns/hd-itlife*"); len(ns) > 0 {
		t.Errorf("down --keep-data left namespaces %v", ns)
	}
	e.ok("up", "--name", "itlife")
	if s := e.states("itlife"); s != "db1=Synced db2=Synced db3=Synced" {
		t.Errorf("after up of a stopped lab: %s", s)
	}
	if got := e.sql("itlife", "db2", "SELECT COUNT(*) FROM app.t"); got != "COUNT(*)\n3" {
		t.Errorf("rows after restart of a stopped lab: %q", got)
	}

	e.ok("down", "--name", "itlife")
	e.assertNoLeftovers()
}

// TestSeveralLabsAtOnce: two labs run side by side without clashing.
func TestSeveralLabsAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	spec := e.writeSpec("one.yaml", "clusters:\n  - name: db\n    nodes: 1\n")
	e.ok("up", "--name", "ita", "-f", spec)
	e.ok("up", "--name", "itb", "-f", spec)
	for _, lab := range []string{"ita", "itb"} {
		if s := e.states(lab); s != "db1=Synced" {
			t.Errorf("%s: %s", lab, s)
		}
	}
	// A one-node cluster restarts by bootstrapping its only node.
	e.ok("restart", "--name", "ita", "db1")
	if s := e.states("ita"); s != "db1=Synced" {
		t.Errorf("ita after restart: %s", s)
	}
	if r := e.run("status"); r.code != 2 || !strings.Contains(r.stderr, "2 labs exist") {
		t.Errorf("ambiguous lab: exit %d %s", r.code, r.stderr)
	}
	e.ok("down", "--all")
}

// TestSameNameInTwoHomes: namespaces are machine-wide; a second home cannot
// take (or tear down) a lab name the first home uses.
func TestSameNameInTwoHomes(t *testing.T) {
	t.Parallel()
	a, b := newEnv(t), newEnv(t)
	spec := a.writeSpec("one.yaml", "clusters:\n  - name: db\n    nodes: 1\n")
	a.ok("up", "--name", "itsame", "-f", spec)
	if r := b.run("up", "--name", "itsame", "-f", spec); r.code != 2 || !strings.Contains(r.stderr, "in use on this machine") {
		t.Errorf("second home took the name: exit %d %s", r.code, r.stderr)
	}
	b.ok("down", "--name", "itsame") // nothing of b's: must not touch a's lab
	if s := a.states("itsame"); s != "db1=Synced" {
		t.Errorf("first home's lab after the second home's attempts: %s", s)
	}
	a.ok("down", "--name", "itsame")
	if _, err := os.Stat("/run/hadrill/labs/itsame"); err == nil {
		t.Error("ownership record left behind")
	}
}

func statusValue(out, name string) string {
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == name {
			return f[1]
		}
	}
	return ""
}

func uuid(out string) string { return statusValue(out, "wsrep_cluster_state_uuid") }

func seqno(out string) int {
	n, _ := strconv.Atoi(statusValue(out, "wsrep_last_committed"))
	return n
}
