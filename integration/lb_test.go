package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/netns"
)

type lbStatus struct {
	LoadBalancers []struct {
		Name     string
		State    string
		Backends []struct {
			Proxy, Name, Status string
			Serving             bool
		}
		Out []struct{ Proxy, Server, What, Reason string } `json:"out_of_service"`
	} `json:"load_balancers"`
	Nodes []struct {
		Name, Address string
		Pid           int
	}
}

func (e *env) lbStatus(lab string) lbStatus {
	e.t.Helper()
	var s lbStatus
	if err := json.Unmarshal([]byte(e.ok("status", "--name", lab, "-o", "json").stdout), &s); err != nil {
		e.t.Fatal(err)
	}
	return s
}

// backend is a node's state in the LB's writes proxy ("UP", "DOWN", ...).
func (e *env) backend(lab, node string) string {
	for _, b := range e.lbStatus(lab).LoadBalancers[0].Backends {
		if b.Proxy == "writes" && b.Name == node {
			return b.Status
		}
	}
	return "missing"
}

// waitBackend waits until HAProxy sees node as up (or down), and returns how long it took.
func (e *env) waitBackend(lab, node string, up bool, within time.Duration) time.Duration {
	e.t.Helper()
	start := time.Now()
	for {
		st := e.backend(lab, node)
		if strings.HasPrefix(st, "UP") == up && !strings.Contains(st, "/") {
			return time.Since(start)
		}
		if time.Since(start) > within {
			e.t.Fatalf("%s: backend %s is %q after %v, want up=%v", lab, node, st, within, up)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// routed returns the node a new connection through the LB lands on.
func (e *env) routed(lab string) string {
	e.t.Helper()
	out := e.sql(lab, "lb", "SELECT @@wsrep_node_name")
	return strings.TrimPrefix(out, "@@wsrep_node_name\n")
}

func TestLoadBalancerRoutesOnlyToHealthyNodes(t *testing.T) {
	t.Parallel() // it mostly waits; how soon a node is marked down is logged, bounded loosely for a busy machine
	e := newEnv(t)
	e.ok("up", "--name", "itlb")
	if got := e.routed("itlb"); got != "db1" {
		t.Fatalf("single-writer LB routes to %s, want db1", got)
	}
	e.ok("sql", "lb", "--name", "itlb", "-e", "CREATE TABLE app.w (id INT PRIMARY KEY, node VARCHAR(8))")
	write := func(id int) {
		e.t.Helper()
		e.ok("sql", "lb", "--name", "itlb", "-e", fmt.Sprintf("INSERT INTO app.w VALUES (%d, @@wsrep_node_name)", id))
	}
	pid := func(node string) int {
		for _, n := range e.lbStatus("itlb").Nodes {
			if n.Name == node {
				return n.Pid
			}
		}
		return 0
	}
	faults := []struct {
		name          string
		apply, repair func()
		within        time.Duration
	}{
		{"drained", func() { e.ok("drain", "--name", "itlb", "db1") }, func() { e.ok("undrain", "--name", "itlb", "db1") }, 10 * time.Second},
		{"desynced", func() { e.sql("itlb", "db1", "SET GLOBAL wsrep_desync=ON") }, func() { e.sql("itlb", "db1", "SET GLOBAL wsrep_desync=OFF") }, 10 * time.Second},
		{"paused (SIGSTOP)", func() { syscall.Kill(pid("db1"), syscall.SIGSTOP) }, func() { syscall.Kill(pid("db1"), syscall.SIGCONT) }, 10 * time.Second},
		{"cut off into a non-primary minority", func() { partition(t, "hd-itlb-db1", "-A") }, func() { partition(t, "hd-itlb-db1", "-D") }, 20 * time.Second},
	}
	id := 0
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			f.apply()
			took := e.waitBackend("itlb", "db1", false, f.within)
			t.Logf("db1 %s: marked down after %v", f.name, took.Round(10*time.Millisecond))
			explained := false // status says why, from the load balancer's log
			for _, o := range e.lbStatus("itlb").LoadBalancers[0].Out {
				explained = explained || (o.Proxy == "writes" && o.Server == "db1" && o.What == "down" && o.Reason != "")
			}
			if !explained {
				t.Errorf("status does not say why db1 is out of the writes backend while it is %s: %+v", f.name, e.lbStatus("itlb").LoadBalancers[0].Out)
			}
			if got := e.routed("itlb"); got == "db1" {
				t.Errorf("LB still routes to db1 while it is %s", f.name)
			}
			id++
			write(id)
			f.repair()
			took = e.waitBackend("itlb", "db1", true, 30*time.Second)
			t.Logf("db1 back up %v after repair", took.Round(10*time.Millisecond))
			if got := e.routed("itlb"); got != "db1" {
				t.Errorf("after repair the LB routes to %s, want db1 back", got)
			}
		})
	}

	// The active writer dies: writes through the LB continue on another node.
	syscall.Kill(pid("db1"), syscall.SIGKILL)
	e.waitBackend("itlb", "db1", false, 10*time.Second)
	id++
	write(id)
	e.ok("start", "--name", "itlb", "db1")
	e.waitBackend("itlb", "db1", true, 30*time.Second)
	for _, n := range []string{"db1", "db2", "db3"} {
		if got := e.sql("itlb", n, "SELECT COUNT(*) FROM app.w"); got != fmt.Sprintf("COUNT(*)\n%d", id) {
			t.Errorf("%s holds %q, want %d acknowledged writes", n, got, id)
		}
	}
	agentHTTP(t, e)
}

