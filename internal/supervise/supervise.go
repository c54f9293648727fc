// Package supervise is the one place long-running processes are started:
// detached (own session and process group), output to a log file, a pidfile,
// readiness with a deadline, stop with TERM then KILL, pause and resume.
package supervise

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Daemon is one long-running process hadrill supervises: how it starts,
// where it runs and what it leaves, and how it is recognised later. Every
// daemon (servers, agents, load balancers, arbitrators, the keeper, the
// WAN emulator) is one: the plan resolves its files (plan.Daemon) and its
// package names it and gives its command (plan.Daemon.Named); a host runs
// it (host.Daemon is this type), wrapping its command for the host
// (WithArgv).
type Daemon struct {
	Name    string   `json:"name"` // for messages, e.g. "db1 mariadbd"
	Argv    []string `json:"argv"` // the full command
	LogFile string   `json:"log_file"`
	PidFile string   `json:"pid_file"` // hadrill writes the child's pid here
	// Dir is the daemon's working directory, inside the lab (created if
	// missing): whatever a daemon writes relative to it (garbd's
	// gvwstate.dat, core files) stays in the lab, never in the caller's
	// directory.
	Dir string `json:"dir"`
	// Marker is a string the daemon's command line contains and no other
	// process's does (a path of its own inside the lab): a pid read from
	// the pid file is this daemon's only if its command line holds it, so a
	// recycled pid is never signalled.
	Marker string `json:"marker"`
	// Helper marks a process hadrill did not start itself but one of its
	// daemons did, in that daemon's process group (a server's state
	// transfer script): Kill ends it and every process descended from it,
	// never the group it shares.
	Helper bool `json:"helper,omitempty"`
}

// WithArgv is the daemon with its command made to run where it runs (a
// host's namespace, libfaketime...).
func (d Daemon) WithArgv(argv []string) Daemon {
	d.Argv = argv
	return d
}

// Check says what makes a daemon unfit to start.
func (d Daemon) Check() error {
	switch {
	case len(d.Argv) == 0:
		return fmt.Errorf("%s: empty command", d.Name)
	case d.Dir == "" || d.LogFile == "" || d.PidFile == "":
		return fmt.Errorf("%s: a daemon needs a working directory, a log file and a pid file", d.Name)
	case d.Marker == "":
		return fmt.Errorf("%s: no identity marker", d.Name)
	}
	return nil
}

// Pid is the daemon's pid while it runs, else 0.
func (d Daemon) Pid() int {
	pid := ReadPid(d.PidFile)
	if d.Marker != "" && Owned(pid, d.Marker) {
		return pid
	}
	return 0
}

// Running reports whether the daemon runs.
func (d Daemon) Running() bool { return d.Pid() != 0 }

// Ensure starts the daemon unless it runs; it returns the started process
// (nil when it was running already).
func (d Daemon) Ensure() (*Proc, error) {
	if d.Running() {
		return nil, nil
	}
	return d.Start()
}

// Stop ends the daemon: TERM, then KILL after grace.
func (d Daemon) Stop(grace time.Duration) error {
	if pid := d.Pid(); pid != 0 {
		if err := Stop(pid, grace); err != nil {
			return fmt.Errorf("%s: %w", d.Name, err)
		}
	}
	return nil
}

// Kill ends the daemon and its process group at once (a helper: it and
// its descendants).
func (d Daemon) Kill() error {
	if pid := d.Pid(); pid != 0 {
		kill := Kill
		if d.Helper {
			kill = KillTree
		}
		if err := kill(pid); err != nil {
			return fmt.Errorf("%s: %w", d.Name, err)
		}
	}
	return nil
}

// Signal sends the daemon's process sig (a pid whose process is not the
// daemon's is never signalled); running says whether it ran.
func (d Daemon) Signal(sig syscall.Signal) (running bool, err error) {
	pid := d.Pid()
	if pid == 0 {
		return false, nil
	}
	if err := syscall.Kill(pid, sig); err != nil {
		return true, fmt.Errorf("%s: %w", d.Name, err)
	}
	return true, nil
}

