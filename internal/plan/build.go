package plan

import (
	"cmp"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"net/netip"
	"path/filepath"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/spec"
)

// Well-known ports, the same on every host (each host has its own address).
const (
	MySQLPort  = 3306
	ReadPort   = 3307 // a balanced load balancer's read port
	AgentPort  = 9200 // the health agent (clustercheck's port)
	GaleraPort = 4567
	ISTPort    = 4568
	SSTPort    = 4444
)

const maxSocketPath = 107 // sun_path is 108 bytes including the NUL

// CheckLabName validates a lab name given with --name (or taken from a spec).
func CheckLabName(name string) error {
	if !spec.ValidName(name) {
		return hderr.User("--name: %q is not a valid lab name (%s)", name, spec.NameRule)
	}
	return nil
}

// Build resolves a validated, defaulted spec into a plan. It does no I/O.
func Build(s *spec.Spec, lab, home string, f Facts) (*Plan, error) {
	if err := CheckLabName(lab); err != nil {
		return nil, err
	}
	b := &builder{s: s, f: f, p: &Plan{Lab: lab, Dir: filepath.Join(home, "labs", lab), Spec: s}}
	b.network()
	if len(s.Links) > 0 && b.p.Mode == ModeRootless {
		return nil, hderr.User("links: emulating the WAN between regions needs network namespaces (run as root); remove the links to run rootless")
	}
	b.hosts()
	b.remoteWAN()
	b.networks()
	b.cgroups()
	b.machines()
	if err := hderr.Users(b.problems); err != nil {
		return nil, err
	}
	if err := b.nodes(); err != nil {
		return nil, err
	}
	b.monitoring()
	if err := hderr.Users(b.problems); err != nil {
		return nil, err
	}
	Complete(b.p)
	return b.p, nil
}

// Complete resolves what a plan stored by an earlier version may lack (the
// fault log's path, the WAN's files, every daemon's directory, log, pid file
// and marker); Build and loading a stored lab call it. It does no I/O.
func Complete(p *Plan) {
	if p.FaultLog == "" {
		p.FaultLog = filepath.Join(p.Dir, "faults.jsonl")
	}
	if p.WAN == nil && p.Mode == ModeNetns && p.Spec != nil && len(p.Spec.Links) > 0 {
		p.WAN = localWAN(p)
	}
	if p.WAN != nil && p.WAN.Chain == "" { // stored before the chain was named
		p.WAN.Chain = "HDNETEM"
	}
	if p.Backups == "" {
		p.Backups, p.Archive = filepath.Join(p.Dir, "backups"), filepath.Join(p.Dir, "archive")
	}
	if p.Keeper.Marker == "" {
		// the keeper's command line holds --lab-dir DIR; no other daemon's does
		p.Keeper = Daemon{Dir: filepath.Join(p.Dir, "keeper"), LogFile: filepath.Join(p.Dir, "keeper.log"),
			PidFile: filepath.Join(p.Dir, "keeper.pid"), Marker: "--lab-dir " + p.Dir}
	}
	for i := range p.Hosts {
		if h := &p.Hosts[i]; h.FaultDomain == "" { // stored before fault domains: each host its own
			h.FaultDomain = h.Name
		}
		if h := &p.Hosts[i]; len(h.NICs) == 0 && p.Mode == ModeNetns {
			h.NICs = []NIC{{Name: "eth0", Network: NetApplication, Address: h.Address, Veth: h.Veth, Bridge: p.Bridge}}
		}
	}
	for i := range p.Nodes {
		n := &p.Nodes[i]
		if n.ClusterAddress == "" {
			n.ClusterAddress = n.Address
		}
		if n.CheckSecret == "" {
			n.CheckSecret = p.Secrets.Check
		}
		if p.Spec != nil && n.Kind == spec.KindGalera {
			for _, c := range p.Spec.Clusters {
				key := spec.ProviderOptionsKey(c.Config)
				if c.Name != n.Cluster || key == "" {
					continue
				}
				// a lab planned before the spec's provider options were
				// merged into hadrill's: its my.cnf gives the spec's on a
				// line of their own, which replaces hadrill's, and nothing
				// may pass hadrill's on start-up
				opts, _ := spec.ParseProviderOptions(c.Config[key])
				n.UserProviderOptions = spec.MergeProviderOptions(n.ProviderOptions, opts) != n.ProviderOptions
			}
		}
		if n.Server.Marker == "" {
			n.Server = Daemon{Dir: n.Dir, LogFile: filepath.Join(n.Dir, "mariadbd.out"), PidFile: n.PidFile, Marker: n.ConfigFile}
		}
		if n.Agent.Marker == "" {
			n.Agent = Daemon{Dir: filepath.Join(n.Dir, "agent"), LogFile: filepath.Join(n.Dir, "agent.log"),
				PidFile: filepath.Join(n.Dir, "agent.pid"), Marker: n.DrainFile}
		}
	}
	for i := range p.LoadBalancers {
		lb := &p.LoadBalancers[i]
		for j := range lb.Instances {
			in := &lb.Instances[j]
			if in.Proxy.Marker == "" { // labs stored before it was recorded
				in.Proxy = Daemon{Dir: in.Dir, LogFile: in.LogFile, PidFile: in.PidFile, Marker: in.ConfigFile}
			}
			if k := in.Keepalived; k != nil && k.Daemon.Marker == "" {
				k.Daemon = Daemon{Dir: in.Dir, LogFile: filepath.Join(in.Dir, "keepalived.log"), PidFile: k.PidFile, Marker: k.ConfigFile}
			}
		}
	}
	for i := range p.Clusters {
		if a := p.Clusters[i].Arbitrator; a != nil && a.Garbd.Marker == "" {
			a.Garbd = Daemon{Dir: filepath.Dir(a.LogFile), LogFile: a.LogFile, PidFile: a.PidFile, Marker: "--group " + a.Group}
		}
	}
}

