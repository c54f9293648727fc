// Package integration drives the hadrill binary against real MariaDB,
// Galera and network namespaces. Every test removes what it creates and
// asserts that nothing of its lab is left.
package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var bin = os.Getenv("HADRILL_BIN")

// env is one isolated hadrill home.
type env struct {
	t    *testing.T
	home string
	cwd  string // the directory hadrill is run from: it must stay empty
	vars []string
	labs map[string]bool // lab names this env used (its leftovers are checked)
	shm  map[string]bool // libfaketime's files in /dev/shm before the test
	// overlapped: another test ran at the same time (set under active)
	overlapped bool
}

// active are the envs of the tests running now. Tests that mostly wait
// (outages, failovers and state transfers, each timing bound loose enough
// for a busy machine), tests with no timing bound, those whose figures
// are counted rather than timed (the sysbench record's shape, bytes per
// NIC, a semi-sync receipt, the WAN emulator's round trips: its cgroup
// keeps them within 10 % + 5 ms beside the others) and the SSH tests run
// three at a time, the longest first (slots; at four this computer's
// drills refused their load, its p99 past 500 ms, and Galera labs split
// on 1.4 s stalls), each with its own home, lab names and namespaces.
// Before them, apart: the emulated disks' tests beside each other
// (TestDisks: their I/O once stalled other tests' Galera labs; their lower
// bounds loose for that company), and one at a time every test that
// measures a cap (TestMachines' CPU quotas) or whose subject is timing
// itself (the load balancer pairs' keepalived, the SSH primary's keeper):
// beside others they failed, their drills refusing the load. How close the
// emulators get, alone, is make bench's. libfaketime's files are named by
// process, not by lab: a test that ran beside another cannot tell whose
// they are, and leaves that check to TestMain.
var active struct {
	sync.Mutex
	envs map[*env]bool
}

func (e *env) alone() bool {
	active.Lock()
	defer active.Unlock()
	return !e.overlapped
}

// TestMain fails the run when libfaketime's files were left behind by
// any test (each test that ran alone checks its own too), and removes the
// unprivileged account when the tests created it.
func TestMain(m *testing.M) {
	before := faketimeFiles()
	code := m.Run()
	for f := range faketimeFiles() {
		if !before[f] {
			fmt.Printf("FAIL: leftover %s (libfaketime's, of a server a test ran under it)\n", f)
			code = 1
		}
	}
	if testUser.created {
		exec.Command("userdel", rootlessUser).Run()
	}
	os.Exit(code)
}

// faketimeFiles are libfaketime's semaphores and shared memory in
// /dev/shm (a server run under it makes a pair).
func faketimeFiles() map[string]bool {
	out := map[string]bool{}
	for _, pattern := range []string{"/dev/shm/faketime_shm_*", "/dev/shm/sem.faketime_sem_*"} {
		files, _ := filepath.Glob(pattern)
		for _, f := range files {
			out[f] = true
		}
	}
	return out
}

func newEnv(t *testing.T) *env {
	t.Helper()
	if bin == "" {
		t.Skip("HADRILL_BIN not set (run `make integration`)")
	}
	if os.Geteuid() != 0 {
		t.Skip("integration tests need root (network namespaces)")
	}
	takeSlot(t)
	home, err := os.MkdirTemp("/tmp", "hdit-")
	if err != nil {
		t.Fatal(err)
	}
	cwd, err := os.MkdirTemp("/tmp", "hdit-cwd-")
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, home: home, cwd: cwd, labs: map[string]bool{}, shm: faketimeFiles()}
	active.Lock()
	if active.envs == nil {
		active.envs = map[*env]bool{}
	}
	active.envs[e] = true
	for o := range active.envs {
		o.overlapped = o.overlapped || len(active.envs) > 1
	}
	active.Unlock()
	t.Cleanup(func() {
		defer func() {
			active.Lock()
			delete(active.envs, e)
			active.Unlock()
		}()
		if t.Failed() {
			e.dumpLogs()
		}
		e.run("down", "--all") // whatever the test did or failed to do
		e.assertNoLeftovers()
		if left, _ := os.ReadDir(cwd); len(left) > 0 {
			for _, f := range left {
				t.Errorf("hadrill wrote %s into the directory it was run from", f.Name())
			}
		}
		os.RemoveAll(home)
		os.RemoveAll(cwd)
	})
	return e
}