// EnsureReady starts the daemon unless it runs and, when it started it,
// waits until ready answers (every interval, at most deadline).
func (d Daemon) EnsureReady(ctx context.Context, deadline, every time.Duration, ready func(context.Context) error) error {
	p, err := d.Ensure()
	if err != nil || p == nil {
		return err
	}
	return p.WaitReady(ctx, deadline, every, ready)
}

// exiting reports whether pid is this daemon's previous process on its way
// out (killed a moment ago, it may still hold its ports and files).
func (d Daemon) exiting(pid int) bool {
	present, leaving := procState(pid)
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err == nil && predecessor(present, leaving, b, d.Marker)
}

// predecessor decides whether a process found at a daemon's old pid is
// that daemon on its way out: present, and its command line holds the
// marker, or is gone already while it exits (an exiting process's memory
// is released before it leaves the process table). An empty command line
// alone is not enough: a kernel thread has none, and one that took the
// recycled pid would be waited for in vain.
func predecessor(present, leaving bool, cmdline []byte, marker string) bool {
	return present && (holds(cmdline, marker) || (len(cmdline) == 0 && leaving))
}

// holds reports whether a /proc cmdline holds marker as whole arguments.
func holds(cmdline []byte, marker string) bool {
	return strings.Contains(string(cmdline), strings.ReplaceAll(marker, " ", "\x00")+"\x00")
}

// Proc is a started daemon.
type Proc struct {
	Name string
	Pid  int
	done chan struct{}
	err  error
}

// Start launches the daemon detached from hadrill: a new session (so Ctrl-C
// in the terminal does not reach it), stdin from /dev/null.
func (d Daemon) Start() (*Proc, error) {
	if len(d.Argv) == 0 {
		return nil, fmt.Errorf("%s: empty command", d.Name)
	}
	if d.Dir == "" {
		return nil, fmt.Errorf("%s: no working directory", d.Name)
	}
	if d.Marker == "" {
		return nil, fmt.Errorf("%s: no identity marker", d.Name)
	}
	if old := ReadPid(d.PidFile); d.exiting(old) && !WaitGone(old, 30*time.Second) {
		return nil, fmt.Errorf("%s: the previous process (pid %d) has not exited", d.Name, old)
	}
	if err := os.MkdirAll(d.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("%s: working directory: %w", d.Name, err)
	}
	logf, err := os.OpenFile(d.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return nil, fmt.Errorf("%s: log file: %w", d.Name, err)
	}
	defer logf.Close()
	cmd := exec.Command(d.Argv[0], d.Argv[1:]...)
	cmd.Stdout, cmd.Stderr, cmd.Dir = logf, logf, d.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: start %s: %w", d.Name, d.Argv[0], err)
	}
	p := &Proc{Name: d.Name, Pid: cmd.Process.Pid, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	if d.PidFile != "" {
		if err := os.WriteFile(d.PidFile, []byte(strconv.Itoa(p.Pid)+"\n"), 0o644); err != nil {
			_ = Kill(p.Pid)
			return nil, fmt.Errorf("%s: pidfile: %w", d.Name, err)
		}
	}
	return p, nil
}

// Exited is closed when the process has exited (only while hadrill is its parent).
func (p *Proc) Exited() <-chan struct{} { return p.done }

// ExitErr is the exit status once Exited is closed.
func (p *Proc) ExitErr() error { return p.err }

// WaitReady polls probe until it succeeds, the process exits, or the deadline passes.
func (p *Proc) WaitReady(ctx context.Context, deadline time.Duration, every time.Duration, probe func(context.Context) error) error {
	return Poll(ctx, p.Name, deadline, every, probe, func() error {
		select {
		case <-p.done:
			return fmt.Errorf("%s exited during start-up (%v)", p.Name, p.err)
		default:
			return nil
		}
	})
}

// Final marks a probe's error as one no wait gets past (a server out of
// its cluster until it is restarted): Poll returns it at once.
func Final(err error) error { return &final{err} }

type final struct{ err error }

func (f *final) Error() string { return f.err.Error() }
func (f *final) Unwrap() error { return f.err }