type builder struct {
	s        *spec.Spec
	f        Facts
	p        *Plan
	base     netip.Addr // first address of the lab's /24
	used     map[string]string
	problems []string
}

func (b *builder) network() {
	h := hash32(b.p.Lab)
	if b.f.Remote != nil { // each host has an address of its own
		b.p.Mode = ModeSSH
		return
	}
	if b.f.Root {
		b.p.Mode = ModeNetns
		b.p.Netns = "hd-" + b.p.Lab
		b.p.Bridge = "hdbr0"
		if b.s.Network != "" {
			b.base = netip.MustParsePrefix(b.s.Network).Masked().Addr()
		} else { // one of the 512 /24s of 198.18.0.0/15, chosen by the lab name
			idx := h % 512
			b.base = netip.AddrFrom4([4]byte{198, byte(18 + idx/256), byte(idx % 256), 0})
		}
		b.p.Network = netip.PrefixFrom(b.base, 24).String()
		return
	}
	b.p.Mode = ModeRootless
	b.base = netip.AddrFrom4([4]byte{127, byte(100 + h%100), byte(h >> 8), 0})
	b.p.Network = netip.PrefixFrom(b.base, 24).String()
}

// address picks a host address: the spec's, or base + offset. In rootless
// mode a fixed spec address keeps its last octet under the lab's 127.x.y.
func (b *builder) address(path, fixed string, offset int) string {
	if b.p.Mode == ModeSSH {
		return "" // the inventory's (host)
	}
	a := b.base.As4()
	a[3] = byte(offset)
	if fixed != "" {
		ip := netip.MustParseAddr(fixed)
		if b.p.Mode == ModeNetns {
			a = ip.As4()
		} else {
			a[3] = ip.As4()[3]
		}
	}
	s := netip.AddrFrom4(a).String()
	if other, dup := b.used[s]; dup {
		b.problems = append(b.problems, fmt.Sprintf("%s: address %s is already used by %s", path, s, other))
	}
	b.used[s] = path
	return s
}

func (b *builder) host(name, role, region, path, fixed string, offset int) Host {
	h := Host{Name: name, Role: role, Region: region, Address: b.address(path, fixed, offset)}
	if r, ok := b.f.Remote[name]; ok {
		h.Address = r.Address
	}
	if b.p.Mode == ModeSSH && h.Address == "" {
		b.problems = append(b.problems, fmt.Sprintf("%s: host %s is not in the inventory", path, name))
	}
	if b.p.Mode == ModeNetns {
		h.Netns = fmt.Sprintf("hd-%s-%s", b.p.Lab, name)
		h.Veth = fmt.Sprintf("hdv%d", len(b.p.Hosts))
	}
	b.p.Hosts = append(b.p.Hosts, h)
	return h
}

