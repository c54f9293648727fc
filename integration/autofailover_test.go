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
	"time"
)

// autoResult is what these tests read of a drill's result.
type autoResult struct {
	drillResult
	Lost     map[string][]int64 `json:"lost_acked_writes"`
	Fenced   map[string]string  `json:"fenced"`
	Reformed *float64           `json:"reformed_s"`
}

// TestAutoFailover: the async and semisync presets with failover: auto.
// The primary killed (semisync: cut off) under writes: a replica is promoted by the keeper,
// the load balancer follows, the old primary comes back as a replica (or
// fenced, saying why), and what the drill reports lost is what an
// independent read of every acknowledged id finds missing on the new
// primary. semisync: the primary cut off (not killed), then frozen, is
// failed over the same way, and one cut off from its replicas only, which
// its clients still reach, is not. async: the primary paused (SIGSTOP) is replaced once the
// replicas give up on it, and resumed it is turned read-only and a replica
// (or fenced), never a second writer. semisync: the keeper killed and
// started again knows the new primary (a second failover from it, this
// time its host crashed); a replica holding a transaction of its own is
// fenced, and rebuild makes it a replica again. Bad input is refused.
func TestAutoFailover(t *testing.T) {
	t.Parallel() // it mostly waits: see active
	e := newEnv(t)
	for _, bad := range []string{
		"clusters: [{name: db, kind: primary, nodes: 2, failover: sometimes}]",
		"clusters: [{name: db, kind: primary, nodes: 2, failover_max_lag: 5s}]",
		"clusters: [{name: db, nodes: 3, failover: auto}]",
		"clusters: [{name: db, kind: primary, nodes: 2, failover: auto, failover_after: 100ms}]",
		"clusters: [{name: db, kind: primary, nodes: 2, failover_after: 2s}]",
	} {
		spec := e.writeSpec("bad", "name: itbad\n"+bad+"\n")
		if r := e.run("validate", spec); r.code != 2 || !strings.Contains(r.stderr, "failover") {
			t.Errorf("%s: exit %d, want 2 naming the field\n%s", bad, r.code, r.stderr)
		}
	}
	// async waits 4 s before it fails over a primary that runs but is out of
	// reach (failover_after), so its flapping partition's 2 s cuts never
	// do; semi-sync keeps the default, 1 s
	for _, c := range []struct {
		lab, mode, after string
		nodes            int
	}{{"itafa", "async", ", failover_after: 4s", 2}, {"itafs", "semi-sync", "", 3}} {
		t.Run(c.mode, func(t *testing.T) {
			spec := e.writeSpec(c.lab, "name: "+c.lab+`
clusters: [{name: db, kind: primary, nodes: `+strconv.Itoa(c.nodes)+`, mode: `+c.mode+`, profile: durable, failover: auto`+c.after+`}]
load_balancers: [{name: lb, cluster: db}]
client: {name: client}
`)
			e.ok("up", "-f", spec)
			defer e.run("down", "--name", c.lab)
			// async: the primary killed; semi-sync: the primary cut off from everyone, still running
			// (the keeper sees it as the load balancer does, fences it read-only through its own
			// machine, and promotes)
			scenario := "failover"
			if c.nodes == 3 {
				scenario = "partition"
			}
			if scenario == "partition" {
				// a batch's write in progress on db1 as it is cut off: its commit waits out the 10 s
				// ack_timeout (no replica reaches it), and so does the failover's read-only behind it
				e.sql(c.lab, "db1", "CREATE TABLE app.batch (id INT PRIMARY KEY)")
				e.start("sql", "db1", "--name", c.lab, "-e", "INSERT INTO app.batch SELECT SLEEP(3)")
			}
			primary, res := e.failover(scenario, c.lab, "db1")
			if scenario == "partition" {
				// db1 is the load balancer's first writer: once the cut heals it is reachable, and
				// writable until that commit ends; deposed on its host by the failover, its agent
				// refuses it writes all along
				if res.Balancer != nil {
					for _, ev := range res.Balancer.Events {
						if ev.Proxy == "writes" && ev.Server == "db1" && ev.What == "up" {
							t.Errorf("the load balancer took db1 back for writes after its failover to %s: %+v", primary, res.Balancer.Events)
						}
					}
				}
				var db1 string
				for _, n := range e.status(c.lab).Nodes {
					if n.Name == "db1" {
						db1 = n.Address
					}
				}
				if code, body := agentClient("hd-" + c.lab + "-client")("http://" + db1 + ":9200/primary"); code != 503 || !strings.Contains(body, "deposed") {
					t.Errorf("db1's agent after its failover to %s, for writes: %d %s, want 503 deposed", primary, code, body)
				}
				if res.Fenced["db1"] != "" { // the batch's row, committed once its wait ended, is db1's alone
					e.ok("rebuild", "db1", "--name", c.lab)
				}
			}
			if c.nodes == 3 { // the primary frozen (SIGSTOP): failed over once the replicas give up on it
				primary, _ = e.failover("pause", c.lab, primary)
			}
			if c.nodes == 2 {
				// a crash may take an acknowledged commit the replica never received (async): the
				// old primary is then fenced, and rebuilt here to be the paused primary's successor
				for _, n := range e.repl(c.lab).Nodes {
					if n.Role == "fenced" {
						e.ok("rebuild", n.Name, "--name", c.lab)
					}
				}
				// a paused primary: the replicas give up on it after slave_net_timeout and the keeper
				// promotes; resumed, it must not take writes again
				e.ok("fault", "pause", primary, "--name", c.lab)
				old := primary
				deadline := time.Now().Add(30 * time.Second)
				for primary == old && time.Now().Before(deadline) {
					time.Sleep(250 * time.Millisecond)
					for _, n := range e.repl(c.lab).Nodes {
						if n.Role == "primary" && n.Name != old {
							primary = n.Name
						}
					}
				}
				if primary == old {
					t.Fatalf("no failover from the paused primary %s within 30s", old)
				}
				e.ok("fault", "resume", old, "--name", c.lab)
				deadline = time.Now().Add(10 * time.Second)
				var back string
				for {
					for _, n := range e.repl(c.lab).Nodes {
						if n.Name == old && (n.Role == "fenced" || (n.Role == "replica" && len(n.Replication) > 0 && n.Replication[0].Source == primary)) {
							back = n.Role
						}
					}
					if back != "" {
						t.Logf("%s: paused primary %s replaced by %s; resumed, it is a %s", c.lab, old, primary, back)
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("the resumed former primary %s is neither a replica of %s nor fenced: %+v", old, primary, e.repl(c.lab).Nodes)
					}
					time.Sleep(250 * time.Millisecond)
				}
				if got := e.val(c.lab, old, "SELECT @@read_only"); got != "1" {
					t.Errorf("the resumed former primary %s: read_only %s", old, got)
				}
				// a replica's clock a minute ahead: the lag hadrill reports is measured on its own
				// clock (the keeper's heartbeats), so it stays what it is. The resumed former
				// primary is that replica, unless it was fenced (it had commits the new primary
				// never received: a pause under load may leave some); then another replica of the
				// new primary, if the cluster has one
				subject := old
				if back == "fenced" {
					subject = ""
					for _, n := range e.repl(c.lab).Nodes {
						if n.Role == "replica" && len(n.Replication) > 0 && n.Replication[0].Source == primary {
							subject = n.Name
						}
					}
					if subject == "" {
						t.Logf("%s: no replica of %s to move the clock of (%s fenced): the clock's lag not checked in this run", c.lab, primary, old)
					}
				}
				if subject != "" {
					e.ok("fault", "clock", subject, "+60s", "--name", c.lab)
					var lag *float64
					for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
						for _, n := range e.repl(c.lab).Nodes {
							if n.Name == subject && len(n.Replication) > 0 {
								lag = n.Replication[0].Lag
							}
						}
						skew, _ := strconv.Atoi(e.val(c.lab, subject, "SELECT UNIX_TIMESTAMP() - "+strconv.FormatInt(time.Now().Unix(), 10)))
						if lag != nil && skew >= 50 {
							break
						}
					}
					if lag == nil || *lag > 5 {
						t.Errorf("%s's clock 60 s ahead: its reported lag is %v, want under 5 s", subject, deref(lag))
					}
					e.ok("fault", "heal", "--name", c.lab)
				}
				// a flapping partition of the primary (2 s cut, 2 s healed): each cut is shorter
				// than the cluster's failover_after (4 s), so no failover: the same primary after,
				// nothing lost
				r := e.runDrill("drill", "flap", "--name", c.lab, "--hold", "6s", "--rate", "50", "--before", "1s", "--after", "1s", "-o", "json")
				var fl drillResult
				if err := json.Unmarshal([]byte(r.stdout), &fl); err != nil || r.code != 0 || !fl.Passed || fl.LostCount != 0 || fl.WritesAcked == 0 ||
					len(fl.Targets) != 1 || fl.Targets[0] != primary {
					t.Errorf("drill flap of the primary %s: exit %d %v %+v\n%s", primary, r.code, err, fl, r.stderr)
				}
				for _, n := range e.repl(c.lab).Nodes {
					if n.Role == "primary" && n.Name != primary {
						t.Errorf("%s promoted by a flapping partition of %s (2 s cuts)", n.Name, primary)
					}
				}
			}
			if c.nodes == 3 {
				// the primary cut off from its replicas only: its clients still reach it, so the keeper
				// must not promote one (the replicas alone cannot tell a dead primary from a cut)
				var replicas []string
				for _, n := range e.repl(c.lab).Nodes {
					if n.Name != primary {
						replicas = append(replicas, n.Name)
					}
				}
				e.ok("fault", "partition", primary, "--from", strings.Join(replicas, ","), "--name", c.lab)
				time.Sleep(8 * time.Second) // twice slave_net_timeout: the replicas have given up on it
				for _, n := range e.repl(c.lab).Nodes {
					if n.Role == "primary" && n.Name != primary {
						t.Errorf("%s promoted while the primary %s was cut off from its replicas only", n.Name, primary)
					}
				}
				// a write the primary takes alone while cut off: heal returns once every replica has it
				// (the labs review's finding 1: they reconnect after the heal, and the primary may
				// answer nothing until TCP gives up on the connections the cut left dead)
				e.sql(c.lab, primary, "CREATE TABLE app.cut (id INT PRIMARY KEY); INSERT INTO app.cut VALUES (1)")
				e.ok("fault", "heal", "--name", c.lab)
				for _, n := range e.repl(c.lab).Nodes {
					if n.Role != "replica" { // a fenced node is outside replication
						continue
					}
					if got := e.sql(c.lab, n.Name, "SELECT COUNT(*) FROM app.cut"); !strings.HasSuffix(got, "\n1") {
						t.Errorf("%s right after the heal: %q, want the row its primary took while cut off", n.Name, got)
					}
				}
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
				// a replica given a transaction of its own and cut loose is fenced by the keeper;
				// rebuild (below) makes it a copy of the primary again, its own transaction kept aside
				fence := func() string {
					for _, n := range e.repl(c.lab).Nodes {
						if n.Role == "replica" {
							e.sql(c.lab, n.Name, "STOP SLAVE; RESET SLAVE ALL; CREATE DATABASE hd_errant")
							e.waitRole(c.lab, n.Name, "fenced", 10*time.Second)
							return n.Name
						}
					}
					return ""
				}
				// one replica left to promote, the other fenced: the drills may have fenced
				// none (one fenced here), one, or both (one of them rebuilt here)
				replica, fenced, unfenced := "", []string{}, 0
				for _, n := range e.repl(c.lab).Nodes {
					switch n.Role {
					case "fenced":
						fenced = append(fenced, n.Name)
					case "replica":
						unfenced++
					}
				}
				switch {
				case len(fenced) == 0:
					replica = fence()
				case unfenced == 0:
					e.ok("rebuild", fenced[0], "--name", c.lab)
					e.waitRole(c.lab, fenced[0], "replica", 30*time.Second)
				}
				// the primary's host crashes while its other replica is fenced: the one replica left is
				// promoted with no replica to acknowledge its commits, so it must not hold each one for
				// the ack timeout (10 s) before writing without (16 s of gap when it did)
				var res autoResult
				primary, res = e.failover("failover", c.lab, primary, "--crash")
				if res.Gap.Seconds > 10 {
					t.Errorf("semi-sync failover with the other replica fenced: writes stopped for %.1fs (the new primary waited for acknowledgements no replica could give)", res.Gap.Seconds)
				}
				if replica == "" {
					replica = fence()
				}
				if r := e.run("rebuild", primary, "--name", c.lab); r.code != 2 || !strings.Contains(r.stderr, "is the primary") {
					t.Errorf("rebuild of the primary: exit %d\n%s", r.code, r.stderr)
				}
				rebuildFenced := func() {
					for _, n := range e.repl(c.lab).Nodes {
						if n.Role == "fenced" {
							e.ok("rebuild", n.Name, "--name", c.lab)
						}
					}
				}
				rebuildFenced()
				if replica == "" {
					// the drills fenced both replicas (the crashed primary kept transactions its
					// successor never received): now that they are rebuilt, one is given its own
					replica = fence()
					if replica == "" {
						t.Fatalf("no replica to give a transaction of its own: %+v", e.repl(c.lab).Nodes)
					}
					rebuildFenced()
				}
				for _, n := range e.repl(c.lab).Nodes {
					if n.Name != primary && (n.Role != "replica" || len(n.Replication) == 0 || n.Replication[0].IO != "Yes" || n.Replication[0].SQL != "Yes") {
						t.Errorf("after rebuild %s is %s: %+v", n.Name, n.Role, n.Replication)
					}
				}
				if got := e.sql(c.lab, replica, "SHOW DATABASES LIKE 'hd_errant'"); got != "" {
					t.Errorf("the rebuilt %s still has its own transaction: %q", replica, got)
				}
				e.sql(c.lab, "lb", "CREATE TABLE app.after_rebuild (id INT PRIMARY KEY); INSERT INTO app.after_rebuild VALUES (1)")
				e.waitRow(c.lab, replica, "SELECT COUNT(*) FROM app.after_rebuild", "1", 10*time.Second)

				// a seeded chaos drill on semi-sync with failover: auto: the
				// primary cut off from the rest (seed 30's first step), then a
				// pause and a kill, run to a verdict
				r := e.runDrill("drill", "chaos", "--name", c.lab, "--seed", "30", "--duration", "6s", "--hold", "1500ms", "--interval", "1s",
					"--faults", "kill,pause,partition-primary", "--rate", "20", "--before", "1s", "--after", "1s", "-o", "json")
				var ch chaosResult
				if err := json.Unmarshal([]byte(r.stdout), &ch); err != nil || (r.code != 0 && r.code != 1) || ch.Verdict == "" || len(ch.Applied) == 0 || ch.Schedule.Seed != 30 {
					t.Errorf("a chaos drill on semi-sync with failover: auto: exit %d %v\n%s%s", r.code, err, r.stdout, r.stderr)
				}
				t.Logf("chaos on semi-sync, failover auto: %s, %d steps applied", ch.Verdict, len(ch.Applied))
			}
			e.ok("down", "--name", c.lab)
		})
	}
	e.assertNoLeftovers()
}

