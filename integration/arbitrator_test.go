package integration

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestArbitrator: wan2-arbitrator's garbd joins the 3 + 3 cluster (7
// members) from a third region; when west is cut off, east keeps a primary
// component with the arbitrator's vote, writes come back, and nothing
// acknowledged is lost. A dataset loaded across the regions widens
// Galera's send windows for the load only.
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
	// a dataset loaded into the cluster across regions: Galera's send
	// windows are widened on the node it is loaded on for the load, and
	// put back
	if r := e.ok("bench", "sysbench", "--name", "itarb", "--threads", "1", "--time", "1", "--tables", "1", "--table-size", "500"); !strings.Contains(r.stderr, "Galera's send windows on db1 512 for the load, then back to 4 and 2") {
		t.Errorf("a load across regions does not say its send windows:\n%s", r.stderr)
	}
	if got := e.sql("itarb", "db1", "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_VARIABLES WHERE VARIABLE_NAME='WSREP_PROVIDER_OPTIONS'"); !strings.Contains(got, "evs.send_window = 4;") || !strings.Contains(got, "evs.user_send_window = 2;") {
		t.Errorf("db1's send windows after the load: %s", got)
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
