package ssh

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/inventory"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/provider"
)

// Provider places a lab's hosts on the inventory's machines. Each host is
// connected to once per command, on first use, and hadrill's copy is
// installed there then; everything the lab makes on a host lies in
// <hadrill's directory>/labs/<lab>, which Teardown reaps.
type Provider struct {
	p       *plan.Plan
	inv     *inventory.Resolved
	exe     string
	version string
	timeout time.Duration
	owner   string // who made the lab: this computer's name and the lab's directory here

	mu    sync.Mutex
	hosts map[string]*lazy
}

var _ provider.Provider = (*Provider)(nil)

// New is the provider of a plan of remote hosts; exe is this hadrill's
// binary (copied to each host), version its version.
func New(p *plan.Plan, inv *inventory.Resolved, exe, version string) *Provider {
	me, _ := os.Hostname()
	return &Provider{p: p, inv: inv, exe: exe, version: version, timeout: 15 * time.Second,
		owner: me + ":" + p.Dir + "\n", hosts: map[string]*lazy{}}
}

// Kind names the provider.
func (s *Provider) Kind() string { return plan.ModeSSH }

// LabDir is where a host keeps the lab's files.
func (s *Provider) LabDir(name string) string {
	return plan.RemoteLabDir(s.inv.Hosts[name].Dir, s.p.Lab)
}

func (s *Provider) ownerFile(name string) string { return path.Join(s.LabDir(name), "owner") }

// Host is one of the lab's hosts, connected on first use.
func (s *Provider) Host(name string) host.Host {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l := s.hosts[name]; l != nil {
		return l
	}
	l := &lazy{name: name, s: s}
	s.hosts[name] = l
	return l
}

func (s *Provider) each(ctx context.Context, f func(ctx context.Context, h *lazy) error) error {
	errs := make([]error, len(s.p.Hosts))
	var wg sync.WaitGroup
	for i, h := range s.p.Hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(ctx, s.Host(h.Name).(*lazy))
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Claim marks the lab's directory on every host as this lab's, or says
// (as bad input) which host holds a lab of that name made by another; it
// is all or nothing (what it marked before a failure, it removes).
func (s *Provider) Claim() error {
	ctx := context.Background()
	var taken []string
	var marked []*lazy
	var mu sync.Mutex
	err := s.each(ctx, func(ctx context.Context, h *lazy) error {
		b, err := h.ReadFile(ctx, s.ownerFile(h.name))
		switch {
		case err == nil && string(b) != s.owner:
			mu.Lock()
			taken = append(taken, fmt.Sprintf("--name: host %s holds a lab %s made by %s; choose another --name",
				h.name, s.p.Lab, strings.TrimSpace(string(b))))
			mu.Unlock()
			return nil
		case err == nil:
			return nil
		case !errors.Is(err, os.ErrNotExist):
			return err
		}
		if err := h.WriteFile(ctx, s.ownerFile(h.name), []byte(s.owner), 0o644); err != nil {
			return err
		}
		mu.Lock()
		marked = append(marked, h)
		mu.Unlock()
		return nil
	})
	if err == nil {
		err = hderr.Users(taken)
	}
	if err != nil {
		for _, h := range marked {
			if r, rerr := h.get(ctx); rerr == nil {
				err = errors.Join(err, r.Reap(ctx, s.LabDir(h.name)))
			}
		}
	}
	return err
}

// Setup connects to every host and installs hadrill's copy there.
func (s *Provider) Setup(ctx context.Context) error {
	return s.each(ctx, func(ctx context.Context, h *lazy) error {
		_, err := h.get(ctx)
		return err
	})
}

// Teardown ends every process of the lab on every host and removes the
// lab's directory there (and hadrill's copy once no lab is left). A host
// whose lab directory another made is left alone (provider.ErrForeign).
func (s *Provider) Teardown(ctx context.Context) error {
	var foreign []string
	var mu sync.Mutex
	err := s.each(ctx, func(ctx context.Context, h *lazy) error {
		r, err := h.get(ctx)
		if err != nil {
			return err
		}
		if b, err := r.ReadFile(ctx, s.ownerFile(h.name)); err == nil && string(b) != s.owner {
			mu.Lock()
			foreign = append(foreign, h.name)
			mu.Unlock()
			return nil
		}
		return r.Reap(ctx, s.LabDir(h.name))
	})
	if err == nil && len(foreign) > 0 {
		return fmt.Errorf("hosts %s: %w", strings.Join(foreign, ", "), provider.ErrForeign)
	}
	return err
}

// Dial connects from a host.
func (s *Provider) Dial(ctx context.Context, name, network, addr string) (net.Conn, error) {
	return s.Host(name).Dial(ctx, network, addr)
}

// Close ends every connection.
func (s *Provider) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.hosts {
		l.close()
	}
}

