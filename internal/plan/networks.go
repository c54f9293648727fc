package plan

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/hadrill/hadrill/internal/spec"
)

// The lab's networks, as NICs name them.
const (
	NetApplication = "application" // every host's eth0: clients, load balancers, health checks
	NetCluster     = "cluster"     // eth1 of database hosts and arbitrators: Galera, IST/SST, replication
)

// NIC is one of a host's network interfaces: its name in the host, the
// network it is on, its address, its link's other end on the network's
// bridge in the lab's namespace, and its bandwidth (each direction).
type NIC struct {
	Name    string `json:"name"`
	Network string `json:"network"`
	Address string `json:"address"`
	Veth    string `json:"veth"`
	Bridge  string `json:"bridge"`
	RateBps int64  `json:"rate_bps,omitempty"`
}

// String is how a NIC is shown: "eth1 cluster 198.18.40.11 (1gbit)".
func (c NIC) String() string {
	rate := "unlimited"
	if c.RateBps > 0 {
		rate = spec.FormatRate(c.RateBps)
	}
	return fmt.Sprintf("%s %s %s (%s)", c.Name, c.Network, c.Address, rate)
}

// ClusterBridge is the cluster network's bridge in the lab's namespace.
const ClusterBridge = "hdbr1"

// Addresses are every address of the host (application first).
func (h Host) Addresses() []string {
	out := []string{h.Address}
	if h.ClusterAddress != "" && h.ClusterAddress != h.Address {
		out = append(out, h.ClusterAddress)
	}
	return out
}

// clusterAddress is where the host's peers reach it for replication.
func (h Host) clusterAddress() string {
	if h.ClusterAddress != "" {
		return h.ClusterAddress
	}
	return h.Address
}

// PeerAddress is where the node's peers reach it for Galera, IST/SST and
// replication: its cluster network address, else its only one.
func (n *Node) PeerAddress() string {
	if n.ClusterAddress != "" {
		return n.ClusterAddress
	}
	return n.Address
}

// NetworkOf names the network an address of the lab is on.
func (p *Plan) NetworkOf(addr string) string {
	for _, h := range p.Hosts {
		if h.ClusterAddress != "" && h.ClusterAddress == addr {
			return NetCluster
		}
	}
	return NetApplication
}

// Host returns the host with that name.
func (p *Plan) Host(name string) (*Host, bool) {
	for i := range p.Hosts {
		if p.Hosts[i].Name == name {
			return &p.Hosts[i], true
		}
	}
	return nil, false
}

// clusterNetwork is the cluster network's /24: the lab's, with the second
// octet's last bit flipped (198.18.x ↔ 198.19.x), still inside the lab
// range. Labs are separate L2 islands, so another lab's application
// network on the same /24 never meets it.
func clusterNetwork(app netip.Prefix) netip.Prefix {
	a := app.Addr().As4()
	a[1] ^= 1
	return netip.PrefixFrom(netip.AddrFrom4(a), app.Bits())
}

// networks gives each host its NICs: eth0 on the application network, and
// with a cluster network eth1 for database hosts and arbitrators (same last
// octet as eth0). Rootless labs cannot have them.
func (b *builder) networks() {
	n := b.s.Networks
	if b.p.Mode == ModeSSH {
		b.remoteNetworks()
		return
	}
	if n != nil && b.p.Mode != ModeNetns {
		b.problems = append(b.problems, "networks: separate NICs need network namespaces (run as root); remove networks to run rootless")
		return
	}
	if b.p.Mode != ModeNetns {
		return
	}
	rate := func(net *spec.Network) int64 {
		if net == nil || net.Bandwidth == "" {
			return 0
		}
		r, _ := spec.ParseRate(net.Bandwidth)
		return r
	}
	var appRate int64
	if n != nil {
		appRate = rate(n.Application)
	}
	var cluster netip.Prefix
	if b.s.HasCluster() {
		cluster = clusterNetwork(netip.MustParsePrefix(b.p.Network))
		b.p.ClusterNetwork, b.p.ClusterBridge = cluster.String(), ClusterBridge
	}
	for i := range b.p.Hosts {
		h := &b.p.Hosts[i]
		h.NICs = []NIC{{Name: "eth0", Network: NetApplication, Address: h.Address, Veth: h.Veth, Bridge: b.p.Bridge, RateBps: appRate}}
		if !cluster.IsValid() || (h.Role != "db" && h.Role != "arbitrator") {
			continue
		}
		a := cluster.Addr().As4()
		a[3] = netip.MustParseAddr(h.Address).As4()[3]
		h.ClusterAddress = netip.AddrFrom4(a).String()
		h.NICs = append(h.NICs, NIC{Name: "eth1", Network: NetCluster, Address: h.ClusterAddress,
			Veth: fmt.Sprintf("hdc%d", i), Bridge: ClusterBridge, RateBps: rate(b.s.Networks.Cluster)})
	}
}

// remoteNetworks gives each host of remote machines its machine's own NICs
// (their counters are read in runs): the one holding its private address
// and, with a cluster network, a database host's or arbitrator's second,
// holding the inventory's cluster_address. Their bandwidth is the
// machines' own: a rate in the spec is emulated on this computer only.
func (b *builder) remoteNetworks() {
	n := b.s.Networks
	if n != nil {
		for _, net := range []struct {
			field string
			n     *spec.Network
		}{{"networks.application.bandwidth", n.Application}, {"networks.cluster.bandwidth", n.Cluster}} {
			if net.n != nil && net.n.Bandwidth != "" {
				b.problems = append(b.problems, net.field+": a NIC's rate is emulated on this computer only; remote machines' NICs have their own (remove it)")
			}
		}
	}
	cluster := b.s.HasCluster()
	var missing, unused []string
	for i := range b.p.Hosts {
		h := &b.p.Hosts[i]
		r := b.f.Remote[h.Name]
		if r.Interface != "" {
			h.NICs = []NIC{{Name: r.Interface, Network: NetApplication, Address: h.Address}}
		}
		if !cluster || (h.Role != "db" && h.Role != "arbitrator") {
			if r.ClusterAddress != "" {
				unused = append(unused, h.Name)
			}
			continue
		}
		if r.ClusterAddress == "" {
			missing = append(missing, h.Name)
			continue
		}
		h.ClusterAddress = r.ClusterAddress
		if r.ClusterInterface != "" {
			h.NICs = append(h.NICs, NIC{Name: r.ClusterInterface, Network: NetCluster, Address: h.ClusterAddress})
		}
	}
	if len(unused) > 0 {
		why := "the spec has no cluster network (networks: {cluster: {}})"
		if cluster {
			why = "only database hosts and arbitrators are on the cluster network"
		}
		b.p.Warnings = append(b.p.Warnings, fmt.Sprintf("the inventory's cluster_address of %s is not used: %s", strings.Join(unused, ", "), why))
	}
	if len(missing) > 0 {
		b.problems = append(b.problems, fmt.Sprintf("networks.cluster: on remote machines the cluster network is each database host's and arbitrator's second NIC: give %s a cluster_address in the inventory (the address of that NIC)",
			strings.Join(missing, ", ")))
	}
}
