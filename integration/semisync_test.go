package integration

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestSemiSyncFallback: the one way a semi-sync failover loses an
// acknowledged commit, shown and named. The primary cut off from its
// replicas only (its clients still reach it) waits ack_timeout (1 s here)
// for an acknowledgement, then commits without: the drill around it names
// the fallback and loses nothing, since the primary stays. Cut off so
// again, then its host crashed: the keeper promotes a replica, which never
// received what the primary acknowledged alone, so the drill fails with
// those writes lost and says why.
func TestSemiSyncFallback(t *testing.T) {
	t.Parallel() // it asserts no timing
	e := newEnv(t)
	spec := e.writeSpec("itssf", `name: itssf
clusters: [{name: db, kind: primary, nodes: 3, mode: semi-sync, ack_timeout: 1s, profile: durable, failover: auto}]
load_balancers: [{name: lb, cluster: db}]
client: {name: client}
`)
	e.ok("up", "-f", spec)
	defer e.run("down", "--name", "itssf")
	type result struct {
		drillResult
		Fallbacks []string `json:"semi_sync_fallbacks"`
		Problems  []string `json:"problems"`
	}
	drill := func(want int, scenario string, args ...string) result {
		t.Helper()
		r := e.run(append([]string{"drill", scenario, "--name", "itssf", "--rate", "50", "-o", "json"}, args...)...)
		var res result
		if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || r.code != want {
			t.Fatalf("drill %s %v: exit %d (want %d) %v\n%s%s", scenario, args, r.code, want, err, r.stdout, r.stderr)
		}
		t.Logf("drill %s %v: %d acknowledged, %d lost, fallbacks %v, problems %v", scenario, args, res.WritesAcked, res.LostCount, res.Fallbacks, res.Problems)
		return res
	}
	res := drill(0, "fault", "--hold", "3s", "--before", "1s", "--after", "1s", "--", "partition", "db1", "--from", "db2,db3")
	if len(res.Fallbacks) == 0 || !strings.HasPrefix(res.Fallbacks[0], "db1 from ") || res.LostCount != 0 {
		t.Errorf("the primary cut off from its replicas for 3 s: fallbacks %v, %d lost", res.Fallbacks, res.LostCount)
	}
	e.ok("fault", "partition", "db1", "--from", "db2,db3", "--name", "itssf")
	res = drill(1, "failover", "--crash", "--before", "1500ms", "--after", "1s")
	named := false
	for _, p := range res.Problems {
		named = named || strings.Contains(p, "semi-sync fell back to async (db1 from")
	}
	if res.LostCount == 0 || !named {
		t.Errorf("a crash after the fallback: %d lost, problems %v; want writes lost and the fallback named", res.LostCount, res.Problems)
	}
	e.ok("down", "--name", "itssf")
	e.assertNoLeftovers()
}
