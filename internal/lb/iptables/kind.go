package iptables

import (
	"context"
	"encoding/json"
	"net"
	"time"

	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/lb/proxy"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
)

// Kind is the kernel's iptables as a load balancer (proxy.Kind): hadrill's
// prober on each instance's host, the kernel on the data path.
type Kind struct{}

var (
	_ proxy.Kind    = Kind{}
	_ proxy.Residue = Kind{}
)

// Name is "iptables".
func (Kind) Name() string { return string(spec.LBKindIPTables) }

// Version is `iptables --version` (the prober is hadrill's own, of the
// run's version).
func (Kind) Version() []string { return []string{"iptables", "--version"} }

// Daemon is an instance's prober: hadrill lb-iptables, in the foreground.
func (Kind) Daemon(in *plan.LBInstance, exe string) host.Daemon {
	return in.Proxy.Named(in.Host+" iptables prober", []string{exe, "lb-iptables", "--config", in.ConfigFile})
}

// ConfigOf is an instance's prober configuration (pure): the load
// balancer's cluster's nodes behind their health agents (a primary
// cluster's writer and readers by role), writes to the first healthy
// node in single-writer mode.
func ConfigOf(p *plan.Plan, b *plan.LB, in *plan.LBInstance) Config {
	c := Config{Lab: p.Lab, Name: b.Name, Cluster: b.Cluster, Address: b.Address, Source: in.Address, CheckPort: plan.AgentPort,
		Timing: TimingOf(b.Checks), AdminSocket: in.AdminSocket, Chain: ChainOf(p.Lab, b.Name), Dir: in.Dir}
	write, read := "/", "/"
	if pc, _ := p.Cluster(b.Cluster); pc != nil && pc.Kind == spec.KindPrimary {
		write, read = "/primary", "/replica"
	}
	c.Groups = []Group{{Name: "writes", Port: b.Port, Check: write, First: b.Mode != spec.LBBalanced}}
	if b.Mode == spec.LBBalanced {
		c.Groups = append(c.Groups, Group{Name: "reads", Port: b.ReadPort, Check: read})
	}
	for _, n := range p.Nodes {
		if n.Cluster == b.Cluster {
			c.Backends = append(c.Backends, Backend{Name: n.Name, Address: n.Address, Port: n.Port})
		}
	}
	return c
}

// Config is an instance's configuration file's text (JSON).
func (Kind) Config(p *plan.Plan, b *plan.LB, in *plan.LBInstance) (string, error) {
	data, err := json.MarshalIndent(ConfigOf(p, b, in), "", "  ")
	return string(data) + "\n", err
}

// Servers asks the instance's prober on its admin socket.
func (Kind) Servers(ctx context.Context, dial proxy.Dial, in *plan.LBInstance) ([]proxy.ServerState, error) {
	conn, err := dial(ctx, "unix", in.AdminSocket)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if d, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(d)
	} else {
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	}
	return ReadStates(conn)
}

// Alive says whether the prober behind socket answers.
func (k Kind) Alive(ctx context.Context, socket string) error {
	var d net.Dialer
	_, err := k.Servers(ctx, d.DialContext, &plan.LBInstance{AdminSocket: socket})
	return err
}

// Events are the changes an instance's prober logged.
func (Kind) Events(log []byte) []proxy.Event { return Events(log) }

// Residue takes away what a killed prober leaves: its chains (the
// kernel would go on balancing by them) and forwarding turned on.
func (Kind) Residue(p *plan.Plan, b *plan.LB, in *plan.LBInstance) [][]string {
	c := ConfigOf(p, b, in)
	return append(Uninstall(c), RestoreForwarding(c.Dir))
}
