package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestLBPair: a load balancer pair (replicas: 2) shares a virtual IP; the
// active host's HAProxy killed, and then the active host crashed, under
// writes: writes resume through the same address on the other host, no
// acknowledged write is lost, and the host that comes back stands by; bad
// input is refused. With the standby's keepalived dead, no host takes over
// and the drill fails, naming it and what its repair started again.
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
		ProxyUp    bool   `json:"proxy_up"`
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
			if !in.ProxyUp || in.Keepalived == nil || !*in.Keepalived {
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

	// the standby's keepalived dead: no host takes the address over, and
	// the drill says so (failed), naming what was down and what it repaired
	var labState struct {
		Plan struct {
			LoadBalancers []struct {
				Instances []struct {
					Host       string `json:"host"`
					Keepalived struct {
						PidFile string `json:"pid_file"`
					} `json:"keepalived"`
				} `json:"instances"`
			} `json:"load_balancers"`
		} `json:"plan"`
	}
	b, err := os.ReadFile(filepath.Join(e.home, "labs", "itlbp", "lab.json"))
	if err != nil || json.Unmarshal(b, &labState) != nil {
		t.Fatalf("lab.json: %v", err)
	}
	standby := ""
	for _, in := range labState.Plan.LoadBalancers[0].Instances {
		if in.Host != prev {
			standby = in.Host
			pid, _ := os.ReadFile(in.Keepalived.PidFile)
			n, _ := strconv.Atoi(strings.TrimSpace(string(pid)))
			if n <= 0 || syscall.Kill(n, syscall.SIGKILL) != nil {
				t.Fatalf("%s's keepalived pid %q", in.Host, pid)
			}
		}
	}
	waitFor(t, func() bool {
		e.statusInto("itlbp", &st)
		for _, in := range st.LoadBalancers[0].Instances {
			if in.Host == standby && in.Keepalived != nil && !*in.Keepalived {
				return true
			}
		}
		return false
	})
	r := e.runDrill("drill", "lb-failover", "--name", "itlbp", "--before", "1s", "--after", "1s", "--hold", "4s", "-o", "json")
	var failed struct {
		Verdict   string   `json:"verdict"`
		Problems  []string `json:"problems"`
		Repaired  []string `json:"repaired"`
		TakeoverS *float64 `json:"takeover_s"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &failed); err != nil || r.code != 1 || failed.Verdict != "failed" || failed.TakeoverS != nil ||
		!strings.Contains(strings.Join(failed.Problems, "\n"), "no takeover: no other host of load balancer lb took its virtual IP") ||
		!strings.Contains(strings.Join(failed.Problems, "\n"), standby+"'s keepalived before the fault") ||
		len(failed.Repaired) != 1 || !strings.Contains(failed.Repaired[0], standby+"'s keepalived (down before the drill) was started again") {
		t.Errorf("lb-failover with the standby's keepalived dead: exit %d %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	holder() // whole again: every HAProxy and keepalived running
	e.ok("down", "--name", "itlbp")
	e.assertNoLeftovers()
}
