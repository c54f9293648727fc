package plan

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/spec"
)

// Lab-sized defaults, documented in docs/ARCHITECTURE.md.
const (
	RedoLog   = "64M" // innodb_log_file_size (the datadir is initialised with it)
	gcache    = "64M"
	minPool   = 128 << 20
	maxPool   = 8 << 30
	poolChunk = 128 << 20
)

func (b *builder) nodes() error {
	dbNodes := 0
	for _, c := range b.s.Clusters {
		dbNodes += c.NodeCount()
	}
	for ci, c := range b.s.Clusters {
		pc := Cluster{Name: c.Name, Kind: c.Kind, GTIDDomain: ci + 1, NoBinlog: !c.Binlog()}
		switch c.Kind {
		case spec.KindGalera:
			pc.StateUUID = stableUUID(b.p.Lab + "/" + c.Name)
		case spec.KindPrimary:
			pc.Mode, pc.Primary = c.Mode, c.Name+"1"
			if c.Failover == spec.FailoverAuto {
				pc.AutoFailover = true
				pc.FailoverMaxLag, _ = time.ParseDuration(c.FailoverMaxLag)
				pc.FailoverAfter, _ = time.ParseDuration(c.FailoverAfter)
			}
		}
		var peers []string
		for j := 1; j <= c.NodeCount(); j++ {
			h := b.hostByName(fmt.Sprintf("%s%d", c.Name, j))
			peers = append(peers, fmt.Sprintf("%s:%d", h.clusterAddress(), GaleraPort))
		}
		for j := 1; j <= c.NodeCount(); j++ {
			n, err := b.node(ci, j, c, peers, dbNodes)
			if err != nil {
				return err
			}
			pc.Nodes = append(pc.Nodes, n.Name)
			b.p.Nodes = append(b.p.Nodes, n)
		}
		if c.Arbitrator != nil && c.Kind == spec.KindGalera {
			pc.Arbitrator = b.arbitrator(c, peers)
		}
		b.p.Clusters = append(b.p.Clusters, pc)
	}
	b.channels()
	return b.loadBalancers()
}

// channels: each channel is applied by the target cluster's first node and
// starts from the source cluster's first node (its primary, for a primary cluster).
func (b *builder) channels() {
	for _, ch := range b.s.Replication {
		b.p.Channels = append(b.p.Channels, Channel{Name: ch.From, From: ch.From, To: ch.To, Mode: ch.Mode,
			Receiver: ch.To + "1", Source: ch.From + "1"})
	}
}

// ring places a cluster in a ring of primaries (its size and the
// cluster's position in it, from 1; 0, 0 outside any).
func (b *builder) ring(cluster string) (size, position int) {
	next := map[string][]string{}
	for _, ch := range b.s.Replication {
		next[ch.From] = append(next[ch.From], ch.To)
	}
	for _, r := range spec.Rings(next) {
		if i := slices.Index(r, cluster); i >= 0 {
			return len(r), i + 1
		}
	}
	return 0, 0
}

// semiSync says whether a node acts as a semi-sync primary (waits for an
// acknowledgement) and replica (sends them), and with which timeout.
func (b *builder) semiSync(c spec.Cluster, name string) (master, slave bool, timeout string) {
	if c.Kind == spec.KindPrimary && c.Mode == spec.ModeSemiSync {
		return true, true, c.AckTimeout // every node: any may be promoted
	}
	for _, ch := range b.s.Replication {
		if ch.Mode != spec.ModeSemiSync {
			continue
		}
		if ch.From == c.Name {
			master, timeout = true, ch.AckTimeout
		}
		if ch.To == c.Name && name == ch.To+"1" {
			slave = true
		}
	}
	return master, slave, timeout
}

