// Package host is a lab's machine as the rooms above the provider see it:
// run a command, read and write its files, own its daemons, dial from it.
// A local host is a network namespace of this computer; a remote one is a
// machine reached over SSH, where hadrill's own copy answers `hadrill host`
// operations (Serve) confined to hadrill's directory there.
package host

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hadrill/hadrill/internal/supervise"
)

// Host is one machine of a lab.
type Host interface {
	// Name is the host's name in the plan.
	Name() string
	// Exe is the hadrill binary on the host (hadrill's own daemons run it).
	Exe() string
	// Run runs argv on the host with stdin (may be nil) and returns what it
	// printed; a non-zero exit is an error carrying its last stderr line.
	Run(ctx context.Context, argv []string, stdin io.Reader) ([]byte, error)
	// Attach runs argv on the host with its standard streams connected
	// (output written as it comes: a client's session, a followed log); a
	// non-zero exit is an error.
	Attach(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer) error
	// WriteFile replaces path's content at once (its directory made).
	WriteFile(ctx context.Context, path string, data []byte, perm os.FileMode) error
	// ReadFile reads a file; a missing one is an error os.ErrNotExist matches.
	ReadFile(ctx context.Context, path string) ([]byte, error)
	// RemoveAll removes path and everything below it (a missing one is fine).
	RemoveAll(ctx context.Context, path string) error
	// Ensure starts the daemon unless it runs; started says whether it did.
	Ensure(ctx context.Context, d Daemon) (pid int, started bool, err error)
	// Process is the daemon's process while it runs (zero when it does not).
	Process(ctx context.Context, d Daemon) (Process, error)
	// Stop ends the daemon: TERM, then KILL after grace.
	Stop(ctx context.Context, d Daemon, grace time.Duration) error
	// Kill ends the daemon and its process group at once.
	Kill(ctx context.Context, d Daemon) error
	// Signal sends the daemon's process sig (SIGSTOP, SIGCONT; SIGHUP to a
	// daemon that reloads on it) while it runs.
	Signal(ctx context.Context, d Daemon, sig syscall.Signal) error
	// Dial connects from the host to addr ("tcp", or "unix" and a path).
	Dial(ctx context.Context, network, addr string) (net.Conn, error)
	// SocketUser is the OS account a unix socket dialed through Dial sees
	// (what MariaDB's unix_socket authentication takes as the user).
	SocketUser() string
	// RunsAs is the OS account Run's and Attach's commands run as (what a
	// client they run authenticates as over a unix socket).
	RunsAs() string
}

// Process is a daemon's process on its host: its pid while it runs (else
// 0), and whether a signal stopped it (SIGSTOP: a paused fault).
type Process struct {
	Pid    int  `json:"pid"`
	Paused bool `json:"paused,omitempty"`
}

// ExitNotExist is the exit status of `hadrill host read` for a missing
// file (a controller tells it from any other failure by that alone).
const ExitNotExist = 4

// Daemon is a long-running process of a host, its command not yet made to
// run on the host (the host does that: Daemon.WithArgv).
type Daemon = supervise.Daemon

// EnsureReady starts the daemon on h unless it runs and, when it started
// it, waits until ready answers (WaitReady).
func EnsureReady(ctx context.Context, h Host, d Daemon, deadline, every time.Duration, ready func(context.Context) error) error {
	_, started, err := h.Ensure(ctx, d)
	if err != nil || !started {
		return err
	}
	return WaitReady(ctx, h, d, deadline, every, ready)
}

// logTail is the last lines of a log on h, indented on lines of their own
// ("" when there are none): what a daemon said before it exited, read
// before a failed start-up removes it.
func logTail(ctx context.Context, h Host, path string) string {
	b, err := h.ReadFile(ctx, path)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if err != nil || len(b) == 0 {
		return ""
	}
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return ":\n  " + strings.Join(lines, "\n  ")
}

// pidSeen says what a daemon judged gone left: the pid its pid file
// names and, where the host lets /proc be read, what that pid runs now.
func pidSeen(ctx context.Context, h Host, d Daemon) string {
	b, err := h.ReadFile(ctx, d.PidFile)
	pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
	switch {
	case err != nil:
		return "no pid file"
	case perr != nil || pid <= 0:
		return fmt.Sprintf("its pid file holds %q", strings.TrimSpace(string(b)))
	}
	cmdline, err := h.ReadFile(ctx, fmt.Sprintf("/proc/%d/cmdline", pid))
	switch {
	case err != nil:
		return fmt.Sprintf("pid %d", pid)
	case len(cmdline) == 0:
		return fmt.Sprintf("pid %d, gone or a zombie", pid)
	}
	return fmt.Sprintf("pid %d, now running %q, which lacks the marker %q or is exiting", pid, strings.ReplaceAll(strings.TrimRight(string(cmdline), "\x00"), "\x00", " "), d.Marker)
}

// WaitReady waits until ready answers (every interval, within deadline)
// for a daemon just started on h; one that exits meanwhile fails the wait,
// naming its log.
func WaitReady(ctx context.Context, h Host, d Daemon, deadline, every time.Duration, ready func(context.Context) error) error {
	probes := 0
	return supervise.Poll(ctx, d.Name, deadline, every, ready, func() error {
		if probes++; probes%5 != 0 { // now and then: asking a remote host costs a round trip
			return nil
		}
		if p, err := h.Process(ctx, d); err == nil && p.Pid == 0 {
			return fmt.Errorf("%s exited during start-up (%s; see %s on %s)%s", d.Name, pidSeen(ctx, h, d), d.LogFile, h.Name(), logTail(ctx, h, d.LogFile))
		}
		return nil
	})
}

// Listens is a readiness check (EnsureReady's): something accepts TCP
// connections at addr, dialed from the host.
func Listens(h Host, addr string) func(context.Context) error {
	return func(ctx context.Context) error {
		c, err := h.Dial(ctx, "tcp", addr)
		if err == nil {
			c.Close()
		}
		return err
	}
}

// Mark sets (on) or clears a switch kept as a file on h: while path exists
// the switch is on (it holds when it was set). A missing file is cleared
// already.
func Mark(ctx context.Context, h Host, path string, on bool) error {
	if on {
		return h.WriteFile(ctx, path, []byte(time.Now().UTC().Format(time.RFC3339Nano)+"\n"), 0o644)
	}
	return h.RemoveAll(ctx, path)
}
