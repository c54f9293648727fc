package supervise

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
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
		if _, err := os.Stat(ready); err != nil {
			return err
		}
		if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", p.Pid)); string(b) != "sleep\n" {
			return fmt.Errorf("the shell has not exec'd sleep yet") // touched, but still sh
		}
		return nil
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

func TestKilledProcessIsNotAlive(t *testing.T) {
	dir := t.TempDir()
	p, err := (Daemon{Name: "sleeper", Argv: []string{"sleep", "60"}, LogFile: filepath.Join(dir, "log"), Dir: dir, Marker: "sleep"}).Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = Kill(p.Pid) })
	if !Alive(p.Pid) || !Present(p.Pid) {
		t.Fatal("not alive before the kill")
	}
	if err := Kill(p.Pid); err != nil {
		t.Fatal(err)
	}
	if Alive(p.Pid) || Present(p.Pid) {
		t.Fatal("alive after Kill returned")
	}
}

// The moment between kill -9 and the exit is too short to catch reliably on
// a live process, so the reading of /proc is checked on captured files.
func TestParseState(t *testing.T) {
	stat := func(state string, flags uint64) string {
		return fmt.Sprintf("4242 (mariadbd) %s 1 4242 4242 0 -1 %d 99 0 0 0 0 0 0 0 20 0 1 0 286189", state, flags)
	}
	status := func(sigPnd, shdPnd string) string {
		return "Name:\tmariadbd\nState:\tS (sleeping)\nSigQ:\t1/95000\nSigPnd:\t" + sigPnd + "\nShdPnd:\t" + shdPnd + "\nSigBlk:\t0000000000000000\n"
	}
	const none, kill, term = "0000000000000000", "0000000000000100", "0000000000004000"
	for _, c := range []struct {
		name             string
		stat, status     string
		present, exiting bool
	}{
		{"running", stat("S", 4194304), status(none, none), true, false},
		{"kill queued for the group", stat("S", 4194304), status(none, kill), true, true},
		{"kill queued for the thread", stat("R", 4194304), status(kill, none), true, true},
		{"term queued is not an exit", stat("S", 4194304), status(none, term), true, false},
		{"exiting flag", stat("R", 4194304|pfExiting), status(none, none), true, true},
		{"paused", stat("T", 4194304), status(none, none), true, false},
		{"zombie", stat("Z", 4194304|pfExiting), status(none, none), false, false},
		{"dead", stat("X", 0), "", false, false},
		{"name with a parenthesis and spaces", "7 (a) b (c) S 1 7 7 0 -1 0 0", status(none, none), true, false},
		{"status unreadable", stat("S", 0), "", true, false},
		{"truncated", "7 (a", "", false, false},
	} {
		present, exiting := parseState(c.stat, c.status)
		if present != c.present || exiting != c.exiting {
			t.Errorf("%s: present %v exiting %v, want %v %v", c.name, present, exiting, c.present, c.exiting)
		}
	}
}

// Whether the process at a daemon's old pid is that daemon on its way out.
func TestPredecessor(t *testing.T) {
	const marker = "/labs/a/d/marker"
	cmd := []byte("sh\x00-c\x00sleep 60\x00" + marker + "\x00")
	for _, c := range []struct {
		name             string
		present, leaving bool
		cmdline          []byte
		want             bool
	}{
		{"running, its command line", true, false, cmd, true},
		{"exiting, memory released", true, true, nil, true},
		{"gone", false, false, nil, false},
		{"a kernel thread took the pid", true, false, nil, false},
		{"another program took the pid", true, false, []byte("cat\x00"), false},
		{"another program exiting", true, true, []byte("cat\x00"), false},
	} {
		if got := predecessor(c.present, c.leaving, c.cmdline, marker); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// A pidfile caught empty while its daemon rewrites it (mariadbd truncates
// the file hadrill wrote, then writes its pid) is read again, not taken
// for a daemon gone; one that stays empty is 0.
func TestReadPidBeingRewritten(t *testing.T) {
	f := filepath.Join(t.TempDir(), "mysqld.pid")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := ReadPid(f); got != 0 {
		t.Errorf("an empty pidfile: %d", got)
	}
	go func() {
		time.Sleep(2 * pidReread)
		os.WriteFile(f, []byte("4242\n"), 0o644)
	}()
	if got := ReadPid(f); got != 4242 {
		t.Errorf("a pidfile written while it was read: %d, want 4242", got)
	}
	if got := ReadPid(filepath.Join(t.TempDir(), "none")); got != 0 {
		t.Errorf("no pidfile: %d", got)
	}
}

// TestPollFinal: a probe's Final error ends the wait at once, named; any
// other keeps it going until the deadline.
func TestPollFinal(t *testing.T) {
	out := errors.New("left its cluster")
	probes := 0
	start := time.Now()
	err := Poll(context.Background(), "db3", 5*time.Second, 10*time.Millisecond, func(context.Context) error {
		if probes++; probes < 3 {
			return errors.New("joining")
		}
		return Final(out)
	}, func() error { return nil })
	if !errors.Is(err, out) || err.Error() != "db3: left its cluster" || probes != 3 || time.Since(start) > 2*time.Second {
		t.Errorf("%v after %d probes, %v", err, probes, time.Since(start))
	}
}

func TestDescendants(t *testing.T) {
	procs := map[int]proc{10: {1, 10}, 11: {10, 10}, 12: {10, 10}, 13: {11, 10}, 20: {1, 20}, 21: {20, 20},
		14: {10, 14}, 15: {14, 14}} // 14: a daemon 10 started, leading its own session
	if got := descendants(10, procs); fmt.Sprint(got) != "[11 12 13]" {
		t.Errorf("descendants of 10: %v", got)
	}
	if got := descendants(13, procs); len(got) != 0 {
		t.Errorf("descendants of a leaf: %v", got)
	}
}

// TestKillTree: a helper and its child end; the process group they share
// with their parent does not.
func TestKillTree(t *testing.T) {
	leader := exec.Command("sh", "-c", "sh -c 'sleep 60 & sleep 60; :' & echo $!; sleep 60")
	leader.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := leader.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := leader.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Kill(-leader.Process.Pid, syscall.SIGKILL); _ = leader.Wait() }()
	var helper int
	if _, err := fmt.Fscan(out, &helper); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	kids := descendants(helper, processes())
	if len(kids) == 0 {
		t.Fatalf("helper %d has no children", helper)
	}
	if err := KillTree(helper); err != nil {
		t.Fatal(err)
	}
	for _, k := range kids {
		if !WaitGone(k, 5*time.Second) {
			t.Errorf("the helper's child %d survived", k)
		}
	}
	if !Alive(leader.Process.Pid) {
		t.Errorf("the helper's parent, in the same group, was ended")
	}
}

// TestOwnedKernelThread: a kernel thread's command line is empty for good:
// it is judged at once, not waited on as a program being executed.
func TestOwnedKernelThread(t *testing.T) {
	start := time.Now()
	if Owned(2, "kthreadd") {
		t.Error("kthreadd (pid 2) owned")
	}
	if took := time.Since(start); took > 200*time.Millisecond {
		t.Errorf("a kernel thread took %v to judge", took)
	}
	for stat, want := range map[string]bool{
		"2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 1 0 0":   true,
		"77 (sleep) S 1 77 77 0 -1 4194304 100 0 0 0 0 0 0 0 20 0 1 0 1 0 0": false,
		"garbage": false,
	} {
		if got := kernelThread(stat); got != want {
			t.Errorf("kernelThread(%q) = %v", stat, got)
		}
	}
}
