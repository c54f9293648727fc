package integration

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// localServer starts a MariaDB server of the test's own on loopback (a
// stand-in for a managed service's endpoint), with a user bench/benchpw
// allowed everything; it is stopped and removed when the test ends.
func localServer(t *testing.T) (port int) {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "hdit-server-")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port = ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	data, sock := filepath.Join(dir, "data"), filepath.Join(dir, "mysqld.sock")
	if out, err := exec.Command("mariadb-install-db", "--no-defaults", "--datadir="+data, "--user=root", "--auth-root-authentication-method=socket",
		"--skip-test-db").CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		t.Fatalf("mariadb-install-db: %v\n%s", err, out)
	}
	srv := exec.Command("mariadbd", "--no-defaults", "--datadir="+data, "--socket="+sock, "--port="+fmt.Sprint(port),
		"--bind-address=127.0.0.1", "--user=root", "--pid-file="+filepath.Join(dir, "mysqld.pid"), "--log-error="+filepath.Join(dir, "error.log"),
		"--innodb-buffer-pool-size=128M", "--skip-log-bin")
	srv.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := srv.Start(); err != nil {
		os.RemoveAll(dir)
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-srv.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = srv.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-srv.Process.Pid, syscall.SIGKILL)
			<-done
		}
		os.RemoveAll(dir)
	})
	for i := 0; ; i++ {
		out, err := exec.Command("mariadb", "--no-defaults", "--socket="+sock, "-e",
			"CREATE USER 'bench'@'127.0.0.1' IDENTIFIED BY 'benchpw'; GRANT ALL ON *.* TO 'bench'@'127.0.0.1'").CombinedOutput()
		if err == nil {
			return port
		}
		if i == 60 {
			b, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("the local server did not start: %v\n%s\n%s", err, out, b)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestStudyEndpointAndSlap: a study whose variants are a lab and a server
// outside any lab (here one of the test's own on loopback, as a managed
// service would be): mariadb-slap over the generated employees dataset and
// sysbench run against both, the endpoint's load from this computer, and
// the priced variant's TPS per dollar is reported; a dead endpoint fails
// the study before any lab is made.
func TestStudyEndpointAndSlap(t *testing.T) {
	t.Parallel() // no timing bound a test beside it could break
	e := newEnv(t)
	port := localServer(t)
	if err := os.Chmod(e.writeSpec("bench.cnf", "[client]\nuser=bench\npassword=benchpw\n"), 0o600); err != nil { // found beside the study file
		t.Fatal(err)
	}
	study := func(endpoint string) string {
		return e.writeSpec("endpoint.yaml", fmt.Sprintf(`name: endpoint
title: A lab server against a server of my own
source: a test
variants:
  - name: lab
    preset: async
    baseline: true
    target: db1
    patch:
      machines: [{name: one, cpus: 1, memory: 2G, price: 0.1}]
      load_balancers: null
      clusters: [{name: db, kind: standalone, nodes: 1, mode: null, machine: one}]
  - {name: mine, endpoint: "%s", credentials: bench.cnf, price: 0.4}
steps:
  - {name: read, kind: slap, dataset: employees}
  - {name: oltp, kind: sysbench, workload: oltp_read_write}
scales:
  quick: {runs: 3, concurrency: [1, 2], iterations: 1, dataset_size: 0.02, threads: [2], time: 3, warmup: 1, tables: 1, table_size: 1000}
  full: {runs: 3, concurrency: [1, 2], iterations: 10, dataset_size: 1, threads: [2], time: 30, warmup: 5, tables: 4, table_size: 10000}
expect:
  - {step: oltp, variant: mine, than: lab, metric: tps@2, min: 10000, claim: "mine is ten thousand times the lab", source: "nowhere"}
`, endpoint))
	}
	dead := e.run("study", "run", "--file", study("mysql://127.0.0.1:1"))
	if dead.code == 0 || !strings.Contains(dead.stderr, "variant mine: --target: cannot connect") {
		t.Errorf("a dead endpoint: exit %d\n%s", dead.code, dead.stderr)
	}
	if labs, _ := filepath.Glob(filepath.Join(e.home, "labs", "*")); len(labs) > 0 {
		t.Errorf("a dead endpoint left labs: %v", labs)
	}
	// a claim that does not hold: the study runs to the end, says so first,
	// and exits 4 (not 0, not a failure); three rounds, as two on a busy
	// computer can leave the lab's mean not told from 0 and so the ratio's
	// interval unbounded (Fieller), whatever the bound
	r := e.run("study", "run", "--file", study(fmt.Sprintf("mysql://127.0.0.1:%d", port)), "-o", "json")
	if r.code != 4 || !strings.Contains(r.stderr, "study endpoint: Not reproduced: 0 of the document's 1 claims checked hold; 1 not reproduced") {
		t.Errorf("a study whose claim did not reproduce: exit %d\n%s", r.code, r.stderr)
	}
	var out struct {
		RunID  string `json:"run_id"`
		Result struct {
			Cells []struct {
				Step, Metric, Variant string
				N                     int     `json:"n"`
				Median                float64 `json:"median"`
			} `json:"cells"`
			Finding string `json:"finding"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	got := map[string]float64{}
	for _, c := range out.Result.Cells {
		if c.N != 3 {
			t.Errorf("cell %+v: want 3 rounds", c)
		}
		got[c.Variant+"/"+c.Step+"/"+c.Metric] = c.Median
	}
	for _, k := range []string{"lab/read/avg_s@1", "lab/read/avg_s@2", "mine/read/avg_s@2", "lab/oltp/tps@2", "mine/oltp/tps@2",
		"lab/oltp/tps_per_dollar@2", "mine/oltp/tps_per_dollar@2"} {
		if got[k] <= 0 {
			t.Errorf("%s not measured: %v", k, got)
		}
	}
	if d, tps := got["mine/oltp/tps_per_dollar@2"], got["mine/oltp/tps@2"]; d < tps/0.4*0.99 || d > tps/0.4*1.01 {
		t.Errorf("TPS per dollar an hour %g for %g TPS at $0.40/h", d, tps)
	}
	if !strings.HasPrefix(out.Result.Finding, "Not reproduced: 0 of the document's 1 claims checked hold; 1 not reproduced.\n") || !strings.Contains(out.Result.Finding, "\n✘ not reproduced: ") ||
		!strings.Contains(out.Result.Finding, ": \"mine is ten thousand times the lab\"") {
		t.Errorf("the finding does not open with the answer: %s", out.Result.Finding)
	}
	if !strings.Contains(out.Result.Finding, "Transactions per second per dollar an hour") || !strings.Contains(out.Result.Finding, "Seconds for 2 mariadb-slap clients to run the query over the generated employees dataset") {
		t.Errorf("finding: %s", out.Result.Finding)
	}
	// the dataset went to the server of my own, made by hadrill (marked)
	if b, err := exec.Command("mariadb", "--no-defaults", "-h127.0.0.1", fmt.Sprintf("-P%d", port), "-ubench", "-pbenchpw", "-N", "-e",
		"SELECT employees FROM employees.hd_prepared").Output(); err != nil || strings.TrimSpace(string(b)) != "6000" {
		t.Errorf("the endpoint's employees dataset: %q %v", b, err)
	}
	html := filepath.Join(e.home, "endpoint.html")
	e.ok("study", "report", out.RunID, "-o", html)
	if b, _ := os.ReadFile(html); !strings.Contains(string(b), "mysql://127.0.0.1") || !strings.Contains(string(b), "Hosts, as measured") {
		t.Errorf("the report does not show the endpoint and the hosts")
	}
	if labs, _ := filepath.Glob(filepath.Join(e.home, "labs", "*")); len(labs) > 0 {
		t.Errorf("the study left labs: %v", labs)
	}
}
