package lb

import (
	"fmt"
	"net/netip"

	"github.com/hadrill/hadrill/internal/lb/haproxy"
	"github.com/hadrill/hadrill/internal/lb/keepalived"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
)

// Files are what an instance of a load balancer reads: its haproxy.cfg
// and, on a pair's host, its keepalived.conf.
type Files struct {
	Haproxy    string
	Keepalived string
}

// Render writes the configuration of each instance of load balancer b of
// plan p (pure): HAProxy over b's cluster's nodes, checked through their
// health agents (a primary cluster's writer and readers by role), with a
// metrics frontend when the lab runs its exporters; keepalived for a
// pair's hosts, unicast to the other host, the first preferred at
// start-up.
func Render(p *plan.Plan, b *plan.LB) ([]Files, error) {
	c := haproxy.Config{Lab: p.Lab, Name: b.Name, Cluster: b.Cluster, Mode: string(b.Mode), Address: b.Address,
		Port: b.Port, ReadPort: b.ReadPort, CheckPort: plan.AgentPort, Timing: haproxy.DefaultTiming,
		WriteCheck: "/", ReadCheck: "/"}
	for _, e := range p.Monitoring {
		if e.Job == plan.JobHaproxy {
			c.MetricsPort = e.Port
		}
	}
	if b.VirtualIP { // each host of the pair listens on every address: the virtual one comes and goes
		c.Address = "0.0.0.0"
	}
	if pc, _ := p.Cluster(b.Cluster); pc != nil && pc.Kind == spec.KindPrimary {
		c.WriteCheck, c.ReadCheck = "/primary", "/replica"
	}
	for _, n := range p.Nodes {
		if n.Cluster == b.Cluster {
			c.Backends = append(c.Backends, haproxy.Backend{Name: n.Name, Address: n.Address, Port: n.Port})
		}
	}
	out := make([]Files, len(b.Instances))
	for j := range b.Instances {
		in := &b.Instances[j]
		c.AdminSocket = in.AdminSocket
		text, err := haproxy.Render(c)
		if err != nil {
			return nil, err
		}
		out[j].Haproxy = text
		if in.Keepalived != nil {
			if out[j].Keepalived, err = renderKeepalived(p, b, j); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// renderKeepalived is the keepalived.conf of the j-th host of b's pair.
func renderKeepalived(p *plan.Plan, b *plan.LB, j int) (string, error) {
	if len(b.Instances) != 2 {
		return "", fmt.Errorf("load balancer %s: keepalived runs on a pair of hosts, not %d", b.Name, len(b.Instances))
	}
	in, peer := b.Instances[j], b.Instances[1-j]
	k := in.Keepalived
	vip, err := netip.ParsePrefix(k.VIP)
	if err != nil {
		return "", fmt.Errorf("load balancer %s: host %s: virtual IP %q: %w", b.Name, in.Host, k.VIP, err)
	}
	i := 0
	for x := range p.LoadBalancers {
		if p.LoadBalancers[x].Name == b.Name {
			i = x
		}
	}
	return keepalived.Render(keepalived.Config{Lab: p.Lab, LB: b.Name, Host: in.Host, Interface: k.Interface, Self: in.Address,
		Peer: peer.Address, VIP: b.Address, Prefix: vip.Bits(), RouterID: 51 + i, Priority: 110 - 10*j, Advert: keepalived.Advert, Check: k.Check})
}