// failover drills a failover of the primary old (scenario failover: killed;
// partition: cut off) and checks what followed;
// it returns the new primary.
func (e *env) failover(scenario, lab, old string, extra ...string) (string, autoResult) {
	t := e.t
	t.Helper()
	r := e.run(append([]string{"drill", scenario, "--name", lab, "--rate", "100", "--before", "1s", "--after", "1s", "-o", "json"}, extra...)...)
	var res autoResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("drill: exit %d: %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	t.Logf("%s: %s %v, gap %.2fs, writes back %v, whole after %v, %d acked, %d lost, fenced %v", lab, scenario, res.Targets, res.Gap.Seconds,
		deref(res.WritesBackS), deref(res.SyncedS), res.WritesAcked, res.LostCount, res.Fenced)
	if len(res.Targets) != 1 || res.Targets[0] != old || res.WritesBackS == nil || res.SyncedS == nil || res.WritesAcked == 0 || res.Reformed == nil {
		t.Fatalf("drill result: %+v\n%s", res, r.stderr)
	}
	limit := 10.0
	if slices.Contains(extra, "--crash") || scenario != "failover" {
		limit = 20 // a paused primary is failed over once the replicas give up on it (slave_net_timeout, 4 s)
	}
	if res.Gap.Seconds > limit {
		t.Errorf("writes stopped for %.1fs", res.Gap.Seconds)
	}
	st := e.repl(lab)
	primary := ""
	for _, n := range st.Nodes {
		switch {
		case n.Role == "primary":
			primary = n.Name
		case res.Fenced[n.Name] != "": // the old primary, or one fenced by an earlier drill
			if n.Role != "fenced" {
				t.Errorf("%s fenced in the drill, role %s now", n.Name, n.Role)
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
	return primary, res
}

// waitRole waits until status gives node the role want.
func (e *env) waitRole(lab, node, want string, limit time.Duration) {
	e.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		for _, n := range e.repl(lab).Nodes {
			if n.Name == node && n.Role == want {
				return
			}
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%s not %s within %v: %+v", node, want, limit, e.repl(lab).Nodes)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