// lazy is a host connected (and hadrill installed there) on first use; a
// failed connection is tried again at the next use.
type lazy struct {
	name string
	s    *Provider
	mu   sync.Mutex
	r    *Remote
}

var _ host.Host = (*lazy)(nil)

func (l *lazy) get(ctx context.Context) (*Remote, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.r != nil {
		return l.r, nil
	}
	h, ok := l.s.inv.Hosts[l.name]
	if !ok {
		return nil, fmt.Errorf("host %s is not in the inventory %s", l.name, l.s.inv.File)
	}
	c, err := Connect(ctx, h, l.s.timeout)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l.name, err)
	}
	r, err := Install(ctx, c, l.s.exe, l.s.version)
	if err != nil {
		c.Close()
		return nil, err
	}
	l.r = r
	return r, nil
}

func (l *lazy) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.r != nil {
		l.r.Close()
		l.r = nil
	}
}

func (l *lazy) Name() string { return l.name }

// Exe is hadrill's copy on the host (known without connecting).
func (l *lazy) Exe() string { return BinPath(l.s.inv.Hosts[l.name].Dir, l.s.exe) }

// SocketUser is the login user.
func (l *lazy) SocketUser() string { return l.s.inv.Hosts[l.name].User }
func (l *lazy) RunsAs() string     { return "root" }

// with runs f on the host, connected first.
func with[T any](ctx context.Context, l *lazy, f func(r *Remote) (T, error)) (T, error) {
	r, err := l.get(ctx)
	if err != nil {
		var zero T
		return zero, err
	}
	return f(r)
}

// do runs f on the host, connected first.
func do(ctx context.Context, l *lazy, f func(r *Remote) error) error {
	_, err := with(ctx, l, func(r *Remote) (struct{}, error) { return struct{}{}, f(r) })
	return err
}

func (l *lazy) Run(ctx context.Context, argv []string, stdin io.Reader) ([]byte, error) {
	return with(ctx, l, func(r *Remote) ([]byte, error) { return r.Run(ctx, argv, stdin) })
}

func (l *lazy) Attach(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return do(ctx, l, func(r *Remote) error { return r.Attach(ctx, argv, stdin, stdout, stderr) })
}

func (l *lazy) WriteFile(ctx context.Context, p string, data []byte, perm os.FileMode) error {
	return do(ctx, l, func(r *Remote) error { return r.WriteFile(ctx, p, data, perm) })
}

func (l *lazy) ReadFile(ctx context.Context, p string) ([]byte, error) {
	return with(ctx, l, func(r *Remote) ([]byte, error) { return r.ReadFile(ctx, p) })
}

func (l *lazy) RemoveAll(ctx context.Context, p string) error {
	return do(ctx, l, func(r *Remote) error { return r.RemoveAll(ctx, p) })
}

func (l *lazy) Ensure(ctx context.Context, d host.Daemon) (int, bool, error) {
	var started bool
	pid, err := with(ctx, l, func(r *Remote) (int, error) {
		pid, s, err := r.Ensure(ctx, d)
		started = s
		return pid, err
	})
	return pid, started, err
}

func (l *lazy) Process(ctx context.Context, d host.Daemon) (host.Process, error) {
	return with(ctx, l, func(r *Remote) (host.Process, error) { return r.Process(ctx, d) })
}

func (l *lazy) Stop(ctx context.Context, d host.Daemon, grace time.Duration) error {
	return do(ctx, l, func(r *Remote) error { return r.Stop(ctx, d, grace) })
}

func (l *lazy) Kill(ctx context.Context, d host.Daemon) error {
	return do(ctx, l, func(r *Remote) error { return r.Kill(ctx, d) })
}

func (l *lazy) Signal(ctx context.Context, d host.Daemon, sig syscall.Signal) error {
	return do(ctx, l, func(r *Remote) error { return r.Signal(ctx, d, sig) })
}

func (l *lazy) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	return with(ctx, l, func(r *Remote) (net.Conn, error) { return r.Dial(ctx, network, addr) })
}

var (
	sumMu sync.Mutex
	sums  = map[string]string{}
)

// BinPath is where hadrill's copy of exe lives on a host whose hadrill
// directory is dir: named by the first 16 hex digits of its SHA-256.
func BinPath(dir, exe string) string {
	sumMu.Lock()
	defer sumMu.Unlock()
	sum, ok := sums[exe]
	if !ok {
		h := sha256.New()
		if f, err := os.Open(exe); err == nil {
			_, _ = io.Copy(h, f)
			f.Close()
		}
		sum = hex.EncodeToString(h.Sum(nil))[:16]
		sums[exe] = sum
	}
	return path.Join(dir, "bin", "hadrill-"+sum)
}