func (b *builder) hosts() {
	b.used = map[string]string{}
	if len(b.s.Clusters) > 9 {
		b.problems = append(b.problems, fmt.Sprintf("clusters: at most 9 clusters in a lab, got %d", len(b.s.Clusters)))
		return
	}
	for ci, c := range b.s.Clusters {
		for j := 1; j <= c.NodeCount(); j++ {
			fixed := ""
			if len(c.Addresses) >= j {
				fixed = c.Addresses[j-1]
			}
			b.host(c.NodeHost(j), "db", c.NodeRegion(j), fmt.Sprintf("clusters[%d].addresses[%d]", ci, j-1), fixed, 10*(ci+1)+j)
			b.domain(c.NodeDomain(j))
		}
		if c.Arbitrator != nil {
			b.host(c.ArbitratorHost(), "arbitrator", c.Arbitrator.Region, fmt.Sprintf("clusters[%d].arbitrator", ci), "", 10*(ci+1))
			b.domain(cmp.Or(c.Arbitrator.FaultDomain, c.ArbitratorHost()))
		}
	}
	for i, lb := range b.s.LoadBalancers {
		b.loadBalancer(i, lb)
	}
	h := b.host(b.s.Client.Name, "client", b.s.Client.Region, "client.address", b.s.Client.Address, 201)
	b.domain(h.Name)
	sec := filepath.Join(b.p.Dir, "secrets")
	b.p.Secrets = Secrets{Dir: sec, App: filepath.Join(sec, "app.password"), Check: filepath.Join(sec, "check.password"),
		Repl: filepath.Join(sec, "repl.password"), Client: filepath.Join(sec, "client.cnf")}
	b.p.Client = Client{Host: h.Name, Netns: h.Netns, Address: h.Address, DefaultsFile: b.p.Secrets.Client}
	if b.p.Mode == ModeSSH { // a copy on the client host, where the client runs
		b.p.Client.DefaultsFile = filepath.Join(b.hostDir(h.Name), "secrets", "client.cnf")
	}
}

// loadBalancer places a load balancer: on a host of its own name, or as a
// pair on <name>1 and <name>2 sharing a virtual IP (the address clients
// use), which needs network namespaces.
func (b *builder) loadBalancer(i int, lb spec.LoadBalancer) {
	path := fmt.Sprintf("load_balancers[%d].address", i)
	dir := filepath.Join(b.hostDir(lb.Name), "lb", lb.Name)
	instance := func(h Host, dir string) LBInstance {
		return LBInstance{Host: h.Name, Netns: h.Netns, Address: h.Address, Dir: dir, ConfigFile: filepath.Join(dir, "proxy.cfg"),
			PidFile: filepath.Join(dir, "proxy.pid"), LogFile: filepath.Join(dir, "proxy.log"), AdminSocket: filepath.Join(dir, "admin.sock")}
	}
	l := LB{Name: lb.Name, Cluster: lb.Cluster, Mode: lb.Mode, Kind: lb.Kind, Checks: lb.Checks, Port: MySQLPort}
	if lb.Kind == spec.LBKindIPTables && b.p.Mode == ModeRootless {
		b.problems = append(b.problems, fmt.Sprintf("load_balancers[%d].kind: iptables rewrites a host's own firewall, which needs network namespaces (run as root) or SSH hosts; use haproxy to run rootless", i))
	}
	if lb.Mode == spec.LBBalanced {
		l.ReadPort = ReadPort
	}
	if !lb.Pair() {
		h := b.host(lb.Name, "lb", lb.Region, path, lb.Address, 101+i)
		b.domain(lb.HostDomain(1))
		l.Address, l.Instances = h.Address, []LBInstance{instance(h, dir)}
	} else {
		switch b.p.Mode {
		case ModeSSH:
			if b.f.VirtualIPs[lb.Name] == "" {
				b.problems = append(b.problems, fmt.Sprintf("load_balancers[%d]: pair %s has no virtual IP (the inventory's virtual_ips.%s)", i, lb.Name, lb.Name))
			}
		case ModeRootless:
			b.problems = append(b.problems, fmt.Sprintf("load_balancers[%d].replicas: a pair sharing a virtual IP needs network namespaces (run as root); remove replicas to run rootless", i))
		}
		l.Address, l.VirtualIP = cmp.Or(b.f.VirtualIPs[lb.Name], b.address(path, lb.Address, 101+i)), true
		for k := 1; k <= 2; k++ {
			name := lb.PairHost(k)
			h := b.host(name, "lb", lb.Region, fmt.Sprintf("load_balancers[%d] (host %s)", i, name), "", 150+10*i+k)
			b.domain(lb.HostDomain(k))
			l.Instances = append(l.Instances, instance(h, filepath.Join(b.hostDir(name), "lb", lb.Name, name)))
		}
	}
	b.p.LoadBalancers = append(b.p.LoadBalancers, l)
}

