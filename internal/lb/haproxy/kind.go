package haproxy

import (
	"context"

	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/lb/proxy"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
)

// Kind is HAProxy as a load balancer's proxy (proxy.Kind).
type Kind struct{}

var _ proxy.Kind = Kind{}

// Name is "haproxy".
func (Kind) Name() string { return "haproxy" }

// Version is `haproxy -v`.
func (Kind) Version() []string { return []string{"haproxy", "-v"} }

// Daemon is an instance's HAProxy, in the foreground (-db).
func (Kind) Daemon(in *plan.LBInstance, _ string) host.Daemon {
	return in.Proxy.Named(in.Host+" haproxy", []string{"haproxy", "-f", in.ConfigFile, "-db"})
}

// Config is an instance's haproxy.cfg: the load balancer's cluster's
// nodes behind their health agents (a primary cluster's writer and
// readers by role), with a metrics frontend when the lab runs its
// exporters; a pair's hosts listen on every address (the virtual one
// comes and goes).
func (Kind) Config(p *plan.Plan, b *plan.LB, in *plan.LBInstance) (string, error) {
	c := Config{Lab: p.Lab, Name: b.Name, Cluster: b.Cluster, Mode: string(b.Mode), Address: b.Address,
		Port: b.Port, ReadPort: b.ReadPort, CheckPort: plan.AgentPort, Timing: TimingOf(b.Checks),
		WriteCheck: "/", ReadCheck: "/", AdminSocket: in.AdminSocket}
	for _, e := range p.Monitoring {
		if e.Job == plan.JobProxy {
			c.MetricsPort = e.Port
		}
	}
	if b.VirtualIP {
		c.Address = "0.0.0.0"
	}
	if pc, _ := p.Cluster(b.Cluster); pc != nil && pc.Kind == spec.KindPrimary {
		c.WriteCheck, c.ReadCheck = "/primary", "/replica"
	}
	for _, n := range p.Nodes {
		if n.Cluster == b.Cluster {
			c.Backends = append(c.Backends, Backend{Name: n.Name, Address: n.Address, Port: n.Port})
		}
	}
	return Render(c)
}

// Servers reads `show stat` from the instance's admin socket.
func (Kind) Servers(ctx context.Context, dial proxy.Dial, in *plan.LBInstance) ([]proxy.ServerState, error) {
	return Stat(ctx, Dialer(dial), in.AdminSocket)
}

// Alive says whether the HAProxy behind socket answers.
func (Kind) Alive(ctx context.Context, socket string) error { return Alive(ctx, socket) }

// Events are the servers an instance's log says it marked down or up.
func (Kind) Events(log []byte) []proxy.Event { return Events(log) }
