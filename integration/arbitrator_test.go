package integration

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestArbitrator: wan2-arbitrator's garbd joins the 3 + 3 cluster (7
// members) from a third region; when west is cut off, east keeps a primary
// component with the arbitrator's vote, writes come back, and nothing
// acknowledged is lost.
func TestArbitrator(t *testing.T) {
	t.Parallel() // it mostly waits: see active
	e := newEnv(t)
	e.ok("up", "--name", "itarb", "--preset", "wan2-arbitrator")
	var st struct {
		Arbitrators []struct{ Name, Cluster, Region, State string } `json:"arbitrators"`
		Links       []struct{ Name string }                         `json:"links"`
	}
	e.statusInto("itarb", &st)
	if len(st.Arbitrators) != 1 || st.Arbitrators[0].Name != "dbarb" || st.Arbitrators[0].State != "running" || st.Arbitrators[0].Region != "arb" {
		t.Fatalf("arbitrators: %+v", st.Arbitrators)
	}
	if len(st.Links) != 3 {
		t.Fatalf("links: %+v", st.Links)
	}
	if got := e.sql("itarb", "db4", "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME='WSREP_CLUSTER_SIZE'"); !strings.HasSuffix(got, "7") {
		t.Fatalf("cluster size %q, want 7 (6 nodes + garbd)", got)
	}
	r := e.ok("drill", "partition", "west", "--name", "itarb", "--before", "1s", "--after", "1s", "-o", "json")
	var res drillResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("drill: %v\n%s", err, r.stdout)
	}
	t.Logf("partition west: gap %.2fs, writes back %v, synced %v, %d acked", res.Gap.Seconds, deref(res.WritesBackS), deref(res.SyncedS), res.WritesAcked)
	if !res.Passed || res.WritesBackS == nil || res.LostCount != 0 {
		t.Errorf("partition of west with an arbitrator: %+v", res)
	}
	e.ok("down", "--name", "itarb")
	e.assertNoLeftovers()
}