// localWAN is the WAN's files on this computer: the links as they are now,
// their last measurements, and the one netem daemon of a lab of
// namespaces.
func localWAN(p *Plan) *WAN {
	return &WAN{Links: p.Spec.Links, Config: filepath.Join(p.Dir, "netem.json"),
		ReadyFile: filepath.Join(p.Dir, "netem.ready"), PidFile: filepath.Join(p.Dir, "netem.pid"),
		LogFile: filepath.Join(p.Dir, "netem.log"), Dir: filepath.Join(p.Dir, "netem"),
		Measured: filepath.Join(p.Dir, "wan.json"), Chain: "HDNETEM"}
}

// remoteWAN places the WAN of a lab on remote hosts: a netem daemon's
// files on every host (one runs where packets arrive from another
// region), the queueing rules in a chain named after the lab.
func (b *builder) remoteWAN() {
	if b.p.Mode != ModeSSH || len(b.s.Links) == 0 {
		return
	}
	w := localWAN(b.p)
	w.Chain, w.Remote, w.Base, w.QueueBase = "HDNETEM-"+b.p.Lab, map[string]WANDaemon{}, filepath.Join(b.p.Dir, "wan-base.json"), QueueBaseOf(b.p.Lab)
	for _, h := range b.p.Hosts {
		dir := filepath.Join(b.hostDir(h.Name), "netem")
		cfg := filepath.Join(dir, "netem.json")
		w.Remote[h.Name] = WANDaemon{Daemon: Daemon{Dir: dir, LogFile: filepath.Join(dir, "netem.log"), PidFile: filepath.Join(dir, "netem.pid"), Marker: cfg},
			Config: cfg, ReadyFile: filepath.Join(dir, "netem.ready")}
	}
	b.p.WAN = w
}

// hostDir is where a host keeps the lab's files: the lab's directory, or
// on a remote host RemoteLabDir.
func (b *builder) hostDir(name string) string {
	if r, ok := b.f.Remote[name]; ok {
		return RemoteLabDir(r.Dir, b.p.Lab)
	}
	return b.p.Dir
}

// RemoteLabDir is where a remote host whose hadrill directory is dir keeps
// a lab's files (and everything of the lab there: down removes it whole).
func RemoteLabDir(dir, lab string) string { return filepath.Join(dir, "labs", lab) }

// domain puts the host placed last in a fault domain.
func (b *builder) domain(d string) { b.p.Hosts[len(b.p.Hosts)-1].FaultDomain = d }

// Domain lists the hosts of a fault domain, in plan order.
func (p *Plan) Domain(name string) []Host {
	var out []Host
	for _, h := range p.Hosts {
		if h.FaultDomain == name {
			out = append(out, h)
		}
	}
	return out
}

func (b *builder) hostByName(name string) Host {
	for _, h := range b.p.Hosts {
		if h.Name == name {
			return h
		}
	}
	return Host{}
}

// hash32 is a stable small hash of a string.
func hash32(s string) uint32 {
	sum := sha1.Sum([]byte(s))
	return binary.BigEndian.Uint32(sum[:4])
}

// stableUUID derives a well-formed, deterministic UUID from a key.
func stableUUID(key string) string {
	s := sha1.Sum([]byte("hadrill:" + key))
	s[6] = s[6]&0x0f | 0x50 // version 5 (name-based, SHA-1)
	s[8] = s[8]&0x3f | 0x80 // RFC 4122 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", s[0:4], s[4:6], s[6:8], s[8:10], s[10:16])
}
