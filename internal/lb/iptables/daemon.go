package iptables

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hadrill/hadrill/internal/lb/proxy"
)

// forwarding is the host's switch for forwarding packets, which the DNAT
// rules need (a connection to the host's address leaves for a server).
const forwarding = "/proc/sys/net/ipv4/ip_forward"

// conntrackFile lists the connections the kernel tracks.
const conntrackFile = "/proc/net/nf_conntrack"

// prober is a running instance: its checks and the servers its rules
// send to now.
type prober struct {
	c      Config
	log    io.Writer
	client *http.Client
	mu     sync.Mutex
	checks map[[2]string]check // by group and server
	routed map[string][]string // by group: the servers the rules send to
}

// Run is an instance of the load balancer until ctx ends: forwarding on,
// its chains installed, every server probed once (one that answers is in
// at once), the rules routing to the servers in, the admin socket
// answering, then each server probed every interval and the rules
// rewritten when one goes out or comes back (each change logged to log).
// When ctx ends it takes its rules away and puts forwarding back.
func Run(ctx context.Context, c Config, log io.Writer) (err error) {
	if err := c.Check(); err != nil {
		return err
	}
	connect := min(time.Duration(c.Timing.Interval), time.Duration(c.Timing.Timeout))
	p := &prober{c: c, log: log, checks: map[[2]string]check{}, client: &http.Client{
		Timeout:   time.Duration(c.Timing.Timeout),
		Transport: &http.Transport{DialContext: (&net.Dialer{Timeout: connect}).DialContext, DisableKeepAlives: true},
	}}
	if err := forwardOn(c.Dir); err != nil {
		return err
	}
	defer func() { err = errors.Join(err, runAll([][]string{RestoreForwarding(c.Dir)})) }()
	defer func() { err = errors.Join(err, runAll(Uninstall(c))) }()
	if err := runAll(Install(c)); err != nil {
		return err
	}
	var wg sync.WaitGroup
	for _, g := range c.Groups {
		for _, b := range c.Backends {
			wg.Go(func() {
				ok, why := p.probe(ctx, g, b)
				p.mu.Lock()
				p.checks[[2]string{g.Name, b.Name}] = check{Up: ok, Reason: why}
				p.mu.Unlock()
			})
		}
	}
	wg.Wait()
	if err := p.route(time.Now()); err != nil {
		return err
	}
	_ = os.Remove(c.AdminSocket)
	ln, err := net.Listen("unix", c.AdminSocket)
	if err != nil {
		return err
	}
	defer os.Remove(c.AdminSocket)
	go p.serve(ln)
	fmt.Fprintf(log, "%s balancing %s over %d servers, probing their agents every %v\n", time.Now().UTC().Format(time.RFC3339Nano),
		c.Address, len(c.Backends), time.Duration(c.Timing.Interval))
	for _, g := range c.Groups {
		for _, b := range c.Backends {
			wg.Go(func() { p.watch(ctx, g, b) })
		}
	}
	<-ctx.Done()
	ln.Close()
	wg.Wait()
	return nil
}

// watch probes one server for one group every interval until ctx ends,
// rerouting when the server changes.
func (p *prober) watch(ctx context.Context, g Group, b Backend) {
	t := time.NewTicker(time.Duration(p.c.Timing.Interval))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ok, why := p.probe(ctx, g, b)
		if ctx.Err() != nil {
			return
		}
		p.mu.Lock()
		k := [2]string{g.Name, b.Name}
		next, changed := p.checks[k].Observe(ok, why, p.c.Timing)
		p.checks[k] = next
		p.mu.Unlock()
		if changed {
			if err := p.route(time.Now()); err != nil {
				fmt.Fprintf(p.log, "%s rules not rewritten: %v\n", time.Now().UTC().Format(time.RFC3339Nano), err)
			}
		}
	}
}

