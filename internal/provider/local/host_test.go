package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/plan"
)

// TestHost: a rootless lab's host runs commands, writes and reads files
// atomically, and owns a daemon (started once, found, stopped, killed)
// with the shared readiness wait.
func TestHost(t *testing.T) {
	dir := t.TempDir()
	var h host.Host = New(&plan.Plan{Mode: plan.ModeRootless}, "/usr/bin/hadrill", "nobody").Host("db1")
	ctx := context.Background()
	if h.Name() != "db1" || h.Exe() != "/usr/bin/hadrill" {
		t.Errorf("host %s, exe %s", h.Name(), h.Exe())
	}
	if out, err := h.Run(ctx, []string{"cat"}, strings.NewReader("in")); err != nil || string(out) != "in" {
		t.Errorf("run: %q %v", out, err)
	}
	if _, err := h.Run(ctx, []string{"sh", "-c", "echo why >&2; exit 4"}, nil); err == nil || !strings.Contains(err.Error(), "why") {
		t.Errorf("a failing command: %v", err)
	}
	f := filepath.Join(dir, "a", "b", "drain")
	if err := h.WriteFile(ctx, f, []byte("x\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(f); st == nil || st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v", st)
	}
	if b, err := h.ReadFile(ctx, f); err != nil || string(b) != "x\n" {
		t.Errorf("read %q %v", b, err)
	}
	if err := h.RemoveAll(ctx, f); err != nil {
		t.Fatal(err)
	}
	if _, err := h.ReadFile(ctx, f); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("removed file: %v", err)
	}

	marker := filepath.Join(dir, "sleeper")
	d := host.Daemon{Name: "db1 sleeper", Argv: []string{"sh", "-c", "sleep 60; :", marker}, Dir: dir, LogFile: filepath.Join(dir, "log"),
		PidFile: filepath.Join(dir, "pid"), Marker: marker}
	ready := 0
	if err := host.EnsureReady(ctx, h, d, 5*time.Second, 10*time.Millisecond, func(context.Context) error {
		if ready++; ready < 3 {
			return errors.New("not yet")
		}
		return nil
	}); err != nil || ready != 3 {
		t.Fatalf("ensure ready: %v (%d probes)", err, ready)
	}
	t.Cleanup(func() { h.Kill(context.Background(), d) })
	pid, started, err := h.Ensure(ctx, d)
	if err != nil || pid == 0 || started {
		t.Errorf("ensure of a running daemon: %d %v %v", pid, started, err)
	}
	if got, _ := h.Process(ctx, d); got.Pid != pid || got.Paused {
		t.Errorf("process %+v, want pid %d", got, pid)
	}
	if err := h.Stop(ctx, d, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	if got, _ := h.Process(ctx, d); got.Pid != 0 {
		t.Errorf("process after stop %+v", got)
	}
	// a daemon that dies while starting fails the wait, naming its log
	dead := d
	dead.Argv = []string{"sh", "-c", "exit 1", marker}
	err = host.EnsureReady(ctx, h, dead, 5*time.Second, 10*time.Millisecond, func(context.Context) error { return errors.New("no answer") })
	if err == nil || !strings.Contains(err.Error(), "exited during start-up (pid ") || !strings.Contains(err.Error(), d.LogFile) {
		t.Errorf("a daemon that exits: %v", err)
	}
	t.Log(err)
	if _, _, err := h.Ensure(ctx, host.Daemon{Name: "bad"}); err == nil {
		t.Errorf("a daemon without a command was started")
	}
}
