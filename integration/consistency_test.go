package integration

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type consistencyOut struct {
	RunID string `json:"run_id"`
	Check struct {
		Valid     bool     `json:"valid"`
		OK        int      `json:"ok"`
		Fail      int      `json:"fail"`
		Forbidden []string `json:"forbidden"`
		Anomalies []struct {
			Type  string `json:"type"`
			Count int    `json:"count"`
		} `json:"anomalies"`
	} `json:"check"`
}

func (c consistencyOut) count(match func(string) bool) int {
	n := 0
	for _, a := range c.Check.Anomalies {
		if match(a.Type) {
			n += a.Count
		}
	}
	return n
}

// TestConsistency: list-append transactions on every node of galera3 are
// recorded and checked; the stored history checks the same again with
// hadrill check; the exit status follows the verdict; reads that wait for
// causality (wsrep_sync_wait=1) show fewer stale reads (G-single through
// real time) than reads that do not (measured in 15 s: 1 against 166;
// InnoDB's repeatable read leaves write skew either way); bad input is
// refused.
func TestConsistency(t *testing.T) {
	t.Parallel() // no timing bound a test beside it could break
	e := newEnv(t)
	e.ok("up", "--name", "itcons", "--preset", "galera3")
	run := func(args ...string) (consistencyOut, int) {
		t.Helper()
		r := e.run(append([]string{"bench", "consistency", "--name", "itcons", "-o", "json"}, args...)...)
		var out consistencyOut
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || (r.code != 0 && r.code != 5) {
			t.Fatalf("bench consistency %v: exit %d %v\n%s%s", args, r.code, err, r.stdout, r.stderr)
		}
		if (r.code == 5) == out.Check.Valid {
			t.Errorf("exit %d for a history valid=%v", r.code, out.Check.Valid)
		}
		return out, r.code
	}
	stale := func(s string) bool { return s == "G-single-realtime" }
	plain, _ := run("--time", "10", "--sync-wait", "0")
	if plain.Check.OK < 100 {
		t.Errorf("only %d transactions committed in 10 s", plain.Check.OK)
	}
	history := filepath.Join(e.home, "runs", plain.RunID, "history.jsonl")
	r := e.run("check", history, "-o", "json")
	var again struct {
		Valid     bool
		Forbidden []string
	}
	if err := json.Unmarshal([]byte(r.stdout), &again); err != nil || again.Valid != plain.Check.Valid || strings.Join(again.Forbidden, ",") != strings.Join(plain.Check.Forbidden, ",") {
		t.Errorf("the stored history checked again: %v %+v, want %+v", err, again, plain.Check)
	}
	causal, _ := run("--time", "10", "--sync-wait", "1")
	if n, m := causal.count(stale), plain.count(stale); n >= m {
		t.Errorf("wsrep_sync_wait=1: %d stale reads, not fewer than wsrep_sync_wait=0's %d", n, m)
	}
	t.Logf("wsrep_sync_wait=0: %d committed, anomalies %+v; =1: %d committed, anomalies %+v",
		plain.Check.OK, plain.Check.Anomalies, causal.Check.OK, causal.Check.Anomalies)
	// Bank transfers that read both balances and write new ones: InnoDB's
	// repeatable read lets two of them write from the same balance (a lost
	// update), so money is made or destroyed and reads of every balance show
	// it; with innodb_snapshot_isolation=ON the second writer is refused
	// (1020) and every total holds.
	bank, code := run("--workload", "bank", "--keys", "5", "--time", "6")
	wrong := func(s string) bool { return s == "wrong-total" }
	if code != 5 || bank.count(wrong) == 0 {
		t.Errorf("bank under repeatable read: exit %d, anomalies %+v (want wrong totals)", code, bank.Check.Anomalies)
	}
	if r := e.run("check", filepath.Join(e.home, "runs", bank.RunID, "history.jsonl")); r.code != 5 || !strings.Contains(r.stdout, "wrong-total") || !strings.Contains(r.stdout, "opened with 500") {
		t.Errorf("the bank history checked again: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, n := range []string{"db1", "db2", "db3"} {
		e.sql("itcons", n, "SET GLOBAL innodb_snapshot_isolation = ON")
	}
	snap, code := run("--workload", "bank", "--keys", "5", "--time", "6")
	if code != 0 || !snap.Check.Valid || snap.Check.OK < 50 {
		t.Errorf("bank with snapshot isolation: exit %d, %d committed, anomalies %+v", code, snap.Check.OK, snap.Check.Anomalies)
	}
	t.Logf("bank: repeatable read %d committed, anomalies %+v; snapshot isolation %d committed, %d refused", bank.Check.OK, bank.Check.Anomalies, snap.Check.OK, snap.Check.Fail)
	for _, bad := range [][]string{{"--time", "0"}, {"--clients", "0"}, {"--model", "acid"}, {"--target", "db9"}, {"--sync-wait", "99"}, {"--workload", "ledger"}, {"--keys", "1", "--workload", "bank"}} {
		if r := e.run(append([]string{"bench", "consistency", "--name", "itcons"}, bad...)...); r.code != 2 || !strings.Contains(r.stderr, bad[0]) && !strings.Contains(r.stderr, "db9") {
			t.Errorf("bench consistency %v: exit %d\n%s", bad, r.code, r.stderr)
		}
	}
	e.ok("down", "--name", "itcons")
}

// TestReadsOnReplicas: an application's read/write split on an async
// cluster: writes through the load balancer (the primary), read-only
// transactions on the replicas. The check says per node how many reads
// were stale and by how much: the replicas' some (measured in 10 s here:
// 21 % and 23 %, 50 ms at p99), the primary's none; the stale reads are
// the cycles through real time and the clients' own order that only
// strict serializability forbids. The balanced load balancer's read port
// is a read target too; a partition drill with reads on the replicas
// (the set workload: adds and whole-set reads) shows the cut-off replica's
// reads falling behind; the set workload says every element stable, some
// missed for a while by the replicas' reads; a read target that
// does not exist is refused before anything runs.
func TestReadsOnReplicas(t *testing.T) {
	t.Parallel() // no timing bound a test beside it could break
	e := newEnv(t)
	spec := e.writeSpec("async.yaml", "clusters: [{name: db, kind: primary, nodes: 3, mode: async, failover: auto}]\nload_balancers: [{name: lb, cluster: db, mode: balanced}]\n")
	e.ok("up", "--name", "itreads", "-f", spec)
	type reads struct {
		Node      string  `json:"node"`
		Reads     int     `json:"reads"`
		Stale     int     `json:"stale"`
		BehindP99 float64 `json:"behind_p99_s"`
	}
	var out struct {
		Params struct {
			ReadTargets []string `json:"read_targets"`
		} `json:"params"`
		Reads struct {
			Reads []reads `json:"reads"`
		} `json:"check"`
	}
	var found consistencyOut
	r := e.run("bench", "consistency", "--name", "itreads", "--target", "lb", "--read-target", "replicas", "--time", "8", "--model", "snapshot-isolation", "-o", "json")
	if err := errors.Join(json.Unmarshal([]byte(r.stdout), &out), json.Unmarshal([]byte(r.stdout), &found)); err != nil || (r.code != 0 && r.code != 5) {
		t.Fatalf("reads on replicas: exit %d %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	by := map[string]reads{}
	for _, f := range out.Reads.Reads {
		by[f.Node] = f
	}
	t.Logf("read targets %v; reads %+v; anomalies %+v", out.Params.ReadTargets, out.Reads.Reads, found.Check.Anomalies)
	if strings.Join(out.Params.ReadTargets, ",") != "db2,db3" {
		t.Errorf("read targets %v, want the replicas db2,db3", out.Params.ReadTargets)
	}
	if p := by["lb"]; p.Reads == 0 || p.Stale != 0 {
		t.Errorf("the primary's reads (through lb): %+v, want some and none stale", p)
	}
	stale := by["db2"].Stale + by["db3"].Stale
	if by["db2"].Reads == 0 || by["db3"].Reads == 0 || stale == 0 || by[""].Stale != stale {
		t.Errorf("the replicas' reads: %+v, %+v (overall %+v), want reads on each and some stale", by["db2"], by["db3"], by[""])
	}
	if n := found.count(func(s string) bool { return s == "G-single-realtime" || s == "G-single-process" }); n == 0 {
		t.Errorf("no stale read named as a cycle through real time or a client's order: %+v", found.Check.Anomalies)
	}
	// the balanced load balancer's read port
	r = e.run("bench", "consistency", "--name", "itreads", "--target", "lb", "--read-target", "lb-balanced", "--time", "3", "--model", "read-committed", "-o", "json")
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.code != 0 || strings.Join(out.Params.ReadTargets, ",") != "lb:reads" {
		t.Errorf("reads through the balanced port: exit %d %v %v\n%s", r.code, err, out.Params.ReadTargets, r.stderr)
	}
	// the set workload (Jepsen's set-full): every element acknowledged is
	// stable in the end, nothing lost
	var set struct {
		Check struct {
			Valid bool `json:"valid"`
			Own   struct {
				Of     string `json:"of"`
				Values struct {
					Acknowledged int     `json:"acknowledged"`
					Known        int     `json:"known"`
					Stable       int     `json:"stable"`
					Stale        int     `json:"stale"`
					Lost         int     `json:"lost"`
					NeverRead    int     `json:"never_read"`
					VisibleMax   float64 `json:"visible_after_max_s"`
				} `json:"values"`
			} `json:"own"`
		} `json:"check"`
	}
	r = e.run("bench", "consistency", "--name", "itreads", "--workload", "set", "--target", "lb", "--read-target", "replicas", "--time", "5", "--model", "serializable", "-o", "json")
	if err := json.Unmarshal([]byte(r.stdout), &set); err != nil || r.code != 0 || !set.Check.Valid {
		t.Fatalf("the set workload: exit %d %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	f := set.Check.Own.Values
	t.Logf("set: %+v", f)
	if f.Acknowledged < 100 || f.Known < f.Acknowledged || f.Stable != f.Known || f.Lost != 0 || f.NeverRead != 0 {
		t.Errorf("the set's elements: %+v; want every known one stable", f)
	}
	// the counter workload (Jepsen's counter): each read bounded by the
	// increments around it; the replicas' reads may be stale, which
	// serializability allows, never above what was invoked, nothing lost
	var counter struct {
		Check struct {
			Valid     bool `json:"valid"`
			Anomalies []struct {
				Type string `json:"type"`
			} `json:"anomalies"`
			Own struct {
				Of     string             `json:"of"`
				Values map[string]float64 `json:"values"`
			} `json:"own"`
		} `json:"check"`
	}
	r = e.run("bench", "consistency", "--name", "itreads", "--workload", "counter", "--keys", "3", "--target", "lb", "--read-target", "replicas", "--time", "5", "--model", "serializable", "-o", "json")
	if err := json.Unmarshal([]byte(r.stdout), &counter); err != nil || r.code != 0 || !counter.Check.Valid {
		t.Fatalf("the counter workload: exit %d %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	c := counter.Check.Own.Values
	t.Logf("counter: %v; anomalies %+v", c, counter.Check.Anomalies)
	if counter.Check.Own.Of != "increments" || c["acknowledged"] < 100 || c["reads"] < 30 || c["lost"] != 0 || c["too_high"] != 0 || c["unread"] != 0 {
		t.Errorf("the counters: %v; want acknowledged increments and reads, none lost or too high, every counter read last", c)
	}

	// under a fault: db3 cut off for 2 s while clients read on it; read
	// committed allows every stale read
	var drill struct {
		Passed      bool `json:"passed"`
		Consistency struct {
			Own struct {
				Values struct {
					Stable     int     `json:"stable"`
					Stale      int     `json:"stale"`
					Lost       int     `json:"lost"`
					VisibleMax float64 `json:"visible_after_max_s"`
				} `json:"values"`
			} `json:"own"`
			Reads []struct {
				Node  string `json:"node"`
				Stale int    `json:"stale"`
			} `json:"reads"`
		} `json:"consistency"`
	}
	partition := func(wl, model string) result {
		t.Helper()
		args := []string{"drill", "partition", "db3", "--name", "itreads", "--workload", wl, "--read-target", "replicas", "--model", model,
			"--hold", "2s", "--before", "2s", "--after", "2s", "--rate", "20", "-o", "json"}
		return e.runDrill(args...)
	}
	r = partition("append", "read-committed")
	if err := json.Unmarshal([]byte(r.stdout), &drill); err != nil || r.code != 0 || !drill.Passed {
		t.Errorf("a partition drill with reads on the replicas: exit %d %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	// how far behind a read can be measured is bounded by its key's life
	// (a key retires after 100 appends, well under a second here), so the
	// cut shows as stale reads on db3, not as their full length
	staleOn := map[string]int{}
	for _, f := range drill.Consistency.Reads {
		staleOn[f.Node] = f.Stale
	}
	if staleOn["db3"] == 0 {
		t.Errorf("db3 cut off for 2 s: no stale read on it: %+v", drill.Consistency.Reads)
	}
	// the set workload through the same fault: nothing lost, every element
	// stable (db3's reads wait out the cut: at the set's pace db3 has
	// caught up by the time they return)
	drill.Consistency.Own.Values.Stable = 0
	r = partition("set", "serializable")
	if err := json.Unmarshal([]byte(r.stdout), &drill); err != nil || r.code != 0 || !drill.Passed || drill.Consistency.Own.Values.Stable == 0 || drill.Consistency.Own.Values.Lost != 0 {
		t.Errorf("a partition drill with the set workload: exit %d %v %+v\n%s", r.code, err, drill.Consistency.Own, r.stderr)
	}
	// the counter workload through the same fault: increments and reads
	// checked, nothing lost, no read above what was invoked
	var cd struct {
		Passed      bool `json:"passed"`
		Consistency struct {
			Own struct {
				Values map[string]float64 `json:"values"`
			} `json:"own"`
		} `json:"consistency"`
	}
	r = partition("counter", "serializable")
	if err := json.Unmarshal([]byte(r.stdout), &cd); err != nil || r.code != 0 || !cd.Passed {
		t.Errorf("a partition drill with the counter workload: exit %d %v\n%s%s", r.code, err, r.stdout, r.stderr)
	} else if c := cd.Consistency.Own.Values; c["acknowledged"] == 0 || c["lost"] != 0 || c["too_high"] != 0 {
		t.Errorf("the counters through a partition: %v; want acknowledged increments, none lost or too high", c)
	}
	if r := e.run("drill", "partition", "db3", "--name", "itreads", "--read-target", "replicas"); r.code != 2 || !strings.Contains(r.stderr, "--read-target: applies to the history workloads") {
		t.Errorf("a read target without a history workload: exit %d %s", r.code, r.stderr)
	}
	count := func() int { d, _ := os.ReadDir(filepath.Join(e.home, "runs")); return len(d) }
	runs := count()
	if r := e.run("bench", "consistency", "--name", "itreads", "--target", "lb", "--read-target", "db9", "--time", "0"); r.code != 2 ||
		!strings.Contains(r.stderr, `--read-target: unknown target "db9"`) || !strings.Contains(r.stderr, "--time: expected 1 to 3600") {
		t.Errorf("a read target that does not exist: exit %d %s", r.code, r.stderr)
	}
	if n := count(); n != runs {
		t.Errorf("a refused run left %d runs behind", n-runs)
	}
}
