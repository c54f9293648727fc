// Package local provides hosts on this machine: one network namespace per
// host, linked by veths to a bridge in the lab's own namespace (root), or
// distinct 127.x addresses on lo when not root.
package local

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/hadrill/hadrill/internal/machine"
	"github.com/hadrill/hadrill/internal/netns"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/provider"
)

// New returns the provider for a plan's mode.
func New(p *plan.Plan) provider.Provider {
	if p.Mode == plan.ModeNetns {
		return &Netns{p: p}
	}
	return &Rootless{p: p}
}

// Rootless hosts are addresses on lo: nothing to create, no isolation.
type Rootless struct{ p *plan.Plan }

func (r *Rootless) Claim() error                          { return nil }
func (r *Rootless) Setup(context.Context) error           { return nil }
func (r *Rootless) Teardown(context.Context) error        { return nil }
func (r *Rootless) Wrap(_ string, argv []string) []string { return argv }
func (r *Rootless) Kind() string                          { return plan.ModeRootless }
func (r *Rootless) Dial(ctx context.Context, _, network, addr string) (net.Conn, error) {
	return netns.Dial(ctx, "", network, addr)
}

// Netns hosts are network namespaces on a per-lab bridge.
type Netns struct{ p *plan.Plan }

func (n *Netns) Kind() string { return plan.ModeNetns }

func (n *Netns) nsOf(host string) string {
	for _, h := range n.p.Hosts {
		if h.Name == host {
			return h.Netns
		}
	}
	return ""
}

// Wrap runs argv in the host's namespace and, first, in its cgroups.
func (n *Netns) Wrap(host string, argv []string) []string {
	return machine.Enter(n.p, host, netns.Wrap(n.nsOf(host), argv))
}

func (n *Netns) Dial(ctx context.Context, host, network, addr string) (net.Conn, error) {
	ns := n.nsOf(host)
	if ns == "" {
		return nil, fmt.Errorf("unknown host %q", host)
	}
	return netns.Dial(ctx, ns, network, addr)
}

// Setup creates the lab namespace with its bridge, then each host namespace
// with a veth to the bridge. Nothing touches the root namespace.
func (n *Netns) Setup(ctx context.Context) error {
	if err := n.Claim(); err != nil {
		return err
	}
	lab, br := n.p.Netns, n.p.Bridge
	if !netns.Exists(lab) {
		if err := ipAll(ctx, [][]string{{"netns", "add", lab}, {"-n", lab, "link", "add", br, "type", "bridge"},
			{"-n", lab, "link", "set", br, "up"}, {"-n", lab, "link", "set", "lo", "up"}}); err != nil {
			return err
		}
	}
	bits := strings.SplitN(n.p.Network, "/", 2)[1]
	for _, h := range n.p.Hosts {
		if netns.Exists(h.Netns) {
			continue
		}
		if err := ipAll(ctx, [][]string{{"netns", "add", h.Netns},
			{"-n", lab, "link", "add", h.Veth, "type", "veth", "peer", "name", "eth0", "netns", h.Netns},
			{"-n", lab, "link", "set", h.Veth, "master", br, "up"},
			{"-n", h.Netns, "addr", "add", h.Address + "/" + bits, "dev", "eth0"},
			{"-n", h.Netns, "link", "set", "eth0", "up"}, {"-n", h.Netns, "link", "set", "lo", "up"}}); err != nil {
			return fmt.Errorf("host %s: %w", h.Name, err)
		}
	}
	return machine.Setup(n.p)
}

// Teardown kills whatever still runs in the lab's namespaces (only processes
// started there by hadrill can be there) and deletes the namespaces.
func (n *Netns) Teardown(ctx context.Context) error {
	if err := n.mine(); err != nil {
		return err
	}
	var errs []string
	for _, ns := range n.namespaces() {
		for _, pid := range nsPids(ctx, ns) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if err := ip(ctx, "netns", "del", ns); err != nil && netns.Exists(ns) {
			errs = append(errs, err.Error())
		}
	}
	if err := machine.Teardown(n.p); err != nil {
		errs = append(errs, err.Error())
	}
	if len(errs) > 0 {
		return fmt.Errorf("teardown: %s", strings.Join(errs, "; "))
	}
	return n.release()
}

// namespaces lists every namespace of this lab: the planned ones and any
// stray hd-<lab>-* (a host removed from the spec, an interrupted set-up).
func (n *Netns) namespaces() []string {
	seen := map[string]bool{}
	var out []string
	add := func(ns string) {
		if ns != "" && !seen[ns] {
			seen[ns] = true
			out = append(out, ns)
		}
	}
	for _, h := range n.p.Hosts {
		add(h.Netns)
	}
	for _, ns := range netns.List("hd-" + n.p.Lab + "-") {
		add(ns)
	}
	add(n.p.Netns) // the switch last: deleting it removes the bridge-side veths
	return out
}

func nsPids(ctx context.Context, ns string) []int {
	out, err := exec.CommandContext(ctx, "ip", "netns", "pids", ns).Output()
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

func ipAll(ctx context.Context, cmds [][]string) error {
	for _, c := range cmds {
		if err := ip(ctx, c...); err != nil {
			return err
		}
	}
	return nil
}

func ip(ctx context.Context, args ...string) error {
	out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
