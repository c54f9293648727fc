package lb

import (
	"fmt"
	"net/netip"

	"github.com/hadrill/hadrill/internal/lb/keepalived"
	"github.com/hadrill/hadrill/internal/plan"
)

// Files are what an instance of a load balancer reads: its proxy's
// configuration and, on a pair's host, its keepalived.conf.
type Files struct {
	Proxy      string
	Keepalived string
}

// Render writes the configuration of each instance of load balancer b of
// plan p (pure): its proxy's (the kind's Config) and, for a pair's hosts,
// keepalived's, unicast to the other host, the first preferred at
// start-up.
func Render(p *plan.Plan, b *plan.LB) ([]Files, error) {
	out := make([]Files, len(b.Instances))
	for j := range b.Instances {
		f, err := RenderInstance(p, b, j)
		if err != nil {
			return nil, err
		}
		out[j] = f
	}
	return out, nil
}

// RenderInstance writes the configuration of b's j-th instance (pure).
func RenderInstance(p *plan.Plan, b *plan.LB, j int) (Files, error) {
	in := &b.Instances[j]
	text, err := KindOf(b).Config(p, b, in)
	if err != nil {
		return Files{}, err
	}
	f := Files{Proxy: text}
	if in.Keepalived != nil {
		if f.Keepalived, err = renderKeepalived(p, b, j); err != nil {
			return Files{}, err
		}
	}
	return f, nil
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
		Peer: peer.Address, VIP: b.Address, Prefix: vip.Bits(), RouterID: 51 + i, Priority: 110 - 10*j, Advert: keepalived.Advert, Proxy: KindOf(b).Name(), Check: k.Check})
}
