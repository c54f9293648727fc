// Package spec is the topology a user writes: regions, clusters, replication
// channels, load balancers and a client host. Load parses YAML strictly and
// reports every problem at once with its field path; Defaults fills the rest.
package spec

import "fmt"

// Spec is a lab topology as written by the user (after defaults).
type Spec struct {
	Name          string         `yaml:"name,omitempty"`
	Description   string         `yaml:"description,omitempty"`
	Network       string         `yaml:"network,omitempty"` // CIDR inside 198.18.0.0/15
	Regions       []Region       `yaml:"regions,omitempty"`
	Links         []Link         `yaml:"links,omitempty"`
	Clusters      []Cluster      `yaml:"clusters"`
	Replication   []Channel      `yaml:"replication,omitempty"`
	LoadBalancers []LoadBalancer `yaml:"load_balancers,omitempty"`
	Client        *Client        `yaml:"client,omitempty"`
	// Networks: the application network's and an optional cluster
	// network's NICs (default: one unlimited NIC per host).
	Networks *Networks `yaml:"networks,omitempty"`
	// Disks are disk classes volumes may name (beside BuiltinDisks).
	Disks []DiskClass `yaml:"disks,omitempty"`
	// Machines are host sizes the hosts may name (beside BuiltinMachines).
	Machines []Machine         `yaml:"machines,omitempty"`
	Labels   map[string]string `yaml:"labels,omitempty"`
	// Monitoring runs the exporters a DBA runs (node_exporter per host,
	// mysqld_exporter per node, the load balancers' proxies' own
	// endpoints), scraped every
	// second during runs.
	Monitoring bool `yaml:"monitoring,omitempty"`
}

// Region groups hosts that share a site; links between regions carry WAN impairments.
type Region struct {
	Name string `yaml:"name"`
}

// Link describes the WAN between two regions (emulated by `hadrill netem`).
type Link struct {
	Between   []string `yaml:"between"`             // exactly two region names
	RTT       string   `yaml:"rtt,omitempty"`       // e.g. 100ms
	Jitter    string   `yaml:"jitter,omitempty"`    // e.g. 1ms
	Loss      float64  `yaml:"loss,omitempty"`      // percent, 0..100
	Bandwidth string   `yaml:"bandwidth,omitempty"` // e.g. 100mbit
}

// Kind is what a cluster is.
type Kind string

// Cluster kinds.
const (
	KindGalera     Kind = "galera"
	KindPrimary    Kind = "primary"
	KindStandalone Kind = "standalone"
)

