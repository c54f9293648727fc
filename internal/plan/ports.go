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
	out := portLists{}
	add := func(host string, ports ...int) { out.add(host, ports...) }
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
	return out.sorted()
}

// portLists are hosts' ports, each once.
type portLists map[string][]int

func (l portLists) add(host string, ports ...int) {
	for _, port := range ports {
		if port > 0 && !slices.Contains(l[host], port) {
			l[host] = append(l[host], port)
		}
	}
}

func (l portLists) sorted() map[string][]int {
	for _, ports := range l {
		slices.Sort(ports)
	}
	return l
}

// ClusterPorts lists, for every host with an address of its own on a
// cluster network, the TCP ports the lab's daemons listen on at that
// address: a database node's server (it listens on both of its addresses)
// and, in a Galera cluster, the group, IST and SST ports (there only); an
// arbitrator's group port. Other hosts are absent. Each list is sorted.
func (p *Plan) ClusterPorts() map[string][]int {
	own := map[string]bool{} // hosts with a cluster address apart from their private one
	for _, h := range p.Hosts {
		own[h.Name] = h.ClusterAddress != "" && h.ClusterAddress != h.Address
	}
	out := portLists{}
	add := func(host string, ports ...int) {
		if own[host] {
			out.add(host, ports...)
		}
	}
	for _, n := range p.Nodes {
		add(n.Host, n.Port)
		if n.Kind == spec.KindGalera {
			add(n.Host, GaleraPort, ISTPort, SSTPort)
		}
	}
	for _, c := range p.Clusters {
		if c.Arbitrator != nil {
			add(c.Arbitrator.Name, GaleraPort)
		}
	}
	return out.sorted()
}
