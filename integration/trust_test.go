package integration

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// storedDrill is what a drill run keeps in the store.
type storedDrill struct {
	Interrupted bool `json:"interrupted"`
	Results     struct {
		Verdict        string `json:"verdict"`
		Interrupted    bool   `json:"interrupted"`
		LostCount      int    `json:"lost_count"`
		ChecksumsAgree bool   `json:"checksums_agree"`
		Audit          []struct {
			Node, State string
		} `json:"audit"`
	} `json:"results"`
}

// start runs hadrill in the background (own process group), its output
// collected.
func (e *env) start(args ...string) (*exec.Cmd, *syncBuffer) {
	e.t.Helper()
	c := e.cmd(args...)
	buf := &syncBuffer{}
	c.Stdout, c.Stderr = buf, buf
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL); _ = c.Wait() })
	return c, buf
}

// startDrill starts a drill in the background and returns once it printed
// marker. One refused for a load the lab could not carry before its fault
// (a computer busy with other tests' labs; nothing was broken) is started
// again, twice, 5 s apart, as runDrill does.
func (e *env) startDrill(marker string, args ...string) (*exec.Cmd, *syncBuffer) {
	e.t.Helper()
	for try := 0; ; try++ {
		c, buf := e.start(args...)
		for end := time.Now().Add(60 * time.Second); !strings.Contains(buf.String(), marker); time.Sleep(20 * time.Millisecond) {
			if strings.Contains(buf.String(), refusedForLoad) && try < 2 {
				break
			}
			if time.Now().After(end) {
				e.t.Fatalf("never printed %q:\n%s", marker, buf.String())
			}
		}
		if strings.Contains(buf.String(), marker) {
			return c, buf
		}
		_ = exitOf(c)
		e.t.Logf("refused for a load the lab could not carry then, started again: %s", buf.String())
		time.Sleep(5 * time.Second)
	}
}

func waitPrinted(t *testing.T, buf *syncBuffer, marker string, limit time.Duration) {
	t.Helper()
	for end := time.Now().Add(limit); !strings.Contains(buf.String(), marker); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("never printed %q:\n%s", marker, buf.String())
		}
	}
}

func exitOf(c *exec.Cmd) int {
	err := c.Wait()
	if x, ok := err.(*exec.ExitError); ok {
		return statusOf(x)
	}
	if err != nil {
		return -1
	}
	return 0
}

// latestRun reads the newest run of the env's store.
func (e *env) latestRun(v any) string {
	e.t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(e.home, "runs", "*"))
	sort.Strings(dirs)
	if len(dirs) == 0 {
		e.t.Fatal("no run stored")
	}
	b, err := os.ReadFile(filepath.Join(dirs[len(dirs)-1], "run.json"))
	if err != nil {
		e.t.Fatalf("run %s: %v", dirs[len(dirs)-1], err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		e.t.Fatal(err)
	}
	return filepath.Base(dirs[len(dirs)-1])
}

// waitWhole waits until every node of the lab is Synced. A node restarted
// after a drill or a fault rejoins in seconds here; limits of 90 s are what
// a computer busy with two other labs' tests meets.
func (e *env) waitWhole(lab, want string, limit time.Duration) {
	e.t.Helper()
	var got string
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		if got = e.states(lab); got == want {
			return
		}
	}
	e.t.Fatalf("lab %s not whole: %s", lab, got)
}

