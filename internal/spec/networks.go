package spec

// Networks are the lab's networks and the NIC each host has on them. The
// application network (every host's first NIC) carries clients, the load
// balancers and health checks; a cluster network, when given, is a second
// NIC on every database host and arbitrator that carries Galera
// replication, IST and SST, and replication between servers.
type Networks struct {
	Application *Network `yaml:"application,omitempty"`
	Cluster     *Network `yaml:"cluster,omitempty"`
}

// Network is one of them: the bandwidth of each host's NIC on it (each
// direction; empty: unlimited).
type Network struct {
	Bandwidth string `yaml:"bandwidth,omitempty"`
}

// HasCluster reports whether the spec asks for a cluster network.
func (s *Spec) HasCluster() bool { return s.Networks != nil && s.Networks.Cluster != nil }

func (v *validator) networks(s *Spec) {
	if s.Networks == nil {
		return
	}
	for _, n := range []struct {
		path string
		net  *Network
	}{{"networks.application", s.Networks.Application}, {"networks.cluster", s.Networks.Cluster}} {
		if n.net == nil || n.net.Bandwidth == "" {
			continue
		}
		if _, err := ParseRate(n.net.Bandwidth); err != nil {
			v.add(n.path+".bandwidth", "expected a rate from 8kbit to 100gbit like 100mbit or 1gbit, got %q", n.net.Bandwidth)
		}
	}
}
