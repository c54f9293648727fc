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

// TestLoadBalancerRoutesOnlyToHealthyNodes: the single-writer load
// balancer takes db1 out while it is drained, desynced, paused or cut off
// and takes it back once repaired; a session a backup took over meanwhile
// is shut when db1 is back (one writer, not two); a killed writer's writes
// go on elsewhere and none is lost.
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
			var held *exec.Cmd
			var heldOut strings.Builder
			if f.name == "drained" {
				// a session taken over by a backup, held across db1's
				// return: shut when db1 is up again, or it would go on
				// writing on db2 beside the new sessions on db1
				held = e.cmd("sql", "lb", "--name", "itlb", "-e", "SELECT @@wsrep_node_name; DO SLEEP(10); SELECT @@wsrep_node_name")
				held.Stdout, held.Stderr = &heldOut, &heldOut
				if err := held.Start(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(time.Second)
			}
			f.repair()
			took = e.waitBackend("itlb", "db1", true, 30*time.Second)
			if held != nil {
				if err := held.Wait(); err == nil || !strings.Contains(heldOut.String(), "db2") || strings.Count(heldOut.String(), "db2") != 1 {
					t.Errorf("a session on db2 held while db1 came back went on (two writers), or never was on db2: %v\n%s", err, heldOut.String())
				}
			}
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
	if r := e.run("drain", "--name", "itbal", "db9", "--wait=-1s"); r.code != 2 || !strings.Contains(r.stderr, `unknown node "db9"`) || !strings.Contains(r.stderr, "--wait: expected") {
		t.Errorf("drain of an unknown node with a negative wait: exit %d %s", r.code, r.stderr)
	}
	// a cloud load balancer takes a drained node out after two failed
	// probes 15 s apart: a drain that waits 2 s for it fails, naming it
	t0 := time.Now()
	r := e.run("drain", "--name", "itbal", "db1", "--wait", "2s")
	if took := time.Since(t0); r.code != 1 || !strings.Contains(r.stderr, "marks db1 writes UP") || !strings.Contains(r.stderr, "new sessions may still go there") || took < 2*time.Second {
		t.Errorf("a drain the load balancer had not followed after 2 s: exit %d after %v\n%s", r.code, took, r.stderr)
	}
	e.ok("undrain", "--name", "itbal", "db1", "--wait", "0")
}

// lbAddress is the first load balancer's address.
func (e *env) lbAddress(lab string) string {
	var s struct {
		LoadBalancers []struct{ Address string } `json:"load_balancers"`
	}
	json.Unmarshal([]byte(e.ok("status", "--name", lab, "-o", "json").stdout), &s)
	return s.LoadBalancers[0].Address
}

