package integration

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCtrlCDuringUp: an interrupted up removes everything by itself.
func TestCtrlCDuringUp(t *testing.T) {
	t.Parallel()
	takeSlot(t) // its subtests, one after another, run in it
	for _, marker := range []string{"lab dir", "starting 3 servers"} {
		t.Run(marker, func(t *testing.T) {
			e := newEnv(t)
			if marker == "lab dir" { // as early as possible: the lab dir exists
				marker = ""
			}
			c, out := e.startUp(marker, "--name", "itint")
			if marker == "" {
				waitFor(t, func() bool { _, err := os.Stat(filepath.Join(e.home, "labs", "itint")); return err == nil })
			}
			c.Process.Signal(os.Interrupt)
			err := c.Wait()
			if err == nil {
				t.Logf("up finished before the interrupt arrived:\n%s", out)
				e.ok("down", "--name", "itint")
			}
			e.assertNoLeftovers()
		})
	}
}

// TestKilledUpThenDown: kill -9 of hadrill mid-up, then down leaves nothing.
func TestKilledUpThenDown(t *testing.T) {
	t.Parallel()
	takeSlot(t) // its subtests, one after another, run in it
	for _, marker := range []string{"hosts and datadirs ready", "starting 3 servers"} {
		t.Run(marker, func(t *testing.T) {
			e := newEnv(t)
			c, _ := e.startUp(marker, "--name", "itkill")
			syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
			c.Wait()
			if r := e.run("status", "--name", "itkill"); r.code != 0 {
				t.Logf("status of a half-made lab: exit %d %s", r.code, r.stderr)
			}
			e.ok("down", "--name", "itkill")
			e.assertNoLeftovers()
		})
	}
}

// TestRejectedOverrideFailsCleanly: mariadbd refuses a config option (up
// refuses it first, exit 2), or takes one and cannot start with it (up says
// why, the server's own error lines, and leaves nothing).
func TestRejectedOverrideFailsCleanly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// an option the server does not know is refused before anything is made
	// (the server's own words, from mariadbd --verbose --help)
	spec := e.writeSpec("bad.yaml", "clusters:\n  - name: db\n    nodes: 3\n    config:\n      innodb_no_such_option: 1\n")
	if r := e.run("up", "--name", "itbad", "-f", spec); r.code != 2 || !strings.Contains(r.stderr, "clusters[0].config.innodb_no_such_option: mariadbd refuses or changes it: unknown variable") {
		t.Errorf("an unknown option: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	// one it reads but cannot start with (a redo log directory that does
	// not exist) fails the servers' start, said in their words, and leaves
	// nothing
	spec = e.writeSpec("bad2.yaml", "clusters:\n  - name: db\n    nodes: 3\n    config:\n      innodb_log_group_home_dir: missing\n")
	r := e.run("up", "--name", "itbad", "-f", spec)
	if r.code != 1 || !strings.Contains(r.stderr, "missing/ib_logfile0 was not found") || !strings.Contains(r.stderr, "exited during start-up") {
		t.Errorf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	e.assertNoLeftovers()
}

// TestPortTakenFailsCleanly: in rootless mode a node's address:port is in
// use by someone else; up says so and leaves nothing.
func TestPortTakenFailsCleanly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.vars = append(e.vars, "HADRILL_ROOTLESS=1")
	var p struct {
		Nodes []struct {
			Address string
			Port    int
		}
	}
	if err := json.Unmarshal([]byte(e.ok("plan", "--name", "itport", "-o", "json").stdout), &p); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(p.Nodes[1].Address, "3306"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	r := e.run("up", "--name", "itport")
	if r.code != 1 || !strings.Contains(r.stderr, "Address already in use") {
		t.Errorf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	e.assertNoLeftovers()
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not met in 30s")
}