// Cluster is a group of database nodes of one kind.
type Cluster struct {
	Name   string `yaml:"name"`
	Kind   Kind   `yaml:"kind"`
	Nodes  *int   `yaml:"nodes,omitempty"`
	Region string `yaml:"region,omitempty"`
	// Regions spreads the nodes over several regions, in blocks: 6 nodes
	// over [east, west] put 3 in east, 3 in west (a remainder goes to the
	// first regions). Region is then the first of them.
	Regions []string `yaml:"regions,omitempty"`
	Profile string   `yaml:"profile,omitempty"`
	Memory  string   `yaml:"memory,omitempty"` // per node memory share, e.g. 2G
	// Machine is every node's size (a name from machines or the built-in
	// sizes); empty: the node shares this machine with everything else.
	Machine string `yaml:"machine,omitempty"`
	// NodeMachines gives single nodes another machine than the cluster's
	// (node name -> machine), e.g. {db3: small}.
	NodeMachines map[string]string `yaml:"node_machines,omitempty"`
	// Storage puts every node's datadir and logs on emulated cloud disks
	// (empty: the lab's own file system).
	Storage *Storage `yaml:"storage,omitempty"`
	// FailureDetection is how fast Galera members evict a silent peer:
	// stock (Galera's defaults: suspected after 5 s), fast (a LAN setting:
	// suspected after 0.5 s, so writes resume within about a second) or wan
	// (for sites up to about 100 ms apart: suspected after 1.5 s, fifteen
	// such round trips and five keepalives).
	FailureDetection string `yaml:"failure_detection,omitempty"`
	// Segments off keeps every node of a cluster over several regions in one
	// Galera segment, as Galera before 3.0 had it: a write set crosses the
	// WAN to each remote node, not once per region (default on).
	Segments *bool `yaml:"segments,omitempty"`
	// AvailableWhenDonor: a member donating a state transfer (or desynced
	// by hand, wsrep_desync=ON) still answers 200 to the load balancer's
	// health check, as Percona's clustercheck with available_when_donor=1
	// (default off: Synced members only).
	AvailableWhenDonor bool `yaml:"available_when_donor,omitempty"`
	// Mode is how a primary cluster's replicas follow the primary: async, or
	// semi-sync (a commit waits for one replica's acknowledgement, at most
	// AckTimeout, then falls back to async).
	Mode       ReplMode `yaml:"mode,omitempty"`
	AckTimeout string   `yaml:"ack_timeout,omitempty"`
	// Failover is what happens when a primary cluster's primary dies:
	// manual (the default: `hadrill promote --force`), or auto (the keeper
	// promotes the replica that received the most, once the primary is
	// unreachable and no replica still hears it).
	Failover string `yaml:"failover,omitempty"`
	// FailoverMaxLag bounds what an automatic failover may give up: the
	// chosen replica must have applied, within this long, everything the
	// dead primary wrote up to this long before it was last seen alive;
	// else the failover is refused and the cluster waits for its primary
	// (default 10s).
	FailoverMaxLag string `yaml:"failover_max_lag,omitempty"`
	// FailoverAfter is how long a primary that runs must be out of its
	// clients' reach before the keeper fails over (default 1s, at least
	// 0.5s): a cut shorter than this never fails over. A primary whose
	// server is gone (killed, its host crashed) is failed over at once.
	FailoverAfter string `yaml:"failover_after,omitempty"`
	// Arbitrator adds garbd (Galera's arbitrator: a member that votes but
	// holds no data) on a host of its own, named <cluster>arb: with 3 + 3
	// nodes over two sites, an arbitrator in a third one keeps the side it
	// can reach primary when the sites lose each other.
	Arbitrator *Arbitrator `yaml:"arbitrator,omitempty"`
	// FaultDomains spread the nodes over named fault domains, round-robin
	// (node 1 in the first, node 2 in the second, …), as a cloud's
	// availability set does: hosts of one domain share a rack, a power
	// supply, a switch and fail together. Default: every host its own.
	FaultDomains []string `yaml:"fault_domains,omitempty"`
	// BinaryLog off runs the nodes without a binary log (document 000
	// compares on and off): no replication channel from or into the
	// cluster, no point-in-time restore, and Galera's GTID mode off with it.
	BinaryLog *bool             `yaml:"binary_log,omitempty"`
	Addresses []string          `yaml:"addresses,omitempty"` // optional fixed node addresses
	Config    map[string]string `yaml:"config,omitempty"`    // my.cnf [mariadbd] overrides
}

// NodeDomain is the fault domain of the cluster's j-th node (1-based): the
// domains round-robin, or the node's own name without any.
func (c Cluster) NodeDomain(j int) string {
	if len(c.FaultDomains) == 0 {
		return c.NodeHost(j)
	}
	return c.FaultDomains[(j-1)%len(c.FaultDomains)]
}

// HostDomain is the fault domain of the load balancer's k-th host
// (1-based; a single load balancer's is 1).
func (lb LoadBalancer) HostDomain(k int) string {
	if len(lb.FaultDomains) == 0 {
		if lb.Pair() {
			return lb.PairHost(k)
		}
		return lb.Name
	}
	return lb.FaultDomains[(k-1)%len(lb.FaultDomains)]
}

// Binlog says whether the cluster's nodes keep a binary log (the default).
func (c Cluster) Binlog() bool { return c.BinaryLog == nil || *c.BinaryLog }

// Segmented says whether a Galera cluster's regions are segments of their
// own: over several regions, unless segments is off.
func (c Cluster) Segmented() bool { return len(c.Regions) > 1 && (c.Segments == nil || *c.Segments) }

// Arbitrator places a Galera arbitrator.
type Arbitrator struct {
	Region      string `yaml:"region,omitempty"` // default: the cluster's region
	Machine     string `yaml:"machine,omitempty"`
	FaultDomain string `yaml:"fault_domain,omitempty"`
}

// Channel is a replication stream between clusters.
type Channel struct {
	From       string   `yaml:"from"`
	To         string   `yaml:"to"`
	Mode       ReplMode `yaml:"mode,omitempty"` // async | semi-sync
	AckTimeout string   `yaml:"ack_timeout,omitempty"`
}

// LBMode is how a load balancer spreads traffic.
type LBMode string

// Load balancer modes.
const (
	LBSingleWriter LBMode = "single-writer" // one writer, the others backups
	LBBalanced     LBMode = "balanced"      // writes and reads across every healthy node
)

// LBChecks is how a load balancer checks its servers' health agents.
type LBChecks string

