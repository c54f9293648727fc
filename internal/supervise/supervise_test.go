package supervise

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestStartReadyStop(t *testing.T) {
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	d := Daemon{Name: "sleeper", Argv: []string{"sh", "-c", "touch " + ready + "; exec sleep 60"},
		LogFile: filepath.Join(dir, "log"), PidFile: filepath.Join(dir, "pid"), Dir: filepath.Join(dir, "work"), Marker: "sleep 60"}
	p, err := d.Ensure()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = Kill(p.Pid) })
	err = p.WaitReady(context.Background(), 5*time.Second, 10*time.Millisecond, func(context.Context) error {
		_, err := os.Stat(ready)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if ReadPid(filepath.Join(dir, "pid")) != p.Pid || !Owned(p.Pid, "sleep 60") || Owned(p.Pid, "sleep 6") || Owned(p.Pid, "mariadbd") {
		t.Fatal("pidfile or ownership wrong")
	}
	// a daemon runs in its own directory, never in the caller's
	if cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", p.Pid)); err != nil || cwd != filepath.Join(dir, "work") {
		t.Fatalf("working directory %q (%v), want %s", cwd, err, filepath.Join(dir, "work"))
	}
	if _, err := (Daemon{Name: "nowhere", Argv: []string{"true"}, LogFile: filepath.Join(dir, "log2"), Marker: "true"}).Start(); err == nil {
		t.Fatal("a daemon without a working directory must be refused")
	}
	// the daemon is recognised by its pid file and marker; a second Ensure starts nothing
	if d.Pid() != p.Pid {
		t.Fatalf("Pid() = %d, want %d", d.Pid(), p.Pid)
	}
	if again, err := d.Ensure(); err != nil || again != nil {
		t.Fatalf("Ensure on a running daemon started %v (%v)", again, err)
	}
	other := d
	other.Marker = filepath.Join(dir, "not-this-one")
	if other.Pid() != 0 {
		t.Fatal("a pid whose command line lacks the marker was taken for the daemon")
	}
	if err := d.Stop(2 * time.Second); err != nil || Alive(p.Pid) || d.Pid() != 0 {
		t.Fatalf("stop: %v alive=%v", err, Alive(p.Pid))
	}
}

func TestEarlyExitIsReported(t *testing.T) {
	dir := t.TempDir()
	p, err := (Daemon{Name: "bad", Argv: []string{"sh", "-c", "echo boom; exit 3"}, LogFile: filepath.Join(dir, "log"), Dir: dir, Marker: "sh"}).Start()
	if err != nil {
		t.Fatal(err)
	}
	err = p.WaitReady(context.Background(), 5*time.Second, 10*time.Millisecond, func(context.Context) error {
		return errors.New("not yet")
	})
	if err == nil || !strings.Contains(err.Error(), "exited during start-up") {
		t.Fatalf("got %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "log")); !strings.Contains(string(b), "boom") {
		t.Fatal("output not captured")
	}
}

func TestStopEscalatesToKill(t *testing.T) {
	dir := t.TempDir()
	p, err := (Daemon{Name: "stubborn", Argv: []string{"sh", "-c", "trap '' TERM; while :; do sleep 0.05; done"}, LogFile: filepath.Join(dir, "log"), Dir: dir, Marker: "sh"}).Start()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if err := Stop(p.Pid, 300*time.Millisecond); err != nil || Alive(p.Pid) {
		t.Fatalf("stop: %v", err)
	}
}

func TestKilledProcessIsNotAliveAtOnce(t *testing.T) {
	dir := t.TempDir()
	p, err := (Daemon{Name: "sleeper", Argv: []string{"sleep", "60"}, LogFile: filepath.Join(dir, "log"), Dir: dir, Marker: "sleep"}).Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = Kill(p.Pid) })
	// Right after kill() the target may not have run yet: the signal is only
	// pending, and the process must already count as gone.
	if !Alive(p.Pid) {
		t.Fatal("not alive before the kill")
	}
	_ = syscall.Kill(p.Pid, syscall.SIGKILL)
	if Alive(p.Pid) {
		t.Fatal("alive right after SIGKILL")
	}
}
