package host

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/hadrill/hadrill/internal/supervise"
)

// TestReap: reaping a lab ends its processes (one found by a path in its
// arguments, one by its working directory) and nothing else, removes the
// lab's directory and, the last lab gone, hadrill's copies and labs/.
func TestReap(t *testing.T) {
	root := t.TempDir()
	lab := filepath.Join(root, "labs", "t")
	other := filepath.Join(root, "labs", "u")
	for _, d := range []string{filepath.Join(lab, "arb"), other, filepath.Join(root, "bin")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	start := func(dir string, arg string) *exec.Cmd { // arg: the shell's $0, in its command line
		c := exec.Command("sh", "-c", "sleep 60; :", arg)
		c.Dir = dir
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		go c.Wait()
		t.Cleanup(func() { syscall.Kill(-c.Process.Pid, syscall.SIGKILL) })
		return c
	}
	byArg := start("/", "--defaults-file="+lab+"/my.cnf")
	byCwd := start(filepath.Join(lab, "arb"), "x")
	neighbour := start(other, "x")
	prefix := start("/", lab+"x") // a lab whose name starts with t's
	if _, err := serve(t, root, "", "reap", "/etc"); err == nil {
		t.Error("reap outside root/labs accepted")
	}
	if _, err := serve(t, root, "", "reap", lab); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*exec.Cmd{byArg, byCwd} {
		if !supervise.WaitGone(c.Process.Pid, 0) {
			t.Errorf("pid %d of the lab survived", c.Process.Pid)
		}
	}
	for _, c := range []*exec.Cmd{neighbour, prefix} {
		if !supervise.Alive(c.Process.Pid) {
			t.Errorf("pid %d (%v) of another lab was killed", c.Process.Pid, c.Args)
		}
	}
	if _, err := os.Stat(lab); !os.IsNotExist(err) {
		t.Errorf("the lab's directory is left: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "bin")); err != nil {
		t.Errorf("hadrill's copies removed while another lab is left: %v", err)
	}
	syscall.Kill(-neighbour.Process.Pid, syscall.SIGKILL)
	supervise.WaitGone(neighbour.Process.Pid, 5e9)
	if _, err := serve(t, root, "", "reap", other); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(root); len(left) != 0 {
		t.Errorf("the last lab gone, root still holds %v", left)
	}
}
