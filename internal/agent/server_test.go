package agent

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// A pidfile's pid is the server's only while its command line holds the
// server's marker: a pid another process took is not a live server.
func TestServerAlive(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "my.cnf")
	cmd := exec.Command("sh", "-c", "sleep 60", "--defaults-file="+marker)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pidFile := filepath.Join(t.TempDir(), "mysqld.pid")
	write := func(pid int) {
		if err := os.WriteFile(pidFile, []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(cmd.Process.Pid)
	if !serverAlive(pidFile, marker) || !serverAlive(pidFile, "") {
		t.Error("the server's own pid is not alive")
	}
	write(os.Getpid()) // alive, but another process
	if serverAlive(pidFile, marker) {
		t.Error("a pid reused by another process counts as the server")
	}
	if serverAlive(filepath.Join(t.TempDir(), "none.pid"), marker) {
		t.Error("no pidfile counts as a live server")
	}
}