// partition cuts a node's Galera traffic inside its own namespace (-A) or heals it (-D).
func partition(t *testing.T, ns, op string) {
	t.Helper()
	for _, chain := range []string{"INPUT", "OUTPUT"} {
		if out, err := exec.Command("ip", "netns", "exec", ns, "iptables", op, chain, "-p", "tcp", "--dport", "4567", "-j", "DROP").CombinedOutput(); err != nil {
			t.Fatalf("iptables %s %s in %s: %v %s", op, chain, ns, err, out)
		}
	}
}

// agentHTTP checks the agent's HTTP contract from the client host.
func agentHTTP(t *testing.T, e *env) {
	var db2 string
	for _, n := range e.lbStatus("itlb").Nodes {
		if n.Name == "db2" {
			db2 = n.Address
		}
	}
	c := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return netns.Dial(ctx, "hd-itlb-client", network, addr)
		}}}
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodOptions} {
		req, _ := http.NewRequest(m, "http://"+db2+":9200/", nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("agent %s: %v", m, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || (m == http.MethodGet) != (len(body) > 0) {
			t.Errorf("agent %s: %d %q", m, resp.StatusCode, body)
		}
		if m == http.MethodGet && !strings.Contains(string(body), `"state":"Synced"`) {
			t.Errorf("agent GET body: %s", body)
		}
	}
	resp, err := c.Get("http://" + db2 + ":9200/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, m := range []string{`hadrill_healthy{node="db2"} 1`, "hadrill_galera_cluster_size", "hadrill_galera_flow_control_paused_ns", "hadrill_probe_seconds"} {
		if !strings.Contains(string(body), m) {
			t.Errorf("metrics lack %s", m)
		}
	}
}

// TestBalancedLoadBalancer: writes on 3306 and reads on 3307 spread over
// every healthy node, with a cloud load balancer's probes (every 15 s: the
// lab is up and every node serves without waiting for them); drain of an
// unknown node is bad input.
func TestBalancedLoadBalancer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	spec := e.writeSpec("bal.yaml", "clusters:\n  - name: db\n    nodes: 3\n    failure_detection: fast\nload_balancers:\n  - name: lb\n    cluster: db\n    mode: balanced\n    checks: cloud\n")
	e.ok("up", "--name", "itbal", "-f", spec)
	st := e.lbStatus("itbal")
	serving := map[string]int{}
	for _, b := range st.LoadBalancers[0].Backends {
		if b.Serving {
			serving[b.Proxy]++
		}
	}
	if serving["writes"] != 3 || serving["reads"] != 3 {
		t.Fatalf("balanced LB serves %v, want 3 writers and 3 readers", serving)
	}
	var status struct {
		Client struct {
			Netns        string `json:"netns"`
			DefaultsFile string `json:"defaults_file"`
		} `json:"client"`
		LoadBalancers []struct{ Address string } `json:"load_balancers"`
	}
	json.Unmarshal([]byte(e.ok("status", "--name", "itbal", "-o", "json").stdout), &status)
	for _, port := range []string{"3306", "3307"} {
		seen := map[string]bool{}
		for i := 0; i < 6; i++ {
			out, err := exec.Command("ip", "netns", "exec", status.Client.Netns, "mariadb", "--defaults-file="+status.Client.DefaultsFile,
				"--host="+status.LoadBalancers[0].Address, "--port="+port, "-N", "-e", "SELECT @@wsrep_node_name").CombinedOutput()
			if err != nil {
				t.Fatalf("port %s: %v %s", port, err, out)
			}
			seen[strings.TrimSpace(string(out))] = true
		}
		if len(seen) < 2 {
			t.Errorf("port %s: 6 connections all landed on %v", port, seen)
		}
	}
	if r := e.run("drain", "--name", "itbal", "db9"); r.code != 2 || !strings.Contains(r.stderr, `unknown node "db9"`) {
		t.Errorf("drain of an unknown node: exit %d %s", r.code, r.stderr)
	}
}

// lbAddress is the first load balancer's address.
func (e *env) lbAddress(lab string) string {
	var s struct {
		LoadBalancers []struct{ Address string } `json:"load_balancers"`
	}
	json.Unmarshal([]byte(e.ok("status", "--name", lab, "-o", "json").stdout), &s)
	return s.LoadBalancers[0].Address
}
