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

	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/infra/disk"
	"github.com/hadrill/hadrill/internal/infra/machine"
	"github.com/hadrill/hadrill/internal/infra/nic"
	"github.com/hadrill/hadrill/internal/netns"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/provider"
)

// New returns the provider for a plan's mode; exe is the hadrill binary
// (the daemons under hosts, like the disk emulator, are `exe ...`), user
// the account hadrill runs as.
func New(p *plan.Plan, exe, user string) provider.Provider {
	if p.Mode == plan.ModeNetns {
		return &Netns{p: p, exe: exe, user: user}
	}
	return &Rootless{p: p, exe: exe, user: user}
}

// Rootless hosts are addresses on lo: nothing to create, no isolation.
type Rootless struct {
	p    *plan.Plan
	exe  string
	user string
}

// Host is one of the lab's hosts.
func (r *Rootless) Host(name string) host.Host { return HostOf(r, name, r.exe, r.user) }

func (r *Rootless) Claim() error                          { return nil }
func (r *Rootless) Setup(context.Context) error           { return nil }
func (r *Rootless) Teardown(context.Context) error        { return nil }
func (r *Rootless) Wrap(_ string, argv []string) []string { return argv }
func (r *Rootless) Kind() string                          { return plan.ModeRootless }
func (r *Rootless) Dial(ctx context.Context, _, network, addr string) (net.Conn, error) {
	return netns.Dial(ctx, "", network, addr)
}

// Netns hosts are network namespaces on a per-lab bridge.
type Netns struct {
	p    *plan.Plan
	exe  string
	user string
}

func (n *Netns) Kind() string { return plan.ModeNetns }

// Host is one of the lab's hosts.
func (n *Netns) Host(name string) host.Host { return HostOf(n, name, n.exe, n.user) }

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

// Dial connects from a host's namespace. A unix socket is a path in this
// computer's file system, the same from every namespace: dialed directly.
func (n *Netns) Dial(ctx context.Context, host, network, addr string) (net.Conn, error) {
	if network == "unix" {
		return netns.Dial(ctx, "", network, addr)
	}
	ns := n.nsOf(host)
	if ns == "" {
		return nil, fmt.Errorf("unknown host %q", host)
	}
	return netns.Dial(ctx, ns, network, addr)
}

// Setup creates the lab namespace with a bridge per network, then each
// host namespace with a veth per NIC to its network's bridge, each NIC
// capped at its rate both ways. Nothing touches the root namespace.
func (n *Netns) Setup(ctx context.Context) error {
	if err := n.Claim(); err != nil {
		return err
	}
	lab := n.p.Netns
	if !netns.Exists(lab) {
		cmds := [][]string{{"netns", "add", lab}, {"-n", lab, "link", "set", "lo", "up"}}
		for _, br := range []string{n.p.Bridge, n.p.ClusterBridge} {
			if br != "" {
				cmds = append(cmds, []string{"-n", lab, "link", "add", br, "type", "bridge"}, []string{"-n", lab, "link", "set", br, "up"})
			}
		}
		if err := ipAll(ctx, cmds); err != nil {
			return err
		}
	}
	for _, h := range n.p.Hosts {
		if netns.Exists(h.Netns) {
			continue
		}
		cmds := [][]string{{"netns", "add", h.Netns}, {"-n", h.Netns, "link", "set", "lo", "up"}}
		for _, c := range h.NICs {
			cmds = append(cmds, []string{"-n", lab, "link", "add", c.Veth, "type", "veth", "peer", "name", c.Name, "netns", h.Netns},
				[]string{"-n", lab, "link", "set", c.Veth, "master", c.Bridge, "up"},
				[]string{"-n", h.Netns, "addr", "add", c.Address + "/" + n.bits(c.Network), "dev", c.Name},
				[]string{"-n", h.Netns, "link", "set", c.Name, "up"})
		}
		if err := ipAll(ctx, cmds); err != nil {
			return fmt.Errorf("host %s: %w", h.Name, err)
		}
		for _, c := range h.NICs {
			if err := shapeNIC(ctx, h.Netns, lab, c); err != nil {
				return fmt.Errorf("host %s: %s: %w", h.Name, c.Name, err)
			}
		}
	}
	if err := machine.Setup(n.p); err != nil {
		return err
	}
	return disk.Setup(ctx, n.p, n.exe)
}

func (n *Netns) bits(network string) string {
	cidr := n.p.Network
	if network == plan.NetCluster {
		cidr = n.p.ClusterNetwork
	}
	return strings.SplitN(cidr, "/", 2)[1]
}

// shapeNIC caps a NIC at its rate: what the host sends (on the NIC) and
// what it receives (on the link's other end, in the lab's namespace).
func shapeNIC(ctx context.Context, hostNs, labNs string, c plan.NIC) error {
	for _, side := range []struct {
		ns   string
		cmds [][]string
	}{{hostNs, nic.Egress(c.Name, c.RateBps, nil)}, {labNs, nic.Ingress(c.Veth, c.RateBps)}} {
		for _, cmd := range side.cmds {
			if out, err := exec.CommandContext(ctx, "tc", append([]string{"-n", side.ns}, cmd...)...).CombinedOutput(); err != nil {
				return fmt.Errorf("tc %s: %v: %s", strings.Join(cmd, " "), err, strings.TrimSpace(string(out)))
			}
		}
	}
	return nil
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
	if err := disk.Teardown(ctx, n.p, n.exe); err != nil {
		errs = append(errs, err.Error())
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
