package ssh

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/inventory"
	"github.com/hadrill/hadrill/internal/netns"
	"github.com/hadrill/hadrill/internal/sshtest"
)

// TestRemoteHost: a host reached over a real OpenSSH server (in a network
// namespace), from the controller's namespace. hadrill is copied once
// (a second Install copies nothing), files are written, read and removed
// below the host's directory and refused outside it, a daemon is started,
// found, stopped and killed, and a unix socket on the host is dialed.
func TestRemoteHost(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sshd")
	}
	exe := os.Getenv("HADRILL_BIN")
	if exe == "" {
		t.Skip("HADRILL_BIN not set (the hadrill binary to copy to the host)")
	}
	dir, err := os.MkdirTemp("/tmp", "hdsshtest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	hs := sshtest.Start(t, "utssh", "198.19.251", dir, "db1")
	ctlNs, _ := hs.Link("ctl", 250)
	DialTCP = func(ctx context.Context, addr string) (net.Conn, error) { return netns.Dial(ctx, ctlNs, "tcp", addr) }
	t.Cleanup(func() { DialTCP = defaultDial })
	inv, err := inventory.Parse([]byte(hs.Inventory(nil)), dir, "inv", inventory.Env{Home: hs.Controller})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c, err := Connect(ctx, inv.Hosts["db1"], 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	version, err := exec.Command(exe, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	v := strings.TrimPrefix(strings.TrimSpace(string(version)), "hadrill version ")
	r, err := Install(ctx, c, exe, v)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(r.Exe())
	if err != nil || st.Mode().Perm() != 0o700 || !strings.HasPrefix(r.Exe(), hs.Hosts["db1"].Dir+"/bin/hadrill-") {
		t.Fatalf("copy %s: %v %v", r.Exe(), st, err)
	}
	before := st.ModTime()
	time.Sleep(10 * time.Millisecond)
	if _, err := Install(ctx, c, exe, v); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(r.Exe()); !st.ModTime().Equal(before) {
		t.Errorf("a second Install copied hadrill again")
	}
	if _, err := Install(ctx, c, exe, "another"); err == nil || !strings.Contains(err.Error(), `not "another"`) {
		t.Errorf("version mismatch: %v", err)
	}

	var h host.Host = r
	root := hs.Hosts["db1"].Dir
	f := filepath.Join(root, "labs", "t", "secrets", "x")
	if err := h.WriteFile(ctx, f, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := h.ReadFile(ctx, f); err != nil || string(b) != "secret\n" {
		t.Errorf("read back: %q %v", b, err)
	}
	if st, _ := os.Stat(f); st == nil || st.Mode().Perm() != 0o600 {
		t.Errorf("mode: %v", st)
	}
	if err := h.WriteFile(ctx, "/etc/hadrill-test", []byte("x"), 0o644); err == nil || !strings.Contains(err.Error(), "outside hadrill's directory") {
		t.Errorf("write outside: %v", err)
	}
	if _, err := h.ReadFile(ctx, filepath.Join(root, "nothing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if out, err := h.Run(ctx, []string{"sh", "-c", "echo $1; exit 3", "sh", "it's"}, nil); err == nil || !strings.Contains(err.Error(), "exit 3") {
		t.Errorf("exit 3: %q %v", out, err)
	}
	if out, err := h.Run(ctx, []string{"cat"}, strings.NewReader("in")); err != nil || string(out) != "in" {
		t.Errorf("stdin: %q %v", out, err)
	}

	// a daemon: a unix socket server (socat) the controller dials through SSH
	d := filepath.Join(root, "labs", "t", "echo")
	sock := filepath.Join(d, "echo.sock")
	daemon := host.Daemon{Name: "db1 echo", Argv: []string{"socat", "UNIX-LISTEN:" + sock + ",fork", "EXEC:cat"}, Dir: d,
		LogFile: filepath.Join(d, "log"), PidFile: filepath.Join(d, "pid"), Marker: "UNIX-LISTEN:" + sock + ",fork"}
	pid, started, err := h.Ensure(ctx, daemon)
	if err != nil || pid == 0 || !started {
		t.Fatalf("ensure: %d %v %v", pid, started, err)
	}
	t.Cleanup(func() { h.Kill(context.Background(), daemon) })
	if again, started, _ := h.Ensure(ctx, daemon); again != pid || started {
		t.Errorf("ensure again: %d %v", again, started)
	}
	var conn net.Conn
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if conn, err = h.Dial(ctx, "unix", sock); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatalf("dial %s: %v", sock, err)
	}
	fmt.Fprint(conn, "ping\n")
	buf := make([]byte, 5)
	if _, err := io.ReadFull(conn, buf); err != nil || string(buf) != "ping\n" {
		t.Errorf("echo over the socket: %q %v", buf, err)
	}
	conn.Close()
	if got, _ := h.Process(ctx, daemon); got.Pid != pid || got.Paused {
		t.Errorf("process %+v, want pid %d", got, pid)
	}
	// the hosts share this machine's processes: a SIGSTOP here is seen there
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// a stop takes effect once the process is scheduled: on a busy
	// computer, a moment after the signal
	got, _ := h.Process(ctx, daemon)
	for end := time.Now().Add(2 * time.Second); !got.Paused && time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		got, _ = h.Process(ctx, daemon)
	}
	if got.Pid != pid || !got.Paused {
		t.Errorf("a stopped daemon: %+v, want pid %d paused", got, pid)
	}
	if err := h.Stop(ctx, daemon, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	if got, _ := h.Process(ctx, daemon); got.Pid != 0 {
		t.Errorf("process after stop: %+v", got)
	}
	if _, _, err := h.Ensure(ctx, daemon); err != nil {
		t.Fatal(err)
	}
	if err := h.Kill(ctx, daemon); err != nil {
		t.Fatal(err)
	}
	if got, _ := h.Process(ctx, daemon); got.Pid != 0 {
		t.Errorf("process after kill: %+v", got)
	}
	if err := h.RemoveAll(ctx, filepath.Join(root, "labs", "t")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "labs", "t")); !os.IsNotExist(err) {
		t.Errorf("RemoveAll left %v", err)
	}
	if err := h.RemoveAll(ctx, root); err == nil {
		t.Errorf("removing the host's directory itself was allowed")
	}
}