// TestTrust: the verdicts claim only what was seen and an interrupted drill
// repairs what it broke (SIGINT, SIGTERM, SIGHUP, and SIGPIPE from a real
// closed pipe); one changing command per lab at a time; a benchmark ends
// first when the lab goes down and keeps its partial results; a benchmark
// never drops what it does not own; no plaintext password reaches a log.
func TestTrust(t *testing.T) {
	t.Parallel() // it mostly waits for drills and repairs on its own lab
	e := newEnv(t)
	spec := e.writeSpec("ittr", `name: ittr
clusters:
  - {name: db, nodes: 3, profile: durable, failure_detection: fast}
load_balancers:
  - {name: lb, cluster: db}
client:
  name: client
`)
	e.ok("up", "-f", spec)
	const whole = "db1=Synced db2=Synced db3=Synced"

	// 1. every signal, right after the kill: the node comes back, the run is
	// kept marked interrupted, and nothing is claimed lost
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE} {
		var code int
		if sig == syscall.SIGPIPE { // the reader of its output goes away: hadrill drill ... | head -2
			c := exec.Command("bash", "-c", `"$0" "$@" 2>&1 | head -n 2; exit ${PIPESTATUS[0]}`, bin, "--home", e.home, "drill", "failover", "--name", "ittr", "--before", "1s")
			c.Dir = e.cwd
			out, err := c.CombinedOutput()
			t.Logf("drill | head -2: %s", strings.TrimSpace(string(out)))
			if x, ok := err.(*exec.ExitError); !ok || x.ExitCode() != 141 { // bash's status of a command SIGPIPE ended
				t.Errorf("drill | head -2: %v, want hadrill ended by SIGPIPE (141) once it cleaned up", err)
			}
		} else {
			c, buf := e.startDrill("(kill -9)", "drill", "failover", "--name", "ittr", "--before", "1s")
			_ = c.Process.Signal(sig)
			code = exitOf(c)
			if code != 128+int(sig) || !strings.Contains(buf.String(), "INTERRUPTED") || strings.Contains(buf.String(), "lacks") ||
				strings.Contains(buf.String(), "whole again: never") { // its repair waited for the cluster to be whole
				t.Errorf("%v: exit %d, output:\n%s", sig, code, buf.String())
			}
		}
		e.waitWhole("ittr", whole, 90*time.Second)
		var run storedDrill
		id := e.latestRun(&run)
		if !run.Interrupted || !run.Results.Interrupted || run.Results.LostCount != 0 || run.Results.Verdict == "lost" {
			t.Errorf("%v: run %s: %+v", sig, id, run)
		}
		for _, a := range run.Results.Audit {
			if a.State == "missing" {
				t.Errorf("%v: run %s claims %s missing writes", sig, id, a.Node)
			}
		}
		if r := e.run("drill", "audit", id, "--name", "ittr"); r.code != 0 {
			t.Errorf("%v: audit of %s: exit %d\n%s", sig, id, r.code, r.stdout+r.stderr)
		}
	}

	// 2. two drills started together: one runs, the other is refused and
	// names the holder; the cluster ends whole
	c1, b1 := e.startDrill("(kill -9)", "drill", "failover", "--name", "ittr", "--before", "1s", "--after", "1s")
	r := e.run("drill", "failover", "--name", "ittr")
	if r.code != 3 || !strings.Contains(r.stderr, "is busy") || !strings.Contains(r.stderr, "hadrill drill failover") {
		t.Errorf("second drill: exit %d, want 3 naming the first\n%s", r.code, r.stderr)
	}
	if r := e.run("fault", "kill", "db2", "--name", "ittr"); r.code != 3 {
		t.Errorf("fault during a drill: exit %d, want 3\n%s", r.code, r.stderr)
	}
	// exit 1 is the drill's finding, not a failure of hadrill's, when
	// Galera itself said data loss was possible (a killed writer that had
	// applied a write set the others never received, "Reversing history"
	// as it rejoined): the member rejoins by a full state transfer
	if code := exitOf(c1); code != 0 && (code != 1 || !strings.Contains(b1.String(), "Galera says data loss is possible")) {
		t.Errorf("first drill: exit %d\n%s", code, b1.String())
	} else if code == 1 {
		t.Logf("first drill: Galera lost what the killed writer alone had applied:\n%s", b1.String())
	}
	e.waitWhole("ittr", whole, 90*time.Second)

	// 3. faults at once: each applies whole or is refused; the log is in the
	// order they took effect; heal leaves nothing behind
	var cmds []*exec.Cmd
	for _, f := range [][]string{{"partition", "db3"}, {"pause", "db2"}, {"kill", "db1"}, {"heal"}} {
		c, _ := e.start(append([]string{"fault"}, append(f, "--name", "ittr", "--wait", "30s")...)...)
		cmds = append(cmds, c)
	}
	for i, c := range cmds {
		if code := exitOf(c); code != 0 {
			t.Errorf("fault %d: exit %d", i, code)
		}
	}
	e.ok("fault", "heal", "--name", "ittr")
	e.waitWhole("ittr", whole, 90*time.Second)
	f, err := os.Open(filepath.Join(e.home, "labs", "ittr", "faults.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var last time.Time
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rec struct {
			At time.Time `json:"at"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) == nil {
			if rec.At.Before(last) {
				t.Errorf("fault log out of order: %s after %v", sc.Text(), last)
			}
			last = rec.At
		}
	}
	f.Close()

	// 4. a benchmark drops or creates only its scratch schema
	for _, schema := range []string{"app", "mysql"} {
		if r := e.run("bench", "slap", "--name", "ittr", "--schema", schema, "--load", "write", "--concurrency", "1", "--iterations", "1"); r.code != 2 {
			t.Errorf("slap --schema %s --load write: exit %d, want 2\n%s", schema, r.code, r.stderr)
		}
	}
	if got := e.sql("ittr", "db1", "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema='app' AND table_name='hd_drill'"); !strings.HasSuffix(got, "\n1") {
		t.Errorf("app.hd_drill after the refused benchmarks: %s", got)
	}

	// 5. no plaintext password in binlogs, galera.cache or the archive
	for _, secret := range []string{"app.password", "check.password", "repl.password"} {
		pw, err := os.ReadFile(filepath.Join(e.home, "labs", "ittr", "secrets", secret))
		if err != nil {
			t.Fatal(err)
		}
		needle := strings.TrimSpace(string(pw))
		_ = filepath.Walk(filepath.Join(e.home, "labs", "ittr"), func(p string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() || strings.Contains(p, "/secrets/") {
				return nil
			}
			base := filepath.Base(p)
			if strings.HasPrefix(base, "binlog.") || base == "galera.cache" || strings.Contains(p, "/archive/") || strings.HasSuffix(base, ".log") {
				if b, _ := os.ReadFile(p); strings.Contains(string(b), needle) {
					t.Errorf("%s holds the plaintext %s", p, secret)
				}
			}
			return nil
		})
	}

	// 6. down during a benchmark: the benchmark ends first and keeps what it
	// measured; down removes the lab
	c, buf := e.start("bench", "sysbench", "--name", "ittr", "--threads", "2", "--time", "60", "--tables", "1", "--table-size", "1000")
	waitPrinted(t, buf, "threads", 90*time.Second)
	time.Sleep(3 * time.Second)
	r = e.run("down", "--name", "ittr")
	if r.code != 0 || !strings.Contains(r.stderr, "ending `hadrill bench sysbench") {
		t.Errorf("down during a benchmark: exit %d\n%s", r.code, r.stderr)
	}
	if code := exitOf(c); code != 130 {
		t.Errorf("benchmark ended by down: exit %d, want 130 (interrupted: ended by the SIGINT down sent, once it cleaned up)\n%s", code, buf.String())
	}
	var bench struct {
		Kind        string `json:"kind"`
		Interrupted bool   `json:"interrupted"`
	}
	e.latestRun(&bench)
	if bench.Kind != "sysbench" || !bench.Interrupted {
		t.Errorf("the benchmark's run: %+v\n%s", bench, buf.String())
	}
}