// loadBalancers checks each load balancer's instances and places a pair's
// keepalived (its configuration files are rendered by package lb).
func (b *builder) loadBalancers() error {
	for i := range b.p.LoadBalancers {
		lb := &b.p.LoadBalancers[i]
		for j := range lb.Instances {
			in := &lb.Instances[j]
			if len(in.AdminSocket) > maxSocketPath {
				return hderr.User("--home: the socket path %s is longer than a unix socket allows; use a shorter --home", in.AdminSocket)
			}
			if lb.VirtualIP {
				var err error
				if in.Keepalived, err = b.keepalived(i, lb, j); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// keepalived is the VRRP daemon of the j-th host of load balancer i's
// pair: its files, the interface and network the virtual IP goes on.
func (b *builder) keepalived(i int, lb *LB, j int) (*Keepalived, error) {
	in := lb.Instances[j]
	k := &Keepalived{ConfigFile: filepath.Join(in.Dir, "keepalived.conf"), Check: filepath.Join(in.Dir, "proxy-up"),
		PidFile: filepath.Join(in.Dir, "keepalived.pid"), MainPidFile: filepath.Join(in.Dir, "keepalived-main.pid"),
		VRRPPidFile: filepath.Join(in.Dir, "keepalived-vrrp.pid")}
	k.Interface = "eth0" // a host's application NIC
	prefix, err := netip.ParsePrefix(b.p.Network)
	if r, remote := b.f.Remote[in.Host]; remote {
		// The machine's own NIC and network, as preflight found them; it
		// refuses a host whose private address is on none of its
		// interfaces, or a virtual IP outside that network, together with
		// every other host's problems (a plan is built from what the hosts
		// said, reached or not, before they are judged).
		k.Interface, prefix, err = r.Interface, r.Network, nil
	}
	if err != nil {
		return nil, err
	}
	vip, err := netip.ParseAddr(lb.Address)
	if err != nil {
		return nil, hderr.User("load_balancers[%d]: the virtual IP %q is not an IP address", i, lb.Address)
	}
	bits := vip.BitLen()
	if prefix.IsValid() {
		bits = prefix.Bits()
	}
	k.VIP = netip.PrefixFrom(vip, bits).String()
	return k, nil
}

// arbitrator places garbd: it joins the nodes' group (wsrep_cluster_name)
// from its own host, in its region's segment (a region of its own gets the
// next one), with the cluster's failure detection.
func (b *builder) arbitrator(c spec.Cluster, peers []string) *Arbitrator {
	h := b.hostByName(c.ArbitratorHost())
	dir := filepath.Join(b.hostDir(h.Name), "arbitrator", h.Name)
	seg := -1
	if c.Segmented() {
		seg = len(c.Regions)
		for i, r := range c.Regions {
			if r == h.Region {
				seg = i
			}
		}
	}
	opts := fmt.Sprintf("gmcast.listen_addr=tcp://%s:%d", h.clusterAddress(), GaleraPort)
	if seg >= 0 {
		opts += fmt.Sprintf(";gmcast.segment=%d", seg)
	}
	if d := detection(c.FailureDetection); d != "" {
		opts += ";" + d
	}
	a := &Arbitrator{Name: h.Name, Group: b.p.Lab + "-" + c.Name, Region: h.Region, Netns: h.Netns, Address: h.clusterAddress(),
		PidFile: filepath.Join(dir, "garbd.pid"), LogFile: filepath.Join(dir, "garbd.log")}
	a.Argv = []string{"garbd", "--name", h.Name, "--group", a.Group, "--address", "gcomm://" + strings.Join(peers, ","),
		"--options", opts}
	return a
}

// segment is a Galera node's gmcast.segment: the index of its region among
// the cluster's regions, so write sets cross a WAN link once per segment
// and joiners pick a donor in their own region; -1 for a one-region cluster
// or one whose segments are off.
func segment(c spec.Cluster, j int) int {
	r := c.NodeRegion(j)
	for i, x := range c.Regions {
		if x == r && c.Segmented() {
			return i
		}
	}
	return -1
}

func (b *builder) node(ci, j int, c spec.Cluster, peers []string, dbNodes int) (Node, error) {
	name := c.NodeHost(j)
	h := b.hostByName(name)
	dir := filepath.Join(b.hostDir(name), "nodes", name)
	// The members of a Galera cluster share one server_id (MariaDB's advice
	// for wsrep_gtid_mode): a write set then has the same GTID on every
	// member, so a replica can move between them by GTID. Every other
	// server has its own.
	serverID := 100*(ci+1) + j
	if c.Kind == spec.KindGalera {
		serverID = 100 * (ci + 1)
	}
	n := Node{Name: name, Cluster: c.Name, Kind: c.Kind, Role: role(c.Kind, j), Region: c.NodeRegion(j), Host: name,
		Netns: h.Netns, Address: h.Address, ClusterAddress: h.clusterAddress(), Port: MySQLPort, ServerID: serverID, Profile: c.Profile, ProfileNote: spec.ProfileNote(c.Profile, c.Config),
		Dir: dir, DataDir: filepath.Join(dir, "data"), Socket: filepath.Join(dir, "mysqld.sock"),
		PidFile: filepath.Join(dir, "mysqld.pid"), LogFile: filepath.Join(dir, "error.log"),
		ConfigFile: filepath.Join(dir, "my.cnf"), AgentPort: AgentPort, DrainFile: filepath.Join(dir, "drain"), CheckSecret: b.p.Secrets.Check}
	if c.Kind == spec.KindPrimary {
		n.DeposedFile = filepath.Join(dir, "deposed")
	}
	if b.p.Mode == ModeSSH { // the agent reads it on the node's host
		n.CheckSecret = filepath.Join(b.hostDir(name), "secrets", "check.password")
	}
	b.storage(ci, c, &n)
	if n.TmpDir == "" { // a server starting removes every #sql file in its tmpdir: a node's is its own
		n.TmpDir = filepath.Join(dir, "tmp")
	}
	if len(n.Socket) > maxSocketPath {
		return n, hderr.User("--home: the socket path %s is %d bytes, longer than the %d a unix socket allows; use a shorter --home",
			n.Socket, len(n.Socket), maxSocketPath)
	}
	if c.Kind == spec.KindGalera {
		n.AvailableWhenDonor = c.AvailableWhenDonor
		n.GaleraPort = GaleraPort
		n.UUID = stableUUID(b.p.Lab + "/" + name)
		n.ProviderOptions = mariadb.ProviderOptions(n.ClusterAddress, GaleraPort, ISTPort, gcache, detection(c.FailureDetection), segment(c, j))
		if key := spec.ProviderOptionsKey(c.Config); key != "" { // the spec's merged into hadrill's (validated)
			opts, _ := spec.ParseProviderOptions(c.Config[key])
			n.ProviderOptions = spec.MergeProviderOptions(n.ProviderOptions, opts)
		}
	}
	cfg := mariadb.ServerConfig{Lab: b.p.Lab, Name: name, Cluster: c.Name, ClusterName: b.p.Lab + "-" + c.Name,
		Kind: string(c.Kind), Profile: c.Profile, DataDir: n.DataDir, Socket: n.Socket, PidFile: n.PidFile, SSTLogDir: filepath.Join(n.Dir, "sst-logs"),
		LogFile: n.LogFile, RedoDir: n.RedoDir, BinlogDir: n.BinlogDir, TmpDir: n.TmpDir, Address: n.Address, ClusterAddress: n.ClusterAddress, Port: n.Port, GaleraPort: GaleraPort, ISTPort: ISTPort,
		SSTPort: SSTPort, ServerID: n.ServerID, BufferPool: b.bufferPool(c, name, dbNodes), RedoLog: RedoLog,
		GCache: gcache, GaleraLib: b.f.GaleraLib, Peers: strings.Join(peers, ","), ProviderOptions: n.ProviderOptions,
		Overrides: overrides(c.Config, c.Kind == spec.KindGalera), GTIDDomain: ci + 1, WsrepGTIDDomain: ci + 1, NoBinlog: !c.Binlog()}
	if c.Kind == spec.KindGalera { // a member's own unreplicated writes get a domain of their own
		cfg.GTIDDomain = 100*(ci+1) + j
	}
	n.GTIDDomain = cfg.GTIDDomain
	cfg.RingSize, cfg.RingPosition = b.ring(c.Name)
	var timeout string
	cfg.SemiSyncMaster, cfg.SemiSyncSlave, timeout = b.semiSync(c, name)
	if d, err := time.ParseDuration(timeout); err == nil {
		cfg.AckTimeoutMs = d.Milliseconds()
	}
	if b.f.User == "root" || b.p.Mode == ModeSSH {
		cfg.User = "root"
	}
	text, err := mariadb.RenderServer(cfg)
	if err != nil {
		return n, err
	}
	n.Config = text
	return n, nil
}

func role(kind spec.Kind, j int) Role {
	switch {
	case kind == spec.KindGalera:
		return RoleGalera
	case kind == spec.KindStandalone:
		return RoleStandalone
	case j == 1:
		return RolePrimary
	}
	return RoleReplica
}

// bufferPool is half of the node's memory share, in 128M steps: the spec's
// memory, else its host's machine's memory, else this machine's memory
// divided among the lab's database nodes.
func (b *builder) bufferPool(c spec.Cluster, node string, dbNodes int) string {
	if r, ok := b.f.Remote[node]; ok { // a machine of its own
		return bufferPool(c, r.MemBytes, 1, nil)
	}
	return bufferPool(c, b.f.MemBytes, dbNodes, b.hostByName(node).Machine)
}

func bufferPool(c spec.Cluster, machine int64, dbNodes int, host *Machine) string {
	share := machine / int64(max(dbNodes, 1))
	switch {
	case c.Memory != "":
		share, _ = spec.ParseSize(c.Memory)
	case host != nil:
		share = host.MemoryBytes
	}
	pool := min(max(share/2/poolChunk*poolChunk, minPool), maxPool)
	return fmt.Sprintf("%dM", pool>>20)
}

func overrides(cfg map[string]string, galera bool) []string {
	keys := make([]string, 0, len(cfg))
	merged := ""
	if galera { // a Galera node's provider options are merged into its own line
		merged = spec.ProviderOptionsKey(cfg)
	}
	for k := range cfg {
		if k != merged {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		if cfg[k] == "" {
			out = append(out, k)
		} else {
			out = append(out, fmt.Sprintf("%-30s = %s", k, cfg[k]))
		}
	}
	return out
}

// detection is the provider options of a cluster's failure_detection
// ("" for stock: Galera's own).
func detection(level string) string {
	switch level {
	case spec.DetectionFast:
		return mariadb.FastDetection
	case spec.DetectionAggressive:
		return mariadb.AggressiveDetection
	case spec.DetectionWAN:
		return mariadb.WANDetection
	}
	return ""
}