// dumpLogs keeps what a failed test needs: every node's server log (and its
// state transfers' logs) and every lab's keeper log, wherever in the test's
// home they are (an SSH test's hosts have theirs), copied to
// $HADRILL_TEST_LOGS (make integration: test-logs/ in the tree) and logged
// in part, and there
// every run's history and chaos schedule (a history that shows an anomaly
// is checked again, and read, from it).
func (e *env) dumpLogs() {
	var logs []string
	var kept []string // kept only where logs go: the runs' histories and chaos schedules
	_ = filepath.WalkDir(e.home, func(path string, d os.DirEntry, err error) error {
		switch {
		case err != nil || d.IsDir():
		case d.Name() == "keeper.log" || d.Name() == "error.log" && filepath.Base(filepath.Dir(filepath.Dir(path))) == "nodes":
			logs = append(logs, path)
		case (d.Name() == "history.jsonl" || d.Name() == "schedule.json") && filepath.Base(filepath.Dir(filepath.Dir(path))) == "runs":
			kept = append(kept, path)
		}
		return nil
	})
	dest := os.Getenv("HADRILL_TEST_LOGS")
	for _, k := range kept {
		rel, _ := filepath.Rel(e.home, k)
		if dest == "" {
			e.t.Logf("%s: not kept (set HADRILL_TEST_LOGS to keep a failed test's histories)", rel)
			continue
		}
		target := filepath.Join(dest, e.t.Name(), rel)
		os.MkdirAll(filepath.Dir(target), 0o755)
		if b, err := os.ReadFile(k); err == nil {
			os.WriteFile(target, b, 0o644)
			e.t.Logf("%s: kept in %s", rel, target)
		}
	}
	for _, l := range logs {
		rel, _ := filepath.Rel(e.home, l)
		if dest != "" {
			target := filepath.Join(dest, e.t.Name(), rel)
			os.MkdirAll(filepath.Dir(target), 0o755)
			b, _ := os.ReadFile(l)
			os.WriteFile(target, b, 0o644)
			// and the state transfers' own logs beside it
			ssts, _ := filepath.Glob(filepath.Join(filepath.Dir(l), "sst-logs", "*"))
			for _, s := range ssts {
				if b, err := os.ReadFile(s); err == nil {
					os.WriteFile(filepath.Join(filepath.Dir(target), filepath.Base(s)), b, 0o644)
				}
			}
		} // and its end in the test's output, which is all CI keeps
		b, _ := os.ReadFile(l)
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		if len(lines) > 25 {
			lines = lines[len(lines)-25:]
		}
		e.t.Logf("--- %s (last %d lines)", rel, len(lines))
		for _, line := range lines { // a line each: the test's own prefix keeps it in make test's filtered output
			e.t.Logf("%s: %s", rel, line)
		}
		// the state transfers' own logs (a donor's mariabackup says there
		// why a transfer failed): the lines that say an error
		ssts, _ := filepath.Glob(filepath.Join(filepath.Dir(l), "sst-logs", "*"))
		for _, sst := range ssts {
			b, err := os.ReadFile(sst)
			if err != nil {
				continue
			}
			var said []string
			for _, line := range strings.Split(string(b), "\n") {
				if strings.Contains(line, "ERROR") || strings.Contains(line, "rror:") || strings.Contains(line, "FATAL") {
					said = append(said, line)
				}
			}
			if len(said) > 10 {
				said = said[len(said)-10:]
			}
			srel, _ := filepath.Rel(e.home, sst)
			for _, line := range said {
				e.t.Logf("%s: %s", srel, line)
			}
		}
	}
}

