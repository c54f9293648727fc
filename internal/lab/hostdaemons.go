package lab

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/hadrill/hadrill/internal/agent"
	"github.com/hadrill/hadrill/internal/galera/boot"
	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/keeper"
	"github.com/hadrill/hadrill/internal/lb"
	"github.com/hadrill/hadrill/internal/monitor"
	"github.com/hadrill/hadrill/internal/server"
	"github.com/hadrill/hadrill/internal/status"
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

// startOrder is the order the daemons beside the servers start in, over
// every host: an arbitrator joins its cluster's running nodes, the agents
// answer before the proxies check them, both proxies of a pair answer
// before either keepalived (whose check asks its proxy) takes the address,
// then the exporters. The servers are started before, by the nodes' own
// start (a cluster's boot order is its own).
var startOrder = []string{roleArbitrator, roleAgent, roleProxy, roleKeepalived, roleExporter}

// hostDaemon is one daemon the lab runs on a host.
type hostDaemon struct {
	Role string
	host.Daemon
	// start starts it when it does not run and waits until it serves,
	// writing what it reads first (nil: a node's server, started by the
	// nodes' own start).
	start func(context.Context) error
	// kill kills it with SIGKILL (nil: the host's Kill of the daemon).
	kill func(context.Context) error
}

// daemonsOn lists every daemon the lab runs on host name, in the order a
// crash kills them: a node's server (what holds data) and health agent,
// an arbitrator's garbd, a load balancer instance's keepalived and proxy,
// the host's exporters. A crash kills them all, a stop every one but the
// server (stopped cleanly first), a start starts them in startOrder, and
// status says which run; the lab's own daemons (keeper, disk daemon, WAN
// emulator) run beside the hosts, not on one. A new daemon on a host is
// an entry here (its start's preparation in its own package).
func (l *Lab) daemonsOn(name string) []hostDaemon {
	var out []hostDaemon
	h := l.Prov.Host(name)
	for i := range l.p.Nodes {
		if n := &l.p.Nodes[i]; n.Host == name {
			out = append(out, hostDaemon{Role: roleServer, Daemon: server.Daemon(n)},
				hostDaemon{Role: roleAgent, Daemon: agent.Daemon(l.p, n, h.Exe()), start: func(ctx context.Context) error { return agent.Start(ctx, h, l.p, n) }})
		}
	}
	for i := range l.p.Clusters {
		if c := &l.p.Clusters[i]; c.Arbitrator != nil && c.Arbitrator.Name == name {
			out = append(out, hostDaemon{Role: roleArbitrator, Daemon: boot.Garbd(c.Arbitrator),
				start: func(ctx context.Context) error { return boot.StartArbitrator(ctx, bootLab{l}, c) }})
		}
	}
	b := l.balancerOf(name)
	if in, ok := b.Instance(name); ok {
		if in.Keepalived != nil {
			out = append(out, hostDaemon{Role: roleKeepalived, Daemon: b.Keepalived(in),
				start: func(ctx context.Context) error { return b.StartKeepalived(ctx, in) },
				kill:  func(ctx context.Context) error { return b.KillKeepalived(ctx, in) }})
		}
		out = append(out, hostDaemon{Role: roleProxy, Daemon: b.Proxy(in), start: func(ctx context.Context) error { return b.StartProxy(ctx, in) },
			kill: func(ctx context.Context) error { return b.KillProxy(ctx, in) }})
	}
	for _, e := range l.p.Monitoring {
		if e.Host == name && len(e.Argv) > 0 {
			out = append(out, hostDaemon{Role: roleExporter, Daemon: monitor.Daemon(e), start: func(ctx context.Context) error { return monitor.Start(ctx, l.p, h, e) }})
		}
	}
	return out
}

// killDaemons kills (SIGKILL) a host's daemons of the roles given (every
// role when none is); a load balancer instance's keepalived takes the
// virtual IP it holds with it (a host's NIC outlives the lab).
func (l *Lab) killDaemons(ctx context.Context, name string, roles ...string) error {
	h := l.Prov.Host(name)
	var errs []error
	for _, d := range l.daemonsOn(name) {
		switch {
		case len(roles) > 0 && !slices.Contains(roles, d.Role):
		case d.kill != nil:
			errs = append(errs, d.kill(ctx))
		default:
			errs = append(errs, h.Kill(ctx, d.Daemon))
		}
	}
	return errors.Join(errs...)
}

// startSequence is every host's daemons that a start starts, in
// startOrder (host by host within a role).
func (l *Lab) startSequence() []hostDaemon {
	var out []hostDaemon
	for _, role := range startOrder {
		for _, h := range l.p.Hosts {
			for _, d := range l.daemonsOn(h.Name) {
				if d.Role == role && d.start != nil {
					out = append(out, d)
				}
			}
		}
	}
	return out
}

// ensureDaemons starts what is not running beside the servers: every
// host's daemons in startOrder, then the lab's keeper; and waits until
// each load balancer pair holds its virtual IP and each load balancer
// routes an application login. It is idempotent.
func (l *Lab) ensureDaemons(ctx context.Context) error {
	for _, d := range l.startSequence() {
		if err := d.start(ctx); err != nil {
			return err
		}
	}
	if _, err := keeper.Daemon(l.p, l.home, exe()).Ensure(); err != nil {
		return fmt.Errorf("keeper: %w", err)
	}
	for i := range l.p.LoadBalancers {
		b := &l.p.LoadBalancers[i]
		if err := l.Balancer(b).WaitHeld(ctx); err != nil {
			return err
		}
		db, err := l.AppDB(fmt.Sprintf("%s:%d", b.Address, b.Port))
		if err != nil {
			return err
		}
		err = lb.WaitRouting(ctx, db, b.Name)
		db.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// hostDaemons says, for every host, which of its daemons run (status).
func (l *Lab) hostDaemons(ctx context.Context) []status.DaemonInfo {
	var out []status.DaemonInfo
	var ds []host.Daemon
	for _, h := range l.p.Hosts {
		for _, d := range l.daemonsOn(h.Name) {
			out, ds = append(out, status.DaemonInfo{Host: h.Name, Role: d.Role, Name: d.Name, State: "down"}), append(ds, d.Daemon)
		}
	}
	var wg sync.WaitGroup
	for i := range out {
		wg.Go(func() {
			p, err := l.Prov.Host(out[i].Host).Process(ctx, ds[i])
			out[i].Pid, out[i].State = p.Pid, status.StateOf(p, err)
		})
	}
	wg.Wait()
	return out
}
