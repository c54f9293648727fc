package integration

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// autoResult is what these tests read of a drill's result.
type autoResult struct {
	drillResult
	Lost   map[string][]int64 `json:"lost_acked_writes"`
	Fenced map[string]string  `json:"fenced"`
}

// TestAutoFailover: the async and semisync presets with failover: auto.
// The primary killed under writes: a replica is promoted by the keeper,
// the load balancer follows, the old primary comes back as a replica (or
// fenced, saying why), and what the drill reports lost is what an
// independent read of every acknowledged id finds missing on the new
// primary. The keeper killed and started again knows the new primary
// (semisync: a second failover from it). Bad input is refused.
func TestAutoFailover(t *testing.T) {
	e := newEnv(t)
	for _, bad := range []string{
		"clusters: [{name: db, kind: primary, nodes: 2, failover: sometimes}]",
		"clusters: [{name: db, kind: primary, nodes: 2, failover_max_lag: 5s}]",
		"clusters: [{name: db, nodes: 3, failover: auto}]",
	} {
		spec := e.writeSpec("bad", "name: itbad\n"+bad+"\n")
		if r := e.run("validate", spec); r.code != 2 || !strings.Contains(r.stderr, "failover") {
			t.Errorf("%s: exit %d, want 2 naming the field\n%s", bad, r.code, r.stderr)
		}
	}
	for _, c := range []struct {
		lab, mode string
		nodes     int
	}{{"itafa", "async", 2}, {"itafs", "semi-sync", 3}} {
		t.Run(c.mode, func(t *testing.T) {
			spec := e.writeSpec(c.lab, "name: "+c.lab+`
clusters: [{name: db, kind: primary, nodes: `+strconv.Itoa(c.nodes)+`, mode: `+c.mode+`, profile: durable, failover: auto}]
load_balancers: [{name: lb, cluster: db}]
client: {name: client}
`)
			e.ok("up", "-f", spec)
			defer e.run("down", "--name", c.lab)
			if r := e.run("drill", "partition", "--name", c.lab); r.code != 2 || !strings.Contains(r.stderr, "needs a Galera cluster") {
				t.Errorf("partition drill on a primary cluster: exit %d\n%s", r.code, r.stderr)
			}
			primary := e.failover(c.lab, "db1")
			if c.nodes == 3 {
				// the keeper restarted knows the new primary: a second failover starts from it
				b, err := os.ReadFile(filepath.Join(e.home, "labs", c.lab, "keeper.pid"))
				pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
				if err != nil || pid == 0 {
					t.Fatalf("keeper pid: %v %q", err, b)
				}
				if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				e.ok("start", "--all", "--name", c.lab)
				e.failover(c.lab, primary)
			}
			e.ok("down", "--name", c.lab)
		})
	}
	e.assertNoLeftovers()
}

// failover drills a failover of the primary old and checks what followed;
// it returns the new primary.
func (e *env) failover(lab, old string) string {
	t := e.t
	t.Helper()
	r := e.run("drill", "failover", "--name", lab, "--rate", "100", "--before", "1s", "--after", "1s", "-o", "json")
	var res autoResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("drill: exit %d: %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	t.Logf("%s: killed %v, gap %.2fs, writes back %v, whole after %v, %d acked, %d lost, fenced %v", lab, res.Targets, res.Gap.Seconds,
		deref(res.WritesBackS), deref(res.SyncedS), res.WritesAcked, res.LostCount, res.Fenced)
	if len(res.Targets) != 1 || res.Targets[0] != old || res.WritesBackS == nil || res.SyncedS == nil || res.WritesAcked == 0 {
		t.Fatalf("drill result: %+v\n%s", res, r.stderr)
	}
	if res.Gap.Seconds > 10 {
		t.Errorf("writes stopped for %.1fs", res.Gap.Seconds)
	}
	st := e.repl(lab)
	primary := ""
	for _, n := range st.Nodes {
		switch {
		case n.Role == "primary":
			primary = n.Name
		case n.Name == old && res.Fenced[old] != "":
			if n.Role != "fenced" {
				t.Errorf("%s fenced in the drill, role %s now", old, n.Role)
			}
		case len(n.Replication) == 0 || n.Replication[0].IO != "Yes" || n.Replication[0].SQL != "Yes":
			t.Errorf("%s (%s) does not replicate: %+v", n.Name, n.Role, n.Replication)
		}
	}
	if primary == "" || primary == old {
		t.Fatalf("after the failover of %s the primary is %q", old, primary)
	}
	for _, n := range st.Nodes {
		if n.Role == "replica" && n.Replication[0].Source != primary {
			t.Errorf("%s replicates from %s, not the new primary %s", n.Name, n.Replication[0].Source, primary)
		}
	}
	if got := e.sql(lab, "lb", "SELECT @@hostname, @@read_only"); !strings.HasSuffix(got, "0") {
		t.Errorf("through the load balancer: %q, want the writable primary", got)
	}
	// every acknowledged id, read from the drill's own record, looked up on the new primary
	f, err := os.Open(filepath.Join(e.home, "runs", res.RunID, "ops.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, id := range strings.Fields(e.sql(lab, primary, "SELECT id FROM app.hd_drill WHERE run = '"+res.RunID+"'")) {
		have[id] = true
	}
	var missing []int64
	for _, row := range rows[1:] {
		if row[0] == "write" && row[3] != "" && row[4] == "" && !have[row[1]] {
			id, _ := strconv.ParseInt(row[1], 10, 64)
			missing = append(missing, id)
		}
	}
	slices.Sort(missing)
	reported := slices.Clone(res.Lost[primary])
	slices.Sort(reported)
	if !slices.Equal(missing, reported) {
		t.Errorf("the new primary %s lacks %d acknowledged writes, the drill reported %d (%v)", primary, len(missing), len(reported), reported)
	}
	if strings.Contains(lab, "fs") && len(missing) > 0 {
		t.Errorf("semi-sync lost %d acknowledged writes", len(missing))
	}
	return primary
}
