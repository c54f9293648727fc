package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/lb/haproxy"
)

type drillResult struct {
	RunID          string   `json:"run_id"`
	Scenario       string   `json:"scenario"`
	Profile        string   `json:"profile"`
	Targets        []string `json:"targets"`
	WritesAcked    int      `json:"writes_acked"`
	WritesBackS    *float64 `json:"writes_back_s"`
	SyncedS        *float64 `json:"synced_s"`
	LostCount      int      `json:"lost_count"`
	ChecksumsAgree bool     `json:"checksums_agree"`
	Passed         bool     `json:"passed"`
	Gap            struct {
		Seconds float64 `json:"seconds"`
	} `json:"client_gap"`
	Balancer *struct {
		Events []struct{ What, Server, Proxy string }
	} `json:"load_balancer"`
	Consistency *struct {
		Valid          bool
		OK, Fail, Info int
		Anomalies      []struct{ Type string }
	} `json:"consistency"`
}

// TestDrills: the durable profile loses no acknowledged write in any drill;
// a drained writer is stopped without the clients seeing more than a short
// switch; a writer that joins again by a full state transfer gets no
// writes while it joins, nor does its donor for long;
// a full outage takes writes back (within 30 s here, beside other tests: the
// 15 s target is make bench's, alone; once this took 19 s); the audit of a stored drill
// fails once an acknowledged row is deleted behind the tool's back, and says
// lost once the table is dropped; a drill killed after its fault leaves a
// run marked unfinished that can be audited; bad drill input is refused.
func TestDrills(t *testing.T) {
	t.Parallel() // it mostly waits, each timing bound loose enough for a busy machine: see active
	e := newEnv(t)
	spec := e.writeSpec("itdrl", `name: itdrl
clusters:
  - name: db
    nodes: 3
    profile: durable
    failure_detection: fast
load_balancers:
  - name: lb
    cluster: db
client:
  name: client
`)
	e.ok("up", "-f", spec)
	for _, bad := range [][]string{{"failover", "nosuch"}, {"failover", "db1", "db2"}, {"full-outage", "db1"}, {"failover", "--rate", "0"},
		{"partition", "nowhere"}, {"explode"}, {"audit", "nosuch"}, {"failover", "--workload", "banking"}, {"failover", "--workload", "append", "--model", "acid"}} {
		if r := e.run(append([]string{"drill"}, append(bad, "--name", "itdrl")...)...); r.code != 2 {
			t.Errorf("drill %v: exit %d, want 2\n%s", bad, r.code, r.stderr)
		}
	}
	var last drillResult
	// the full outage with the append workload: a durable cluster loses no append either
	for _, d := range [][]string{{"failover"}, {"partition"}, {"rolling-restart"}, {"drain"}, {"resync"}, {"full-outage", "--workload", "append", "--model", "read-committed"}} {
		args := append([]string{"drill"}, append(d, "--name", "itdrl", "--before", "1s", "--after", "1s", "-o", "json")...)
		r := e.run(args...)
		if d[0] == "resync" && r.code == 1 && strings.Contains(r.stdout, "exited during start-up") {
			// on a computer busy with two other tests the donor once left
			// the primary component mid-transfer (its group's checks
			// late: "last inactive check more than PT0.3S ago"), and the
			// joiner's tries ran out; the lab is made whole and the drill
			// run once more: a second failure fails the test
			t.Logf("resync: the joiner's state transfer failed, tried again once the lab was whole:\n%s", r.stdout)
			e.ok("up", "-f", spec)
			r = e.run(args...)
		}
		if r.code != 0 {
			t.Fatalf("hadrill %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
		var res drillResult
		if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
			t.Fatalf("drill %v: %v\n%s", d, err, r.stdout)
		}
		t.Logf("drill %s (%s): gap %.2fs, writes back %v, synced %v, %d acked, %d lost", res.Scenario, res.Profile, res.Gap.Seconds,
			deref(res.WritesBackS), deref(res.SyncedS), res.WritesAcked, res.LostCount)
		if !res.Passed || res.LostCount != 0 || !res.ChecksumsAgree || res.WritesAcked == 0 || res.SyncedS == nil {
			t.Errorf("drill %v: %+v", d, res)
		}
		if res.Scenario == "failover" && (res.Balancer == nil || len(res.Balancer.Events) == 0 || res.Balancer.Events[0].What != "down") {
			t.Errorf("failover: what the load balancer did is not in the drill's result (a writer marked down first): %+v", res.Balancer)
		}
		// a drain's gap is the load balancer's switch (make bench: 0.31 s
		// median); that it moved off the writer before the stop is the
		// drill's own check (it fails otherwise). The bound is a busy
		// machine's: three tests at once once made it 4.21 s
		if res.Scenario == "drain" && res.Gap.Seconds > 10 {
			t.Errorf("a drained writer stopped for maintenance: writes stopped for %.2f s (the load balancer had moved off it)", res.Gap.Seconds)
		}
		if res.Scenario == "full-outage" && (res.WritesBackS == nil || *res.WritesBackS > 30) {
			t.Errorf("full outage: writes back after %v s, want within 30 (a busy machine's bound)", deref(res.WritesBackS))
		}
		if res.Scenario == "full-outage" {
			if c := res.Consistency; c == nil || c.OK == 0 || !c.Valid {
				t.Errorf("full outage with the append workload: %+v", c)
			} else {
				t.Logf("full outage, append workload: %d committed, %d failed, %d unknown, anomalies %+v", c.OK, c.Fail, c.Info, c.Anomalies)
			}
		}
		last = res
	}
	if got := e.states("itdrl"); got != "db1=Synced db2=Synced db3=Synced" {
		t.Fatalf("after the drills: %s", got)
	}
	// what the load balancer logged of the drills, as a failed benchmark step reads it: writers marked down and taken back
	proxyLog, err := os.ReadFile(filepath.Join(e.home, "labs", "itdrl", "lb", "lb", "proxy.log"))
	var down, up int
	for _, ev := range haproxy.Events(proxyLog) {
		switch {
		case ev.Proxy == "writes" && ev.What == "down" && ev.Reason != "" && ev.Server != "":
			down++
		case ev.Proxy == "writes" && ev.What == "up":
			up++
		}
	}
	if err != nil || down == 0 || up == 0 {
		t.Errorf("the load balancer's log after the drills: %d writers marked down, %d taken back (%v)\n%s", down, up, err, proxyLog)
	}
	runs := e.ok("runs", "list", "--name", "itdrl").stdout
	if !strings.Contains(runs, last.RunID) {
		t.Errorf("drill run %s not in the run store:\n%s", last.RunID, runs)
	}

	// The audit is a check that can fail.
	e.ok("drill", "audit", last.RunID, "--name", "itdrl")
	e.sql("itdrl", "db2", "DELETE FROM app.hd_drill WHERE run = '"+last.RunID+"' ORDER BY id LIMIT 1")
	if r := e.run("drill", "audit", last.RunID, "--name", "itdrl"); r.code != 1 || !strings.Contains(r.stdout, "db2: MISSING 1 of") {
		t.Errorf("audit after deleting an acknowledged row: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A drill killed (kill -9) after its fault leaves a run marked
	// unfinished, with what it acknowledged until then: audited once the
	// node it killed is back
	c, _ := e.startDrill("(kill -9)", "drill", "failover", "--name", "itdrl", "--before", "1s")
	time.Sleep(700 * time.Millisecond) // its operations are written every half second
	_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
	_ = c.Wait()
	var killed storedDrill
	id := e.latestRun(&killed)
	raw, _ := os.ReadFile(filepath.Join(e.home, "runs", id, "run.json"))
	if !killed.Interrupted || killed.Results.Verdict != "interrupted" || !strings.Contains(string(raw), "the drill did not finish") {
		t.Errorf("the run of a killed drill: %s", raw)
	}
	e.ok("fault", "heal", "--name", "itdrl")
	e.waitWhole("itdrl", "db1=Synced db2=Synced db3=Synced", time.Minute)
	if r := e.run("drill", "audit", id, "--name", "itdrl"); r.code != 0 || !strings.Contains(r.stdout, "verified") || strings.Contains(r.stdout, " 0 acknowledged writes") {
		t.Errorf("audit of the killed drill's run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// a dropped table lost every acknowledged write in it: lost, not unverified
	e.sql("itdrl", "db1", "DROP TABLE app.hd_drill")
	if r := e.run("drill", "audit", last.RunID, "--name", "itdrl", "-o", "json"); r.code != 1 || !strings.Contains(r.stdout, `"verdict": "lost"`) ||
		!strings.Contains(r.stdout, "does not exist (error 1146)") {
		t.Errorf("audit after DROP TABLE: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	report := e.ok("report", last.RunID, "-o", e.home+"/drill.html")
	if !strings.Contains(report.stdout+report.stderr, "report of 1 run(s)") || strings.Contains(report.stdout+report.stderr, " 0 charts") {
		t.Errorf("report of a drill: %s%s", report.stdout, report.stderr)
	}
	if b, err := os.ReadFile(e.home + "/drill.html"); err != nil {
		t.Error(err)
	} else if html := string(b); !strings.Contains(html, `<p class="finding">Drill `) || !strings.Contains(html, "acknowledged writes lost") ||
		strings.Index(html, `class="finding"`) > strings.Index(html, "<table") {
		t.Errorf("the drill's report does not open with its verdict")
	}
	e.ok("down", "--name", "itdrl")
	e.assertNoLeftovers()
}

func deref(v *float64) any {
	if v == nil {
		return "never"
	}
	return *v
}
