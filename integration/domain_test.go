package integration

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestDomainOutage: nodes and a load balancer pair spread over three fault
// domains; crashing one domain (a node and a load balancer host at once:
// every process killed, NICs down) under writes leaves a majority and the
// other load balancer host, so writes resume, nothing acknowledged is lost,
// and heal brings the domain back; a spec that puts a majority in one
// domain is warned of; bad input is refused.
func TestDomainOutage(t *testing.T) {
	t.Parallel() // it mostly waits, each timing bound loose enough for a busy machine: see active
	e := newEnv(t)
	warn := e.writeSpec("warn.yaml", "clusters: [{name: db, nodes: 3, fault_domains: [fd0, fd1]}]\n")
	if r := e.ok("validate", warn); !strings.Contains(r.stdout+r.stderr, "fault domain fd0 holds 2 of the cluster's 3 members") {
		t.Errorf("validate of a majority in one domain: %s%s", r.stdout, r.stderr)
	}
	spec := e.writeSpec("itdom", `name: itdom
clusters: [{name: db, nodes: 3, profile: durable, failure_detection: fast, fault_domains: [fd0, fd1, fd2]}]
load_balancers: [{name: lb, cluster: db, replicas: 2, fault_domains: [fd0, fd1]}]
client: {name: client}
`)
	e.ok("up", "-f", spec)
	for _, bad := range [][]string{{"drill", "domain-outage", "rack9"}, {"drill", "domain-outage"}, {"fault", "crash", "client"}, {"fault", "crash", "nosuch"}} {
		if r := e.run(append(bad, "--name", "itdom")...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", bad, r.code, r.stderr)
		}
	}
	r := e.ok("drill", "domain-outage", "fd0", "--name", "itdom", "--before", "1s", "--after", "1s", "-o", "json")
	var res drillResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	t.Logf("domain fd0 (%v) crashed: gap %.2fs, writes back %v, synced %v, %d acked, %d lost", res.Targets, res.Gap.Seconds,
		deref(res.WritesBackS), deref(res.SyncedS), res.WritesAcked, res.LostCount)
	if !res.Passed || res.LostCount != 0 || res.WritesBackS == nil || *res.WritesBackS > 10 || res.SyncedS == nil ||
		!slices.Equal(res.Targets, []string{"db1", "lb1"}) {
		t.Errorf("domain outage: %+v", res)
	}
	var st struct {
		Nodes []struct {
			Name, State string
		} `json:"nodes"`
		Hosts []struct {
			Name        string `json:"name"`
			FaultDomain string `json:"fault_domain"`
		} `json:"hosts"`
	}
	e.statusInto("itdom", &st)
	for _, n := range st.Nodes {
		if n.State != "Synced" {
			t.Errorf("after the domain came back: %s is %s", n.Name, n.State)
		}
	}
	for _, h := range st.Hosts {
		if want := map[string]string{"db1": "fd0", "db2": "fd1", "db3": "fd2", "lb1": "fd0", "lb2": "fd1"}[h.Name]; want != "" && h.FaultDomain != want {
			t.Errorf("host %s in fault domain %q, want %s", h.Name, h.FaultDomain, want)
		}
	}
	e.ok("down", "--name", "itdom")
	e.assertNoLeftovers()
}