// Poll calls probe every interval until it succeeds, gone reports the
// daemon name dead (its error is returned), ctx ends, deadline passes, or
// probe's error is Final; the deadline's error carries the probe's last
// reason of its own.
func Poll(ctx context.Context, name string, deadline, every time.Duration, probe func(context.Context) error, gone func() error) error {
	ctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	tick := time.NewTicker(every)
	defer tick.Stop()
	var last error
	for {
		err := probe(ctx)
		if err == nil {
			return nil
		}
		if f := (*final)(nil); errors.As(err, &f) {
			return fmt.Errorf("%s: %w", name, f.err)
		}
		if last == nil || ctx.Err() == nil { // keep the probe's own reason, not the deadline that cut it short
			last = err
		}
		if err := gone(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("%s not ready after %v: %v", name, deadline, last)
			}
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// ReadPid reads a pidfile; 0 when it is missing or empty. A file that
// exists but holds no number is read again for a moment: a daemon that
// writes its own pid into the file hadrill wrote (mariadbd's pid-file)
// truncates it first, and a reader in between must not take the daemon
// for gone.
func ReadPid(path string) int {
	for try := 0; ; try++ {
		b, err := os.ReadFile(path)
		if err != nil {
			return 0
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil || try == pidRereads {
			return pid
		}
		time.Sleep(pidReread)
	}
}

// A pidfile being rewritten is read again pidRereads times, pidReread apart.
const (
	pidRereads = 5
	pidReread  = 20 * time.Millisecond
)

// Alive reports whether pid runs: not a zombie, and not on its way out
// (a process killed a moment ago is still in /proc while it exits).
func Alive(pid int) bool {
	present, exiting := procState(pid)
	return present && !exiting
}

// Present reports whether pid still exists and is not yet a zombie, even
// while exiting: it may still hold its ports and files.
func Present(pid int) bool {
	present, _ := procState(pid)
	return present
}

const pfExiting = 0x4 // PF_EXITING in /proc/PID/stat flags

func procState(pid int) (present, exiting bool) {
	if pid <= 0 {
		return false, false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false, false
	}
	status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	return parseState(string(stat), string(status))
}

// parseState reads a process's /proc/PID/stat and /proc/PID/status: present
// unless it is a zombie (or dead), exiting when the kernel marked it
// PF_EXITING or a SIGKILL is queued for it but not yet acted upon (the moment
// between kill -9 and the process starting to exit).
func parseState(stat, status string) (present, exiting bool) {
	f := statFields(stat)
	if len(f) < 7 || f[0] == "Z" || f[0] == "X" {
		return false, false
	}
	flags, _ := strconv.ParseUint(f[6], 10, 64)
	return true, flags&pfExiting != 0 || killPending(status)
}

func killPending(status string) bool {
	const sigkill = 1 << (9 - 1)
	for _, line := range strings.Split(status, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || (k != "SigPnd" && k != "ShdPnd") {
			continue
		}
		if mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64); err == nil && mask&sigkill != 0 {
			return true
		}
	}
	return false
}

// WaitGone waits until pid no longer exists (or is a zombie); false on timeout.
func WaitGone(pid int, d time.Duration) bool {
	end := time.Now().Add(d)
	for Present(pid) {
		if time.Now().After(end) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// Owned reports whether pid is alive and its command line holds marker (a
// path inside the lab, or a flag and its value) as a whole: followed by the
// end of an argument, so "/labs/a/x" never matches "/labs/a/x2". A recycled
// pid is thus never signalled. A live process's command line reads empty
// while it executes a new program (a wrapper such as ip netns exec becoming
// the daemon: from the kernel's switch to the new program's memory until
// the program and its interpreter are loaded and the arguments written
// there), which on a busy machine took longer than 10 ms: an empty one is
// read again, more and more slowly, for up to execWindow, before the
// daemon is judged gone (a kernel thread's, empty for good, is not).
func Owned(pid int, marker string) bool {
	if marker == "" {
		return false
	}
	end := time.Now().Add(execWindow)
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return false
		}
		status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if present, exiting := parseState(string(stat), string(status)); !present || exiting {
			return false
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			return false
		}
		if len(b) > 0 || kernelThread(string(stat)) || time.Now().After(end) {
			return holds(b, marker)
		}
		time.Sleep(wait)
	}
}

// execWindow bounds how long an empty command line of a live process is
// taken for one being executed.
const execWindow = time.Second

// statFields are the fields of a /proc/PID/stat after the command's name
// (which may hold spaces and parentheses): state ppid pgrp session tty
// tpgid flags …; none when it cannot be read.
func statFields(stat string) []string {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return nil
	}
	return strings.Fields(stat[i+2:])
}

const pfKthread = 0x00200000 // PF_KTHREAD in /proc/PID/stat flags

// kernelThread says whether a process's /proc/PID/stat is a kernel
// thread's (its command line is always empty).
func kernelThread(stat string) bool {
	f := statFields(stat)
	if len(f) < 7 {
		return false
	}
	flags, _ := strconv.ParseUint(f[6], 10, 64)
	return flags&pfKthread != 0
}

// Stop sends TERM, waits up to grace, then KILL; it returns once pid is gone.
func Stop(pid int, grace time.Duration) error {
	if !Present(pid) {
		return nil
	}
	_ = syscall.Kill(pid, syscall.SIGCONT) // a paused process cannot act on TERM
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	if waitGone(pid, grace) {
		_ = syscall.Kill(-pid, syscall.SIGKILL) // helpers it left behind (SST scripts, rsync)
		return nil
	}
	return Kill(pid)
}

// Kill sends KILL to pid, to its process group (every daemon hadrill
// starts leads its own group) and to every process descended from it (a
// helper that made a group of its own would outlive it: a state transfer's
// timeout and socat, holding their port), then waits for pid to be gone.
func Kill(pid int) error {
	tree := descendants(pid, processes()) // found first: the group's end orphans helpers with groups of their own
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	return killTree(pid, tree)
}

// KillTree ends pid and every process descended from it at once (found
// before any is signalled: a child whose parent died is adopted elsewhere),
// leaving the process group they may share with others alone.
func KillTree(pid int) error { return killTree(pid, descendants(pid, processes())) }

// killTree ends pid and the descendants found for it.
func killTree(pid int, tree []int) error {
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	for _, c := range tree {
		_ = syscall.Kill(c, syscall.SIGKILL)
	}
	if !waitGone(pid, 10*time.Second) {
		return fmt.Errorf("pid %d survived SIGKILL", pid)
	}
	return nil
}

// proc is a process's parent and session, from /proc/PID/stat.
type proc struct{ parent, session int }

// processes are every process here.
func processes() map[int]proc {
	out := map[int]proc{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		f := statFields(string(b))
		if len(f) < 4 {
			continue
		}
		pp, err1 := strconv.Atoi(f[1])
		sid, err2 := strconv.Atoi(f[3])
		if err1 == nil && err2 == nil {
			out[pid] = proc{parent: pp, session: sid}
		}
	}
	return out
}

// descendants are the processes below pid, children before grandchildren,
// but for a daemon started below it (every daemon hadrill starts leads a
// session of its own: a server a long-running hadrill process started is
// its child until that process exits) and what is below that. Pure.
func descendants(pid int, procs map[int]proc) []int {
	children := map[int][]int{}
	for c, p := range procs {
		if p.session != c {
			children[p.parent] = append(children[p.parent], c)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		cs := children[p]
		sort.Ints(cs)
		out = append(out, cs...)
		queue = append(queue, cs...)
	}
	return out
}

// Pause stops pid with SIGSTOP; Resume continues it.
func Pause(pid int) error  { return syscall.Kill(pid, syscall.SIGSTOP) }
func Resume(pid int) error { return syscall.Kill(pid, syscall.SIGCONT) }

func waitGone(pid int, d time.Duration) bool { return WaitGone(pid, d) }

// Paused reports whether pid is stopped by a signal (SIGSTOP): state T.
func Paused(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'T'
}
