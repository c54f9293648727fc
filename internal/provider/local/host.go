package local

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/hadrill/hadrill/internal/host"
)

// Host is a host of a local lab: its commands run through the provider's
// Wrap (its namespace and cgroups), its files are this computer's, its
// daemons are supervised here.
type Host struct {
	name string
	prov wrapper
	exe  string
	user string
}

var _ host.Host = (*Host)(nil)

// wrapper is a local provider: it makes a command run on one of its hosts
// (a command of this computer), and dials from them.
type wrapper interface {
	Wrap(host string, argv []string) []string
	Dial(ctx context.Context, host, network, addr string) (net.Conn, error)
}

// HostOf is the host named name of a local provider; exe is hadrill's binary,
// user is the account hadrill runs as.
func HostOf(prov wrapper, name, exe, user string) *Host {
	return &Host{name: name, prov: prov, exe: exe, user: user}
}

// Name is the host's name in the plan.
func (h *Host) Name() string { return h.name }

// Exe is the hadrill binary (this computer's).
func (h *Host) Exe() string { return h.exe }

// Run runs argv on the host.
func (h *Host) Run(ctx context.Context, argv []string, stdin io.Reader) ([]byte, error) {
	var out, errb bytes.Buffer
	if err := h.command(ctx, argv, stdin, &out, &errb).Run(); err != nil {
		return out.Bytes(), fmt.Errorf("%s: %s: %v: %s", h.name, strings.Join(argv, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.Bytes(), nil
}

// Attach runs argv on the host, its standard streams connected.
func (h *Host) Attach(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if err := h.command(ctx, argv, stdin, stdout, stderr).Run(); err != nil {
		return fmt.Errorf("%s: %s: %v", h.name, strings.Join(argv, " "), err)
	}
	return nil
}

// command is argv made to run on the host (the provider's Wrap), ctx
// ending it.
func (h *Host) command(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer) *exec.Cmd {
	w := h.prov.Wrap(h.name, argv)
	cmd := exec.CommandContext(ctx, w[0], w[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	cmd.WaitDelay = 5 * time.Second // a child holding its output open does not hold the caller
	return cmd
}

// WriteFile replaces path's content at once.
func (h *Host) WriteFile(_ context.Context, path string, data []byte, perm os.FileMode) error {
	return host.WriteAtomic(path, bytes.NewReader(data), perm)
}

// ReadFile reads a file.
func (h *Host) ReadFile(_ context.Context, path string) ([]byte, error) { return os.ReadFile(path) }

// RemoveAll removes path and what is below it.
func (h *Host) RemoveAll(_ context.Context, path string) error { return os.RemoveAll(path) }

// Ensure starts the daemon unless it runs.
func (h *Host) Ensure(_ context.Context, d host.Daemon) (int, bool, error) {
	if err := d.Check(); err != nil {
		return 0, false, err
	}
	sd := d.WithArgv(h.prov.Wrap(h.name, d.Argv))
	if pid := sd.Pid(); pid != 0 {
		return pid, false, nil
	}
	p, err := sd.Start()
	if err != nil {
		return 0, false, err
	}
	return p.Pid, true, nil
}

// Process is the daemon's process (zero when it does not run).
func (h *Host) Process(_ context.Context, d host.Daemon) (host.Process, error) {
	return host.ProcessOf(d), nil
}

// SocketUser is the account hadrill runs as here.
func (h *Host) SocketUser() string { return h.user }

// RunsAs is the account hadrill runs as here too.
func (h *Host) RunsAs() string { return h.user }

// Stop ends the daemon: TERM, then KILL after grace.
func (h *Host) Stop(_ context.Context, d host.Daemon, grace time.Duration) error {
	return d.Stop(grace)
}

// Kill ends the daemon and its process group at once.
func (h *Host) Kill(_ context.Context, d host.Daemon) error { return d.Kill() }

// Signal sends the daemon's process sig.
func (h *Host) Signal(_ context.Context, d host.Daemon, sig syscall.Signal) error {
	return host.SignalOf(d, sig)
}

// Dial connects from the host.
func (h *Host) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	return h.prov.Dial(ctx, h.name, network, addr)
}
