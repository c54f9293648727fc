package integration

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFaults: each fault verb changes what status and the agent report,
// heal restores all of it; any fault runs as a drill (drill fault -- …);
// bad input and network faults without namespaces are refused (exit 2)
// and change nothing.
func TestFaults(t *testing.T) {
	t.Parallel() // it mostly waits, each timing bound loose enough for a busy machine: see active
	e := newEnv(t)
	e.ok("up", "--name", "itflt")
	addr := map[string]string{}
	for _, n := range e.status("itflt").Nodes {
		addr[n.Name] = n.Address
	}
	get := agentClient("hd-itflt-client")
	waitState := func(node, want string, limit time.Duration) {
		t.Helper()
		for end := time.Now().Add(limit); ; time.Sleep(100 * time.Millisecond) {
			for _, n := range e.status("itflt").Nodes {
				if n.Name == node && n.State == want {
					return
				}
			}
			if time.Now().After(end) {
				t.Fatalf("%s never became %s: %s", node, want, e.states("itflt"))
			}
		}
	}
	waitAgent := func(node string, want int) {
		t.Helper()
		var code int
		for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
			if code, _ = get("http://" + addr[node] + ":9200/"); code == want {
				return
			}
		}
		t.Errorf("%s agent: %d, want %d", node, code, want)
	}

	for _, bad := range [][]string{{"kill", "nosuch"}, {"kill"}, {"partition"}, {"partition", "db1", "--from", "db1"},
		{"resume", "db1"}, {"partition", "nowhere"}} {
		if r := e.run(append([]string{"fault"}, append(bad, "--name", "itflt")...)...); r.code != 2 {
			t.Errorf("fault %v: exit %d, want 2\n%s", bad, r.code, r.stderr)
		}
	}
	if got := e.states("itflt"); got != "db1=Synced db2=Synced db3=Synced" {
		t.Fatalf("refused faults changed the lab: %s", got)
	}

	e.ok("fault", "pause", "db2", "--name", "itflt")
	waitState("db2", "paused", 5*time.Second)
	waitAgent("db2", 503)
	e.ok("fault", "resume", "db2", "--name", "itflt")
	waitState("db2", "Synced", 10*time.Second)
	waitAgent("db2", 200)

	e.ok("fault", "partition", "db3", "--name", "itflt")
	for end := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if s := e.states("itflt"); !strings.Contains(s, "db3=Synced") {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("db3 still Synced while partitioned: %s", e.states("itflt"))
		}
	}
	if code, _ := get("http://" + addr["db3"] + ":9200/"); code != 0 {
		t.Errorf("the client reaches db3's agent through the partition (%d)", code)
	}
	e.ok("fault", "kill", "db1", "--name", "itflt")
	waitState("db1", "down", 5*time.Second)

	e.ok("fault", "heal", "--name", "itflt")
	for _, n := range []string{"db1", "db2", "db3"} {
		waitState(n, "Synced", 30*time.Second)
		waitAgent(n, 200)
		if got := e.sql("itflt", n, "SHOW STATUS LIKE 'wsrep_cluster_size'"); !strings.HasSuffix(got, "3") {
			t.Errorf("%s after heal: %s", n, got)
		}
	}
	// one way: the client's packets no longer reach db3, db3's still reach the client
	st := e.status("itflt")
	ns := map[string]string{"client": st.Client.Netns}
	for _, n := range st.Nodes {
		ns[n.Name] = n.Netns
	}
	var cs struct {
		Client struct{ Address string } `json:"client"`
	}
	e.statusInto("itflt", &cs)
	clientAddr := cs.Client.Address
	for _, bad := range [][]string{{"partition", "--to", "db3"}, {"partition", "db1", "--from", "client", "--to", "db3"}} {
		if r := e.run(append([]string{"fault"}, append(bad, "--name", "itflt")...)...); r.code != 2 {
			t.Errorf("fault %v: exit %d, want 2\n%s", bad, r.code, r.stderr)
		}
	}
	e.ok("fault", "partition", "--from", "client", "--to", "db3", "--name", "itflt")
	if out := e.ok("status", "--name", "itflt").stdout; !strings.Contains(out, "faults since the last heal: partition db3 one way from client") {
		t.Errorf("status does not list the one-way cut:\n%s", out)
	}
	if datagrams(t, ns["client"], ns["db3"], addr["db3"], 5) > 0 {
		t.Error("a datagram from the client reached db3 through a one-way cut from the client to db3")
	}
	if datagrams(t, ns["db3"], ns["client"], clientAddr, 5) == 0 {
		t.Error("a datagram from db3 did not reach the client: the cut from the client to db3 is not one way")
	}
	// rules gone without a heal (a drill killed after lifting its cut, a
	// hand's iptables -F): status says the cut is over, not in force
	if out, err := exec.Command("ip", "netns", "exec", ns["db3"], "iptables", "-w", "-F", "HDFAULT").CombinedOutput(); err != nil {
		t.Fatalf("iptables -F: %v %s", err, out)
	}
	if out := e.ok("status", "--name", "itflt").stdout; !strings.Contains(out, "faults since the last heal, over already: partition db3 one way from client") ||
		strings.Contains(out, "faults since the last heal: partition") {
		t.Errorf("status lists a lifted cut as in force:\n%s", out)
	}
	e.ok("fault", "heal", "--name", "itflt")
	if datagrams(t, ns["client"], ns["db3"], addr["db3"], 5) == 0 {
		t.Error("after heal, a datagram from the client does not reach db3")
	}
	// a clock 60 s ahead on db2 alone, live; heal takes it back
	skew := func(node string) int64 {
		t.Helper()
		var a, b int64
		fmt.Sscan(lastLine(e.sql("itflt", node, "SELECT UNIX_TIMESTAMP()")), &a)
		fmt.Sscan(lastLine(e.sql("itflt", "db1", "SELECT UNIX_TIMESTAMP()")), &b)
		return a - b
	}
	if r := e.run("fault", "clock", "db2", "-30s", "--name", "itflt"); r.code != 2 || !strings.Contains(r.stderr, "goes after --") {
		t.Errorf("a negative offset before --: exit %d\n%s", r.code, r.stderr)
	}
	e.ok("fault", "clock", "db2", "+60s", "--name", "itflt")
	var d int64
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(300 * time.Millisecond) {
		if d = skew("db2"); d >= 58 && d <= 62 {
			break
		}
	}
	if d < 58 || d > 62 {
		t.Errorf("db2's clock is %d s from db1's, want 60", d)
	}
	if d := skew("db3"); d < -2 || d > 2 {
		t.Errorf("db3's clock moved too: %d s", d)
	}
	// what the moved clock changes beyond NOW(): a transaction written
	// through db2 carries db2's time in the binary log of every node, db1's
	// included (its GTID event's time is the origin's)
	gtid := lastLine(e.sql("itflt", "db2", "CREATE DATABASE IF NOT EXISTS clk; CREATE TABLE IF NOT EXISTS clk.t (id INT PRIMARY KEY); INSERT INTO clk.t VALUES (1); SELECT @@last_gtid"))
	if at, ok := gtidTime(t, lastLine(e.sql("itflt", "db1", "SELECT @@datadir")), gtid); !ok {
		t.Errorf("GTID %s is not in db1's binary log", gtid)
	} else if ahead := time.Until(at); ahead < 55*time.Second || ahead > 65*time.Second {
		t.Errorf("db2's transaction %s is in db1's binary log at %v, %v from now: want db2's clock, 60 s ahead", gtid, at, ahead)
	}
	var cl struct {
		Nodes []struct{ Name, Clock string }
	}
	e.statusInto("itflt", &cl)
	if cl.Nodes[1].Clock != "+1m0s" {
		t.Errorf("status: %+v", cl.Nodes)
	}
	// a strobe: db2's clock 20 s back and at the real time in turn, every
	// 2 s (the keeper turns it; the server reads it about every 2 s);
	// heal stops it at the real time
	e.ok("fault", "clock", "db2", "--strobe", "2s", "--name", "itflt", "--", "-20s")
	seen := map[int64]bool{}
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end) && len(seen) < 2; time.Sleep(200 * time.Millisecond) {
		switch d := skew("db2"); {
		case d >= -22 && d <= -18:
			seen[-20] = true
		case d >= -2 && d <= 2:
			seen[0] = true
		}
	}
	if !seen[-20] || !seen[0] {
		t.Errorf("db2's clock under a 2 s strobe to -20 s was seen at %v (want both -20 and 0)", seen)
	}
	e.statusInto("itflt", &cl)
	if cl.Nodes[1].Clock != "-20s, strobing to the real time and back every 2s" {
		t.Errorf("status under the strobe: %+v", cl.Nodes)
	}
	e.ok("fault", "heal", "--name", "itflt")
	for range 4 { // the strobe stopped: the real time, and it stays
		for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(300 * time.Millisecond) {
			if d = skew("db2"); d >= -2 && d <= 2 {
				break
			}
		}
		if d < -2 || d > 2 {
			t.Errorf("after heal db2's clock is %d s from db1's", d)
		}
		time.Sleep(500 * time.Millisecond)
	}
	log := e.ok("fault", "log", "--name", "itflt").stdout
	for _, f := range []string{"pause db2", "resume db2", "partition db3", "kill db1", "partition db3 one way", "clock db2 +1m0s", "clock db2 -20s, strobing", "heal"} {
		if !strings.Contains(log, f) {
			t.Errorf("fault log lacks %q:\n%s", f, log)
		}
	}
	// any fault as a drill: applied under traffic, held, healed, judged
	runsBefore := e.ok("runs", "list", "--name", "itflt").stdout
	for _, bad := range [][]string{{"disk"}, {"heal"}, {"bogus", "db1"}, {}, {"kill", "db9"}, {"delay", "east-west", "5ms"}} {
		if r := e.run(append([]string{"drill", "fault", "--name", "itflt", "--"}, bad...)...); r.code != 2 || !strings.Contains(r.stderr, "FAULT:") && !strings.Contains(r.stderr, "db9") && !strings.Contains(r.stderr, "link") {
			t.Errorf("drill fault -- %v: exit %d\n%s", bad, r.code, r.stderr)
		}
	}
	if runs := e.ok("runs", "list", "--name", "itflt").stdout; runs != runsBefore {
		t.Errorf("a refused fault drill left a run:\n%s", runs)
	}
	var fd struct {
		Fault   string                  `json:"fault"`
		Passed  bool                    `json:"passed"`
		Acked   int                     `json:"writes_acked"`
		Phases  []struct{ Name string } `json:"phases"`
		Verdict string                  `json:"verdict"`
	}
	r := e.runDrill("drill", "fault", "--name", "itflt", "--hold", "2s", "--before", "1s", "--after", "1s", "-o", "json", "--", "clock", "db2", "+30s")
	if err := json.Unmarshal([]byte(r.stdout), &fd); err != nil || r.code != 0 || !fd.Passed || fd.Fault != "clock db2 +30s" || fd.Acked == 0 || len(fd.Phases) != 3 {
		t.Errorf("drill fault -- clock db2 +30s: exit %d %v %+v\n%s", r.code, err, fd, r.stderr)
	}
	if log := e.ok("fault", "log", "--name", "itflt").stdout; !strings.Contains(log, "clock db2 +30s") {
		t.Errorf("the drill's fault is not in the fault log:\n%s", log)
	}
	// the application's connections killed: a session of the application's
	// account held open on db1 loses its connection at once (error 2013);
	// a name that is no node is refused first
	if r := e.run("fault", "disconnect", "db1", "db9", "--name", "itflt"); r.code != 2 || !strings.Contains(r.stderr, `NODE: "db9" is not a node`) {
		t.Errorf("fault disconnect db1 db9: exit %d\n%s", r.code, r.stderr)
	}
	held, heldOut := e.start("sql", "db1", "--app", "--name", "itflt", "-e", "SELECT SLEEP(120)")
	for end := time.Now().Add(30 * time.Second); !strings.Contains(e.sql("itflt", "db1", "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = 'app' AND INFO LIKE 'SELECT SLEEP(120)%'"), "1"); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the application's session never showed on db1:\n%s", heldOut.String())
		}
	}
	r = e.run("fault", "disconnect", "db1", "--name", "itflt")
	if r.code != 0 || !regexp.MustCompile(`db1: [1-9][0-9,]* connections? of app killed`).MatchString(r.stderr) {
		t.Errorf("fault disconnect db1: exit %d\n%s", r.code, r.stderr)
	}
	gone := make(chan int, 1)
	go func() { gone <- exitOf(held) }()
	select {
	case code := <-gone:
		if code == 0 || !strings.Contains(heldOut.String(), "2013") {
			t.Errorf("the held session after disconnect: exit %d\n%s", code, heldOut.String())
		}
	case <-time.After(20 * time.Second):
		_ = syscall.Kill(-held.Process.Pid, syscall.SIGKILL)
		<-gone
		t.Errorf("the held session outlived disconnect by 20 s:\n%s", heldOut.String())
	}
	// under traffic (each of the drill's operations on its own connection:
	// those in flight are cut), applied, logged, nothing acknowledged lost
	r = e.runDrill("drill", "fault", "--name", "itflt", "--hold", "1s", "--before", "1s", "--after", "1s", "-o", "json", "--", "disconnect", "db1", "db2", "db3")
	fd.Fault, fd.Passed, fd.Acked = "", false, 0
	if err := json.Unmarshal([]byte(r.stdout), &fd); err != nil || r.code != 0 || !fd.Passed || fd.Fault != "disconnect db1 db2 db3" || fd.Acked == 0 {
		t.Errorf("drill fault -- disconnect: exit %d %v %+v\n%s", r.code, err, fd, r.stderr)
	}
	if log := e.ok("fault", "log", "--name", "itflt").stdout; !strings.Contains(log, "disconnect db1,db2,db3") {
		t.Errorf("the drill's disconnect is not in the fault log:\n%s", log)
	}
	e.ok("down", "--name", "itflt")

	// Without namespaces, network faults are refused.
	e.vars = append(e.vars, "HADRILL_ROOTLESS=1")
	e.ok("up", "--name", "itfltrl", "--preset", "async")
	if r := e.run("fault", "partition", "db1", "--name", "itfltrl"); r.code != 2 || !strings.Contains(r.stderr, "namespaces") {
		t.Errorf("rootless partition: exit %d\n%s", r.code, r.stderr)
	}
	e.ok("down", "--name", "itfltrl")
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// gtidTime is the time of GTID's event in the newest binary log of the
// datadir, as mariadb-binlog prints it (the writing server's clock, to
// the second, in this machine's time zone).
func gtidTime(t *testing.T, datadir, gtid string) (time.Time, bool) {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(datadir, "binlog.[0-9]*"))
	if len(logs) == 0 {
		t.Fatalf("no binary log in %s", datadir)
	}
	out, err := exec.Command("mariadb-binlog", "--base64-output=never", logs[len(logs)-1]).Output()
	if err != nil {
		t.Fatalf("mariadb-binlog %s: %v", logs[len(logs)-1], err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(strings.TrimPrefix(line, "#")); strings.HasPrefix(line, "#") && len(f) > 2 && strings.Contains(line, "GTID "+gtid+" ") {
			at, err := time.ParseInLocation("060102 15:04:05", f[0]+" "+f[1], time.Local) // the hour may be one digit
			return at, err == nil
		}
	}
	return time.Time{}, false
}
