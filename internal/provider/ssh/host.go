package ssh

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hadrill/hadrill/internal/host"
)

// Remote is a host reached over SSH: commands run there directly, files
// and daemons through hadrill's own copy on the host (`hadrill host`),
// which keeps every path below the host's directory.
type Remote struct {
	name   string
	c      *Client
	dir    string
	bin    string  // hadrill's copy on the host
	runner *runner // that copy answering commands in one standing session
}

var _ host.Host = (*Remote)(nil)

// Install copies the hadrill binary exe to the host unless the host has it
// already (the copy is named by its SHA-256, so versions never mix and a
// second lab copies nothing), starts it there as the host's runner, checks
// that it answers with version, and returns the host.
func Install(ctx context.Context, c *Client, exe, version string) (*Remote, error) {
	r := &Remote{name: c.Host.Name, c: c, dir: c.Host.Dir, bin: BinPath(c.Host.Dir, exe)}
	rn, got, err := startRunner(ctx, c, exe, r.bin, r.dir)
	if err != nil {
		return nil, err
	}
	if got != version {
		rn.close()
		return nil, fmt.Errorf("%s: hadrill's copy %s answers version %q, not %q", r.name, r.bin, got, version)
	}
	r.runner = rn
	return r, nil
}

// Close ends the host's runner and the connection.
func (r *Remote) Close() error {
	if r.runner != nil {
		r.runner.close()
	}
	return r.c.Close()
}

// Name is the host's name in the plan.
func (r *Remote) Name() string { return r.name }

// Exe is hadrill's copy on the host (hadrill's own daemons run it).
func (r *Remote) Exe() string { return r.bin }

// Run runs argv on the host: through its runner, or in a session of its
// own when the input is a stream or large (or the runner has ended).
func (r *Remote) Run(ctx context.Context, argv []string, stdin io.Reader) ([]byte, error) {
	res, err := r.run(ctx, argv, stdin)
	if err != nil {
		return res.Stdout, err
	}
	if res.Code != 0 {
		return res.Stdout, &RunError{Host: r.name, Argv: argv, Code: res.Code, Stderr: res.Said(10)}
	}
	return res.Stdout, nil
}

func (r *Remote) run(ctx context.Context, argv []string, stdin io.Reader) (Result, error) {
	if r.runner != nil {
		if b, ok := fits(stdin); ok {
			if res, sent, err := r.runner.run(ctx, argv, b); sent {
				return res, err
			}
			stdin = bytes.NewReader(b)
		}
	}
	return r.c.Run(ctx, argv, stdin)
}

// Attach runs argv on the host, its standard streams connected.
func (r *Remote) Attach(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer) error {
	code, err := r.c.Attach(ctx, argv, stdin, stdout, stderr)
	if err == nil && code != 0 {
		err = &RunError{Host: r.name, Argv: argv, Code: code} // what it said is written already
	}
	return err
}

// RunError is a command that ended with a non-zero status on a host.
type RunError struct {
	Host   string
	Argv   []string
	Code   int
	Stderr string
}

func (e *RunError) Error() string {
	msg := fmt.Sprintf("%s: %s: exit %d", e.Host, strings.Join(e.Argv, " "), e.Code)
	if e.Stderr != "" {
		msg += ": " + e.Stderr
	}
	return msg
}

// op runs `hadrill host --root DIR args…` on the host.
func (r *Remote) op(ctx context.Context, stdin io.Reader, args ...string) ([]byte, error) {
	return r.Run(ctx, append([]string{r.bin, "host", "--root", r.dir}, args...), stdin)
}

// WriteFile replaces path on the host.
func (r *Remote) WriteFile(ctx context.Context, p string, data []byte, perm os.FileMode) error {
	_, err := r.op(ctx, bytes.NewReader(data), "write", p, fmt.Sprintf("%04o", perm.Perm()))
	return err
}

// ReadFile reads a file of the host.
func (r *Remote) ReadFile(ctx context.Context, p string) ([]byte, error) {
	out, err := r.op(ctx, nil, "read", p)
	if re, ok := err.(*RunError); ok && re.Code == host.ExitNotExist {
		return nil, fmt.Errorf("%s: %s: %w", r.name, p, os.ErrNotExist)
	}
	return out, err
}

// Reap ends every process of the lab whose directory on the host is dir
// and removes it (host.Reap).
func (r *Remote) Reap(ctx context.Context, dir string) error {
	_, err := r.op(ctx, nil, "reap", dir)
	return err
}

// RemoveAll removes path (below the host's directory) on the host.
func (r *Remote) RemoveAll(ctx context.Context, p string) error {
	_, err := r.op(ctx, nil, "rm", p)
	return err
}

func (r *Remote) daemon(ctx context.Context, d host.Daemon, args ...string) (host.DaemonReply, error) {
	b, err := json.Marshal(d)
	if err != nil {
		return host.DaemonReply{}, err
	}
	out, err := r.op(ctx, bytes.NewReader(b), append([]string{"daemon"}, args...)...)
	if err != nil {
		return host.DaemonReply{}, err
	}
	var reply host.DaemonReply
	if err := json.Unmarshal(out, &reply); err != nil {
		return reply, fmt.Errorf("%s: hadrill host daemon %s answered %q", r.name, args[0], bytes.TrimSpace(out))
	}
	return reply, nil
}

// Ensure starts the daemon on the host unless it runs.
func (r *Remote) Ensure(ctx context.Context, d host.Daemon) (int, bool, error) {
	reply, err := r.daemon(ctx, d, "ensure")
	return reply.Pid, reply.Started, err
}

// Process is the daemon's process on the host (zero when it does not run).
func (r *Remote) Process(ctx context.Context, d host.Daemon) (host.Process, error) {
	reply, err := r.daemon(ctx, d, "pid")
	return reply.Process, err
}

// SocketUser is the login user: a unix socket is dialed by its SSH session.
func (r *Remote) SocketUser() string { return r.c.Host.User }

// RunsAs is root: a login that is not root runs commands through sudo.
func (r *Remote) RunsAs() string { return "root" }

// Stop ends the daemon: TERM, then KILL after grace.
func (r *Remote) Stop(ctx context.Context, d host.Daemon, grace time.Duration) error {
	_, err := r.daemon(ctx, d, "stop", grace.String())
	return err
}

// Kill ends the daemon and its process group at once.
func (r *Remote) Kill(ctx context.Context, d host.Daemon) error {
	_, err := r.daemon(ctx, d, "kill")
	return err
}

// Signal sends the daemon's process sig on the host.
func (r *Remote) Signal(ctx context.Context, d host.Daemon, sig syscall.Signal) error {
	_, err := r.daemon(ctx, d, "signal", strconv.Itoa(int(sig)))
	return err
}

// Dial connects from the host.
func (r *Remote) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	return r.c.Dial(ctx, network, addr)
}
