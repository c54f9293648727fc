package integration

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestLBPair: a load balancer pair (replicas: 2) shares a virtual IP; the
// active host's HAProxy killed, and then the active host crashed, under
// writes: writes resume through the same address on the other host, no
// acknowledged write is lost, and the host that comes back stands by; bad
// input is refused.
func TestLBPair(t *testing.T) {
	e := newEnv(t)
	spec := e.writeSpec("itlbp", `name: itlbp
clusters: [{name: db, nodes: 3, profile: durable, failure_detection: fast}]
load_balancers: [{name: lb, cluster: db, replicas: 2}]
client: {name: client}
`)
	e.ok("up", "-f", spec)
	type instance struct {
		Host       string `json:"host"`
		Haproxy    bool   `json:"haproxy"`
		Keepalived *bool  `json:"keepalived"`
		Holder     bool   `json:"holds_address"`
	}
	var st struct {
		LoadBalancers []struct {
			Address   string     `json:"address"`
			State     string     `json:"state"`
			Instances []instance `json:"instances"`
		} `json:"load_balancers"`
		Client struct {
			DefaultsFile string `json:"defaults_file"`
		} `json:"client"`
	}
	holder := func() (string, string) {
		e.statusInto("itlbp", &st)
		lb := st.LoadBalancers[0]
		h := ""
		for _, in := range lb.Instances {
			if in.Holder {
				h = in.Host
			}
			if !in.Haproxy || in.Keepalived == nil || !*in.Keepalived {
				t.Errorf("instance %+v is not whole", in)
			}
		}
		return h, lb.Address
	}
	first, vip := holder()
	if first == "" || len(st.LoadBalancers[0].Instances) != 2 || st.LoadBalancers[0].State != "running" || !strings.HasSuffix(vip, ".101") {
		t.Fatalf("pair after up: %+v", st.LoadBalancers)
	}
	if got := e.sql("itlbp", "lb", "SELECT 41+1"); !strings.HasSuffix(got, "42") {
		t.Errorf("a query through the virtual IP: %q", got)
	}
	for _, bad := range [][]string{{"drill", "lb-failover", "db1"}, {"drill", "lb-crash", "nosuch"}, {"fault", "kill", "lb1", "db1"}, {"fault", "stop", "lb1"}} {
		if r := e.run(append(bad, "--name", "itlbp")...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", bad, r.code, r.stderr)
		}
	}
	prev := first
	for _, d := range []string{"lb-failover", "lb-crash"} {
		r := e.ok("drill", d, "--name", "itlbp", "--before", "1s", "--after", "1s", "-o", "json")
		var res drillResult
		if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
			t.Fatalf("drill %s: %v\n%s", d, err, r.stdout)
		}
		t.Logf("drill %s: %v down, gap %.2fs, writes back %v, %d acked, %d lost", d, res.Targets, res.Gap.Seconds, deref(res.WritesBackS), res.WritesAcked, res.LostCount)
		if !res.Passed || res.LostCount != 0 || res.WritesBackS == nil || res.WritesAcked == 0 || len(res.Targets) != 1 || res.Targets[0] != prev {
			t.Errorf("drill %s: %+v", d, res)
		}
		if res.Gap.Seconds > 5 {
			t.Errorf("drill %s: writes stopped for %.1fs through the pair", d, res.Gap.Seconds)
		}
		now, addr := holder()
		if now == prev || now == "" || addr != vip {
			t.Errorf("after %s of %s: %s holds %s (want the other host, the same address %s)", d, prev, now, addr, vip)
		}
		prev = now
	}
	e.ok("down", "--name", "itlbp")
	e.assertNoLeftovers()
}
