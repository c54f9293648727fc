package lab

import (
	"context"
	"errors"

	"github.com/hadrill/hadrill/internal/agent"
	"github.com/hadrill/hadrill/internal/galera/boot"
	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/monitor"
	"github.com/hadrill/hadrill/internal/server"
)

// What a daemon of a host is.
const (
	roleServer     = "server"
	roleAgent      = "agent"
	roleArbitrator = "arbitrator"
	roleKeepalived = "keepalived"
	roleProxy      = "proxy"
	roleExporter   = "exporter"
)

// hostDaemon is one daemon the lab runs on a host.
type hostDaemon struct {
	Role string
	host.Daemon
}

// daemonsOn lists every daemon the lab runs on host name, in the order a
// crash kills them: a node's server (what holds data) and health agent,
// an arbitrator's garbd, a load balancer instance's keepalived and proxy,
// the host's exporters. A crash kills them all and a stop every one but
// the server (stopped cleanly first); the lab's own daemons (keeper, disk
// daemon, WAN emulator) run beside the hosts, not on one. A new daemon on
// a host is a line here (its start, which has its own preparation, a line
// in ensureDaemons).
func (l *Lab) daemonsOn(name string) []hostDaemon {
	var out []hostDaemon
	h := l.Prov.Host(name)
	for i := range l.p.Nodes {
		if n := &l.p.Nodes[i]; n.Host == name {
			out = append(out, hostDaemon{roleServer, server.Daemon(n)}, hostDaemon{roleAgent, agent.Daemon(l.p, n, h.Exe())})
		}
	}
	for _, c := range l.p.Clusters {
		if a := c.Arbitrator; a != nil && a.Name == name {
			out = append(out, hostDaemon{roleArbitrator, boot.Garbd(a)})
		}
	}
	b := l.balancerOf(name)
	if in, ok := b.Instance(name); ok {
		if in.Keepalived != nil {
			out = append(out, hostDaemon{roleKeepalived, b.Keepalived(in)})
		}
		out = append(out, hostDaemon{roleProxy, b.Proxy(in)})
	}
	for _, e := range l.p.Monitoring {
		if e.Host == name && len(e.Argv) > 0 {
			out = append(out, hostDaemon{roleExporter, monitor.Daemon(e)})
		}
	}
	return out
}

// killDaemons kills (SIGKILL) a host's daemons of every role but skip; a
// load balancer instance's keepalived takes the virtual IP it holds with
// it (a host's NIC outlives the lab).
func (l *Lab) killDaemons(ctx context.Context, name string, skip string) error {
	h := l.Prov.Host(name)
	var errs []error
	for _, d := range l.daemonsOn(name) {
		switch d.Role {
		case skip:
		case roleKeepalived:
			b := l.balancerOf(name)
			in, _ := b.Instance(name)
			errs = append(errs, b.KillKeepalived(ctx, in))
		default:
			errs = append(errs, h.Kill(ctx, d.Daemon))
		}
	}
	return errors.Join(errs...)
}