// writeSpec writes a topology spec into the env's home and returns its path.
func (e *env) writeSpec(name, text string) string {
	e.t.Helper()
	p := filepath.Join(e.home, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

type result struct {
	stdout, stderr string
	code           int
}

func (e *env) cmd(args ...string) *exec.Cmd {
	for i, a := range args {
		if a == "--name" && i+1 < len(args) {
			e.labs[args[i+1]] = true
		}
	}
	c := exec.Command(bin, append([]string{"--home", e.home}, args...)...)
	c.Env = append(os.Environ(), e.vars...)
	c.Dir = e.cwd
	return c
}

func (e *env) run(args ...string) result {
	e.t.Helper()
	return e.collect(e.cmd(args...), args)
}

// refusedForLoad is how a drill says it was refused for a load the lab
// could not carry before its fault (nothing was broken).
const refusedForLoad = "--rate: the lab cannot carry"

// runDrill runs a drill command, or a study whose steps run drills. One
// refused for a load the lab could not carry (a computer busy with other
// tests slowed the lab's writes before the fault; the drill then breaks
// nothing; a study stops there, exit 1, once its own second try was
// refused too) is tried again, twice, 5 s apart.
func (e *env) runDrill(args ...string) result {
	e.t.Helper()
	return retryRefused(e.t, func() result { return e.run(args...) })
}

// retryRefused runs a drill (run) again, twice, 5 s apart, while it is
// refused for a load the lab could not carry before its fault.
func retryRefused(t *testing.T, run func() result) result {
	t.Helper()
	r := run()
	for try := 0; try < 2 && (r.code == 2 || r.code == 1) && strings.Contains(r.stderr, refusedForLoad); try++ {
		t.Logf("refused for a load the lab could not carry then, tried again: %s", r.stderr)
		time.Sleep(5 * time.Second)
		r = run()
	}
	return r
}

// slowCommand is how long a command runs before the test's log says how
// long it took (where a test's time goes).
const slowCommand = 5 * time.Second

// collect runs c (hadrill with args) and returns what it printed and its
// exit code; a command that could not run fails the test.
func (e *env) collect(c *exec.Cmd, args []string) result {
	e.t.Helper()
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	start := time.Now()
	err := c.Run()
	if took := time.Since(start); took > slowCommand {
		e.t.Logf("hadrill %s: %.1fs", strings.Join(args, " "), took.Seconds())
	}
	code := 0
	if x, ok := err.(*exec.ExitError); ok {
		code = statusOf(x)
	} else if err != nil {
		e.t.Fatalf("hadrill %v: %v", args, err)
	}
	return result{out.String(), errb.String(), code}
}

// statusOf is a command's exit status as a shell shows it: 128 and the
// signal's number for one a signal ended (hadrill interrupted ends by the
// signal once it has cleaned up: 130 for INT, 143 TERM, 129 HUP, 141 PIPE).
func statusOf(x *exec.ExitError) int {
	if ws, ok := x.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return x.ExitCode()
}

// ok runs a command that must succeed.
func (e *env) ok(args ...string) result {
	e.t.Helper()
	r := e.run(args...)
	if r.code != 0 {
		e.t.Fatalf("hadrill %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

type status struct {
	Name  string `json:"name"`
	Nodes []struct {
		Name, Cluster, Kind, Role, Region, Netns, Address, State string
		Port, Pid                                                int
	} `json:"nodes"`
	LoadBalancers []struct{ Name, Netns, Address string } `json:"load_balancers"`
	Client        struct {
		Netns        string `json:"netns"`
		DefaultsFile string `json:"defaults_file"`
	} `json:"client"`
}

func (e *env) status(lab string) status {
	e.t.Helper()
	var s status
	e.statusInto(lab, &s)
	return s
}

// statusInto decodes `status -o json` into v (a view of the fields a test needs).
func (e *env) statusInto(lab string, v any) {
	e.t.Helper()
	r := e.ok("status", "--name", lab, "-o", "json")
	if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
		e.t.Fatalf("status json: %v\n%s", err, r.stdout)
	}
}

func (e *env) states(lab string) string {
	var out []string
	for _, n := range e.status(lab).Nodes {
		out = append(out, n.Name+"="+n.State)
	}
	return strings.Join(out, " ")
}

// sql runs SQL on a node (admin) and returns its tab-separated output.
func (e *env) sql(lab, node, query string) string {
	e.t.Helper()
	return strings.TrimSpace(e.ok("sql", node, "--name", lab, "-e", query).stdout)
}

// sqlInPrimary runs a write that needs the node in the primary component:
// while a member stalled by a busy machine is evicted and rejoins, the
// node may leave it for a moment (1047, 1180): the write is tried again
// for up to 60 s, and what happened is logged. Any other failure fails the
// test at once.
func (e *env) sqlInPrimary(lab, node, query string) string {
	e.t.Helper()
	for end := time.Now().Add(60 * time.Second); ; time.Sleep(time.Second) {
		r := e.run("sql", node, "--name", lab, "-e", query)
		out := r.stdout + r.stderr
		switch {
		case r.code == 0:
			return strings.TrimSpace(r.stdout)
		case time.Now().After(end) || !strings.Contains(out, "Primary Component") && !strings.Contains(out, "WSREP has not yet prepared"):
			e.t.Fatalf("sql %s on %s: exit %d\n%s", query, node, r.code, out)
		}
		e.t.Logf("sql on %s: not in the primary component now (%s): trying again", node, e.states(lab))
	}
}

// assertNoLeftovers: no namespace, process, mount or file of this home.
func (e *env) assertNoLeftovers() {
	e.t.Helper()
	entries, _ := os.ReadDir("/run/netns")
	for _, d := range entries {
		for lab := range e.labs {
			if d.Name() == "hd-"+lab || strings.HasPrefix(d.Name(), "hd-"+lab+"-") {
				e.t.Errorf("leftover network namespace %s", d.Name())
			}
		}
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, _ := os.ReadFile(p)
		if bytes.Contains(b, []byte(e.home)) && !isZombie(filepath.Dir(p)) {
			e.t.Errorf("leftover process %s: %s", filepath.Base(filepath.Dir(p)), bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
		}
	}
	for lab := range e.labs { // hosts' cgroups: hadrill/<lab> below hadrill's own cgroup in each hierarchy; the WAN emulator's beside it
		for _, pattern := range []string{"/sys/fs/cgroup/*/hadrill/", "/sys/fs/cgroup/*/*/hadrill/", "/sys/fs/cgroup/*/*/*/hadrill/", "/sys/fs/cgroup/*/*/*/*/hadrill/",
			"/sys/fs/cgroup/*/hadrill-netem-", "/sys/fs/cgroup/*/*/hadrill-netem-", "/sys/fs/cgroup/*/*/*/hadrill-netem-"} {
			left, _ := filepath.Glob(pattern + lab)
			for _, d := range left {
				e.t.Errorf("leftover cgroup %s", d)
			}
		}
	}
	backing, _ := filepath.Glob("/sys/block/loop*/loop/backing_file") // loop devices over the lab's disks
	for _, f := range backing {
		if b, _ := os.ReadFile(f); bytes.Contains(b, []byte(e.home)) {
			e.t.Errorf("leftover loop device %s over %s", filepath.Base(filepath.Dir(filepath.Dir(f))), bytes.TrimSpace(b))
		}
	}
	mounts, _ := os.ReadFile("/proc/mounts")
	if bytes.Contains(mounts, []byte(e.home)) {
		e.t.Errorf("leftover mount under %s", e.home)
	}
	labs, _ := os.ReadDir(filepath.Join(e.home, "labs"))
	for _, l := range labs {
		e.t.Errorf("leftover lab file %s", filepath.Join(e.home, "labs", l.Name()))
	}
	for f := range faketimeFiles() { // a server of the test's labs that ran under libfaketime
		if !e.shm[f] && e.alone() {
			e.t.Errorf("leftover %s (libfaketime's, of a server the test ran under it)", f)
		}
	}
}

func isZombie(procDir string) bool {
	b, _ := os.ReadFile(filepath.Join(procDir, "stat"))
	i := bytes.LastIndexByte(b, ')')
	return i > 0 && i+2 < len(b) && b[i+2] == 'Z'
}

// startUp starts `up` in the background, returning once stderr shows marker.
func (e *env) startUp(marker string, args ...string) (*exec.Cmd, *syncBuffer) {
	e.t.Helper()
	c := e.cmd(append([]string{"up"}, args...)...)
	buf := &syncBuffer{}
	c.Stderr, c.Stdout = buf, buf
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		e.t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(buf.String(), marker) {
		if time.Now().After(deadline) {
			_ = c.Process.Kill()
			e.t.Fatalf("up never printed %q:\n%s", marker, buf.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return c, buf
}

// sweepRecord runs a sysbench sweep on a lab (args after `bench sysbench`)
// and decodes the stored run's run.json into v; it returns the run's id.
func (e *env) sweepRecord(lab string, v any, args ...string) string {
	e.t.Helper()
	r := e.ok(append([]string{"bench", "sysbench", "--name", lab, "-o", "json"}, args...)...)
	var out struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		e.t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(e.home, "runs", out.RunID, "run.json"))
	if err != nil {
		e.t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		e.t.Fatalf("run.json: %v\n%s", err, b)
	}
	return out.RunID
}

// benchDisk runs `hadrill bench disk` on a lab (args after it) and decodes
// its output into v, which must hold want results.
func (e *env) benchDisk(lab string, v any, want int, args ...string) {
	e.t.Helper()
	r := e.ok(append([]string{"bench", "disk", "--name", lab, "-o", "json"}, args...)...)
	var n struct {
		Results []json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal([]byte(r.stdout), v); err != nil || json.Unmarshal([]byte(r.stdout), &n) != nil || len(n.Results) != want {
		e.t.Fatalf("bench disk %v: %v, want %d results\n%s", args, err, want, r.stdout)
	}
}

// inBrowser opens a report in headless Chromium at 1280 px: the DOM as
// the browser built it, and whether the page scrolls sideways (a probe
// added to a copy of the file, never to the report itself, reads the
// document's widths into its title).
func (e *env) inBrowser(html string) (dom string, sideways bool) {
	e.t.Helper()
	b, err := os.ReadFile(html)
	if err != nil {
		e.t.Fatal(err)
	}
	probe := `<script>window.addEventListener("load", () => { document.title = "widths " + document.documentElement.scrollWidth + " " + document.documentElement.clientWidth })</script>`
	copyFile := filepath.Join(e.home, "browser-probe.html")
	if err := os.WriteFile(copyFile, []byte(strings.Replace(string(b), "</body>", probe+"</body>", 1)), 0o644); err != nil {
		e.t.Fatal(err)
	}
	c := exec.Command("chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-breakpad", "--no-first-run",
		"--user-data-dir="+filepath.Join(e.home, "chromium"), "--window-size=1280,900", "--virtual-time-budget=3000", "--dump-dom", "file://"+copyFile)
	c.Env = append(os.Environ(), "HOME="+e.home) // its crash reports stay in the test's home
	out, err := c.Output()
	if err != nil {
		e.t.Fatalf("chromium: %v", err)
	}
	var scroll, client int
	if _, err := fmt.Sscanf(string(out[strings.Index(string(out), "<title>widths ")+len("<title>widths "):]), "%d %d", &scroll, &client); err != nil {
		e.t.Fatalf("the browser probe did not run: %v", err)
	}
	return string(out), scroll > client
}