// probe asks b's health agent whether it may take g's connections.
func (p *prober) probe(ctx context.Context, g Group, b Backend) (bool, string) {
	url := fmt.Sprintf("http://%s%s", net.JoinHostPort(b.Address, fmt.Sprint(p.c.CheckPort)), g.Check)
	req, err := http.NewRequestWithContext(ctx, http.MethodOptions, url, nil)
	if err != nil {
		return false, err.Error()
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return false, "no answer from its agent: " + shortErr(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		why := fmt.Sprintf("its agent answered %d", resp.StatusCode)
		if v := resp.Header.Get("X-Hadrill-Verdict"); v != "" {
			why += " (" + v + ")"
		}
		return false, why
	}
	return true, ""
}

// shortErr is an error's last clause ("connection refused", "i/o
// timeout"): the URL before it is the server's, named beside it.
func shortErr(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 {
		return s[i+2:]
	}
	return s
}

// route rewrites the rules when the servers that are up differ from the
// ones they send to, and logs each change (at: when it was seen).
func (p *prober) route(at time.Time) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	want := map[string][]string{}
	for _, g := range p.c.Groups {
		want[g.Name] = []string{}
		for _, b := range p.c.Backends {
			if p.checks[[2]string{g.Name, b.Name}].Up {
				want[g.Name] = append(want[g.Name], b.Name)
			}
		}
	}
	first := p.routed == nil
	if !first && equalRoutes(want, p.routed) {
		return nil
	}
	if err := runAll([][]string{Route(p.c, want)}); err != nil {
		return err
	}
	sessions := p.sessions()
	for _, g := range p.c.Groups {
		was := p.routed[g.Name]
		for _, b := range p.c.Backends {
			in, wasIn := slices.Contains(want[g.Name], b.Name), slices.Contains(was, b.Name)
			switch {
			case first && !in, !first && wasIn && !in:
				e := proxy.Event{At: at, Proxy: g.Name, Server: b.Name, What: proxy.Down, Reason: p.checks[[2]string{g.Name, b.Name}].Reason}
				e.Sessions = sessions[g.Name][b.Name]
				fmt.Fprintln(p.log, LogLine(e))
			case !first && !wasIn && in:
				fmt.Fprintln(p.log, LogLine(proxy.Event{At: at, Proxy: g.Name, Server: b.Name, What: proxy.Up}))
			}
		}
		if len(want[g.Name]) == 0 && (first || len(was) > 0) {
			fmt.Fprintln(p.log, LogLine(proxy.Event{At: at, Proxy: g.Name, What: proxy.NoServer}))
		}
	}
	p.routed = want
	return nil
}

func equalRoutes(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// serve answers each connection to the admin socket with the servers as
// the prober sees them (JSON, proxy.ServerState), until ln closes.
func (p *prober) serve(ln net.Listener) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
		_ = json.NewEncoder(conn).Encode(p.states())
		conn.Close()
	}
}

// states are the servers of every group as the prober sees them now.
func (p *prober) states() []proxy.ServerState {
	sessions := p.sessions()
	p.mu.Lock()
	defer p.mu.Unlock()
	out := []proxy.ServerState{}
	for _, g := range p.c.Groups {
		routed := p.routed[g.Name]
		if g.First && len(routed) > 1 {
			routed = routed[:1]
		}
		for i, b := range p.c.Backends {
			out = append(out, proxy.ServerState{Proxy: g.Name, Name: b.Name, Status: p.checks[[2]string{g.Name, b.Name}].Status(p.c.Timing),
				Backup: g.First && i > 0, Sessions: sessions[g.Name][b.Name], Serving: slices.Contains(routed, b.Name)})
		}
	}
	return out
}

// sessions are the established connections the kernel tracks from each
// group to each server now (none when it lists none).
func (p *prober) sessions() map[string]map[string]int {
	data, err := os.ReadFile(conntrackFile)
	if err != nil {
		return nil
	}
	return Sessions(p.c, data)
}

// forwardOn turns the host's forwarding on, keeping its value before in
// dir when it was off (a file an earlier prober left is kept: it holds
// the value before that one).
func forwardOn(dir string) error {
	was, err := os.ReadFile(forwarding)
	if err != nil {
		return err
	}
	if strings.TrimSpace(string(was)) != "0" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	keep := filepath.Join(dir, forwardFile)
	if _, err := os.Stat(keep); errors.Is(err, os.ErrNotExist) {
		if err := os.WriteFile(keep, was, 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(forwarding, []byte("1\n"), 0o644)
}

// runAll runs each command on this host, stopping at the first that
// fails.
func runAll(cmds [][]string) error {
	for _, argv := range cmds {
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %v: %s", argv[0], err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// ReadStates reads how an instance sees its servers from its admin
// socket (conn: connected to it).
func ReadStates(conn net.Conn) ([]proxy.ServerState, error) {
	var out []proxy.ServerState
	if err := json.NewDecoder(conn).Decode(&out); err != nil {
		return nil, fmt.Errorf("the load balancer's admin socket: %w", err)
	}
	return out, nil
}
