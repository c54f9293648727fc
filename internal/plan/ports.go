package plan

import (
	"slices"

	"github.com/hadrill/hadrill/internal/spec"
)

// Ports lists, for every host, the TCP ports the lab's daemons listen on
// there: a database node's server and health agent (and Galera's group,
// IST and SST ports in a Galera cluster), an arbitrator's group port, a
// load balancer host's listeners. A host that listens on nothing (the
// client) is absent. Each list is sorted.
func (p *Plan) Ports() map[string][]int {
	out := map[string][]int{}
	add := func(host string, ports ...int) {
		for _, port := range ports {
			if port > 0 && !slices.Contains(out[host], port) {
				out[host] = append(out[host], port)
			}
		}
	}
	for _, n := range p.Nodes {
		add(n.Host, n.Port, n.AgentPort)
		if n.Kind == spec.KindGalera {
			add(n.Host, GaleraPort, ISTPort, SSTPort)
		}
	}
	for _, c := range p.Clusters {
		if c.Arbitrator != nil {
			add(c.Arbitrator.Name, GaleraPort)
		}
	}
	for _, lb := range p.LoadBalancers {
		for _, in := range lb.Instances {
			add(in.Host, lb.Port, lb.ReadPort)
		}
	}
	for _, e := range p.Monitoring {
		add(e.Host, e.Port)
	}
	for _, ports := range out {
		slices.Sort(ports)
	}
	return out
}