// TestLayer4LoadBalancer: a load balancer of kind iptables (the kernel's
// DNAT rules, a prober rewriting them) spreads new connections over the
// healthy nodes on both ports, each seen by the servers from the load
// balancer's address; a node taken out gets no new connection while a
// connection it has goes on (the kernel keeps a connection's server); a
// killed prober's rules go with it (nothing balances, as after a crashed
// host's reboot) and heal brings them back; cut off from the other hosts,
// it forwards no packet.
func TestLayer4LoadBalancer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	spec := e.writeSpec("l4.yaml", "clusters:\n  - name: db\n    nodes: 3\n    failure_detection: fast\nload_balancers:\n  - name: lb\n    cluster: db\n    mode: balanced\n    kind: iptables\n")
	e.ok("up", "--name", "itl4", "-f", spec)
	var st struct {
		Client struct {
			Netns        string `json:"netns"`
			DefaultsFile string `json:"defaults_file"`
		} `json:"client"`
		LoadBalancers []struct {
			Address, Netns, Proxy string
			Backends              []struct {
				Proxy, Name string
				Serving     bool
			}
		} `json:"load_balancers"`
	}
	e.statusInto("itl4", &st)
	b := st.LoadBalancers[0]
	if b.Proxy != "iptables" || len(b.Backends) != 6 {
		t.Fatalf("load balancer: %+v", b)
	}
	client := func(port string, query string) (string, error) {
		out, err := exec.Command("ip", "netns", "exec", st.Client.Netns, "mariadb", "--defaults-file="+st.Client.DefaultsFile,
			"--host="+b.Address, "--port="+port, "--connect-timeout=3", "-N", "-e", query).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	landings := func(port string, n int) map[string]int {
		seen := map[string]int{}
		for range n {
			out, err := client(port, "SELECT @@wsrep_node_name, SUBSTRING_INDEX(USER(), '@', -1)")
			if err != nil {
				t.Fatalf("port %s: %v %s", port, err, out)
			}
			node, from, _ := strings.Cut(out, "\t")
			if from != b.Address {
				t.Errorf("port %s: a connection reached %s from %q, want from the load balancer's %s", port, node, from, b.Address)
			}
			seen[node]++
		}
		return seen
	}
	for _, port := range []string{"3306", "3307"} {
		if seen := landings(port, 12); len(seen) < 2 {
			t.Errorf("port %s: 12 connections all landed on %v", port, seen)
		}
	}
	// db1 and db2 drained: every new connection on db3; one held there
	// while db3 is drained and the others admitted goes on
	// drain returns once the load balancer routes nothing new there
	if r := e.ok("drain", "--name", "itl4", "db1", "db2"); !strings.Contains(r.stderr, "no load balancer routes to db1, db2 any more") {
		t.Errorf("drain does not say the load balancer followed it:\n%s", r.stderr)
	}
	if seen := landings("3306", 4); seen["db3"] != 4 {
		t.Fatalf("with db1 and db2 drained, connections landed on %v", seen)
	}
	held := exec.Command("ip", "netns", "exec", st.Client.Netns, "mariadb", "--defaults-file="+st.Client.DefaultsFile,
		"--host="+b.Address, "--port=3306", "-N", "-e", "SELECT @@wsrep_node_name; DO SLEEP(5); SELECT @@wsrep_node_name")
	var heldOut strings.Builder
	held.Stdout, held.Stderr = &heldOut, &heldOut
	if err := held.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if r := e.ok("undrain", "--name", "itl4", "db1", "db2"); !strings.Contains(r.stderr, "the load balancers route to db1, db2 again") {
		t.Errorf("undrain does not say the load balancer followed it:\n%s", r.stderr)
	}
	e.ok("drain", "--name", "itl4", "db3")
	if seen := landings("3306", 6); seen["db3"] != 0 {
		t.Errorf("with db3 drained, connections landed on %v", seen)
	}
	if err := held.Wait(); err != nil || strings.Fields(heldOut.String())[0] != "db3" || len(strings.Fields(heldOut.String())) != 2 {
		t.Errorf("a connection held on db3 while it was taken out: %v\n%s", err, heldOut.String())
	}
	var out struct {
		LoadBalancers []struct {
			Out []struct{ Proxy, Server, What, Reason string } `json:"out_of_service"`
		} `json:"load_balancers"`
	}
	e.statusInto("itl4", &out)
	if o := out.LoadBalancers[0].Out; len(o) == 0 || o[0].Server != "db3" || !strings.Contains(o[0].Reason, "503") {
		t.Errorf("why db3 is out: %+v", o)
	}
	e.ok("undrain", "--name", "itl4", "db3")

	// the prober killed: its rules go with it, and heal brings them back
	e.ok("fault", "kill", "lb", "--name", "itl4")
	if rules, _ := exec.Command("ip", "netns", "exec", b.Netns, "iptables", "-w", "-t", "nat", "-S").CombinedOutput(); strings.Contains(string(rules), "HDLB") {
		t.Errorf("rules left after the prober was killed:\n%s", rules)
	}
	if out, err := client("3306", "SELECT 1"); err == nil {
		t.Errorf("a connection through a load balancer whose prober was killed: %s", out)
	}
	e.ok("fault", "heal", "--name", "itl4")
	if out, err := client("3306", "SELECT 1"); err != nil {
		t.Errorf("after heal: %v %s", err, out)
	}
	// cut off from the other hosts, it forwards nothing either
	e.ok("fault", "partition", "lb", "--name", "itl4")
	if out, err := client("3306", "SELECT 1"); err == nil {
		t.Errorf("a connection through a load balancer cut off from every host: %s", out)
	}
	e.ok("fault", "heal", "--name", "itl4")
	for _, n := range []string{"db1", "db2", "db3"} { // its probes failed too: the nodes come back after 2 good ones
		e.waitBackend("itl4", n, true, 10*time.Second)
	}
	if out, err := client("3306", "SELECT 1"); err != nil {
		t.Errorf("after the partition healed: %v %s", err, out)
	}
}
