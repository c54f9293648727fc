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
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Spec describes a daemon to start.
type Spec struct {
	Name    string   // for messages, e.g. "db1 mariadbd"
	Argv    []string // the full command, already wrapped for its host
	LogFile string   // stdout and stderr are appended here
	PidFile string   // hadrill writes the child's pid here
	// Dir is the daemon's working directory, inside the lab (created if
	// missing): whatever a daemon writes relative to it (garbd's
	// gvwstate.dat, core files) stays in the lab, never in the caller's
	// directory.
	Dir string
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
func Start(s Spec) (*Proc, error) {
	if len(s.Argv) == 0 {
		return nil, fmt.Errorf("%s: empty command", s.Name)
	}
	if s.Dir == "" {
		return nil, fmt.Errorf("%s: no working directory", s.Name)
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("%s: working directory: %w", s.Name, err)
	}
	logf, err := os.OpenFile(s.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return nil, fmt.Errorf("%s: log file: %w", s.Name, err)
	}
	defer logf.Close()
	cmd := exec.Command(s.Argv[0], s.Argv[1:]...)
	cmd.Stdout, cmd.Stderr, cmd.Dir = logf, logf, s.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: start %s: %w", s.Name, s.Argv[0], err)
	}
	p := &Proc{Name: s.Name, Pid: cmd.Process.Pid, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	if s.PidFile != "" {
		if err := os.WriteFile(s.PidFile, []byte(strconv.Itoa(p.Pid)+"\n"), 0o644); err != nil {
			_ = Kill(p.Pid)
			return nil, fmt.Errorf("%s: pidfile: %w", s.Name, err)
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
		if last == nil || ctx.Err() == nil { // keep the probe's own reason, not the deadline that cut it short
			last = err
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited during start-up (%v)", p.Name, p.err)
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("%s not ready after %v: %v", p.Name, deadline, last)
			}
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// ReadPid reads a pidfile; 0 when it is missing or empty.
func ReadPid(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

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
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return false, false
	}
	f := strings.Fields(s[i+2:]) // state ppid pgrp session tty tpgid flags ...
	if len(f) < 7 || f[0] == "Z" || f[0] == "X" {
		return false, false
	}
	flags, _ := strconv.ParseUint(f[6], 10, 64)
	return true, flags&pfExiting != 0 || killPending(pid)
}

// killPending reports a SIGKILL queued for pid but not yet acted upon: the
// moment between kill -9 and the process starting to exit.
func killPending(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	const sigkill = 1 << (9 - 1)
	for _, line := range strings.Split(string(b), "\n") {
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

// Owned reports whether pid is alive and its command line mentions marker
// (a path inside the lab), so a recycled pid is never signalled.
func Owned(pid int, marker string) bool {
	if !Alive(pid) {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err == nil && strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), marker)
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

// Kill sends KILL to pid and to its process group (every daemon hadrill
// starts leads its own group), then waits for pid to be gone.
func Kill(pid int) error {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	if !waitGone(pid, 10*time.Second) {
		return fmt.Errorf("pid %d survived SIGKILL", pid)
	}
	return nil
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