// Load balancer checks.
const (
	// LBChecksFast checks every 200 ms, takes a server out after 2 failed
	// checks or at once on a failed connection, and shuts the sessions of
	// a server it takes out: failover in under a second.
	LBChecksFast LBChecks = "fast"
	// LBChecksCloud probes as a cloud's internal load balancer does
	// (Azure's defaults: every 15 s, out after 2 failed probes, back after
	// 2 good ones): a server taken out gets no new connection, and the
	// connections it has go on.
	LBChecksCloud LBChecks = "cloud"
)

// LBKind is the software a load balancer balances with.
type LBKind string

// Load balancer kinds.
const (
	// LBKindHAProxy is HAProxy on the load balancer's host: a process
	// every connection's bytes pass through (the default).
	LBKindHAProxy LBKind = "haproxy"
	// LBKindIPTables is the host's kernel: iptables DNAT rules spread new
	// connections over the servers its prober finds healthy (as
	// kube-proxy's iptables mode, or a cloud's layer-4 load balancer: no
	// process on the data path); it needs network namespaces or SSH
	// hosts, and keeps a server's connections when it takes it out.
	LBKindIPTables LBKind = "iptables"
)

// Metrics says whether the kind serves its own Prometheus metrics.
func (k LBKind) Metrics() bool { return k != LBKindIPTables }

// LoadBalancer fronts one cluster.
type LoadBalancer struct {
	Name    string `yaml:"name"`
	Cluster string `yaml:"cluster"`
	Mode    LBMode `yaml:"mode,omitempty"` // single-writer | balanced
	// Kind is what it balances with: haproxy (the default) or iptables.
	Kind LBKind `yaml:"kind,omitempty"`
	// Checks is how it checks its servers: fast (the default) or cloud.
	Checks LBChecks `yaml:"checks,omitempty"`
	Region string   `yaml:"region,omitempty"`
	// Address is where clients connect: the host's address, or with two
	// replicas the virtual IP the pair shares.
	Address string `yaml:"address,omitempty"`
	Machine string `yaml:"machine,omitempty"`
	// FaultDomains place its host (or a pair's two, round-robin) in fault
	// domains (see Cluster.FaultDomains).
	FaultDomains []string `yaml:"fault_domains,omitempty"`
	// Replicas 2 runs the load balancer on two hosts (<name>1, <name>2),
	// its proxy on each, keepalived (VRRP) moving the virtual IP to the one
	// whose proxy runs: no single point of failure. Default 1.
	Replicas int `yaml:"replicas,omitempty"`
}

// Pair says whether the load balancer is a redundant pair.
func (lb LoadBalancer) Pair() bool { return lb.Replicas == 2 }

// PairHost is the k-th host (1 or 2) of a load balancer pair: lb1.
func (lb LoadBalancer) PairHost(k int) string { return fmt.Sprintf("%s%d", lb.Name, k) }

// NodeHost is the host of the cluster's j-th node (1-based): db1.
func (c Cluster) NodeHost(j int) string { return fmt.Sprintf("%s%d", c.Name, j) }

// ArbitratorHost is the host of the cluster's arbitrator: dbarb.
func (c Cluster) ArbitratorHost() string { return c.Name + "arb" }

// HostNames names the hosts of a lab of the spec, in the order a plan
// places them, and its load balancer pairs (whose two hosts share a
// virtual IP): what an inventory must place, known before any machine is
// reached.
func (s *Spec) HostNames() (hosts, pairs []string) {
	for _, c := range s.Clusters {
		for j := 1; j <= c.NodeCount(); j++ {
			hosts = append(hosts, c.NodeHost(j))
		}
		if c.Arbitrator != nil {
			hosts = append(hosts, c.ArbitratorHost())
		}
	}
	for _, lb := range s.LoadBalancers {
		if !lb.Pair() {
			hosts = append(hosts, lb.Name)
			continue
		}
		pairs = append(pairs, lb.Name)
		hosts = append(hosts, lb.PairHost(1), lb.PairHost(2))
	}
	return append(hosts, s.Client.Name), pairs
}

// Client is the host load generators run on.
type Client struct {
	Name    string `yaml:"name,omitempty"`
	Region  string `yaml:"region,omitempty"`
	Address string `yaml:"address,omitempty"`
	Machine string `yaml:"machine,omitempty"`
}

// NodeRegion is the region of the cluster's j-th node (1-based).
func (c Cluster) NodeRegion(j int) string {
	k := len(c.Regions)
	if k == 0 {
		return c.Region
	}
	n := c.NodeCount()
	for i, r := range c.Regions {
		size := n / k
		if i < n%k {
			size++
		}
		if j <= size {
			return r
		}
		j -= size
	}
	return c.Regions[k-1]
}

// NodeCount returns the cluster's node count (after defaults it is set).
func (c Cluster) NodeCount() int {
	if c.Nodes == nil {
		return 0
	}
	return *c.Nodes
}
