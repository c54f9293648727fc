package preflight

import (
	"cmp"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/plan"
)

// Facts are what the probe found on a host.
type Facts struct {
	UID      int      `json:"uid"`
	Arch     string   `json:"arch"` // uname -m
	Kernel   string   `json:"kernel"`
	OS       string   `json:"os"` // os-release ID and VERSION_ID
	CPUs     int      `json:"cpus"`
	MemBytes int64    `json:"memory_bytes"`
	NoDpkg   bool     `json:"no_dpkg,omitempty"`
	Missing  []string `json:"missing_packages,omitempty"`
	// DirExists: hadrill's directory is there already (else FreeBytes is
	// of its nearest existing parent).
	DirExists bool     `json:"dir_exists"`
	FreeBytes int64    `json:"free_bytes"`
	Listening []string `json:"listening,omitempty"` // address:port of every TCP listener
	// ListenUnknown: the host has no ss to list its listeners.
	ListenUnknown bool     `json:"listen_unknown,omitempty"`
	NFQueue       bool     `json:"nfqueue"`          // the kernel has the netfilter queue (nfnetlink_queue)
	Queues        []uint16 `json:"queues,omitempty"` // the netfilter queues bound now
	// Addrs are the host's IPv4 addresses, each on its interface.
	Addrs []Addr `json:"addresses,omitempty"`
	// Skew is the host's clock minus this computer's, within ±SkewError.
	Skew      time.Duration `json:"skew_ns"`
	SkewError time.Duration `json:"skew_error_ns"`
}

// Addr is an address of a host's interface: "eth0", "10.1.0.11/24".
type Addr struct {
	Interface string       `json:"interface"`
	Prefix    netip.Prefix `json:"prefix"`
}

// AddrOf finds the interface holding address (false: none does).
func (f Facts) AddrOf(address string) (Addr, bool) {
	ip, err := netip.ParseAddr(address)
	if err != nil {
		return Addr{}, false
	}
	for _, a := range f.Addrs {
		if a.Prefix.Addr() == ip {
			return a, true
		}
	}
	return Addr{}, false
}

// ParseFacts reads the probe's output.
func ParseFacts(out string) (Facts, error) {
	var f Facts
	seen := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		key, val, _ := strings.Cut(strings.TrimSpace(line), " ")
		if key == "" {
			continue
		}
		seen[key] = true
		var err error
		switch key {
		case "uid":
			f.UID, err = strconv.Atoi(val)
		case "arch":
			f.Arch = val
		case "kernel":
			f.Kernel = val
		case "os":
			f.OS = val
		case "cpus":
			f.CPUs, err = strconv.Atoi(val)
		case "mem_kb":
			var kb int64
			kb, err = strconv.ParseInt(val, 10, 64)
			f.MemBytes = kb << 10
		case "dpkg":
			f.NoDpkg = true
		case "package":
			name, state, _ := strings.Cut(val, " ")
			if state != "installed" {
				f.Missing = append(f.Missing, name)
			}
		case "dir":
			f.DirExists = val == "exists"
		case "free_kb":
			var kb int64
			kb, err = strconv.ParseInt(val, 10, 64)
			f.FreeBytes = kb << 10
		case "listen":
			if val == "unknown" {
				f.ListenUnknown = true
			} else {
				f.Listening = append(f.Listening, val)
			}
		case "nfqueue":
			f.NFQueue = val == "yes"
		case "queue":
			var q uint64
			q, err = strconv.ParseUint(val, 10, 16)
			f.Queues = append(f.Queues, uint16(q))
		case "addr":
			iface, cidr, _ := strings.Cut(val, " ")
			var pfx netip.Prefix
			if pfx, err = netip.ParsePrefix(cidr); err == nil {
				f.Addrs = append(f.Addrs, Addr{Interface: strings.TrimSuffix(iface, ":"), Prefix: pfx})
			}
		}
		if err != nil {
			return f, fmt.Errorf("probe: %s: %q is not a number", key, val)
		}
	}
	for _, k := range []string{"uid", "arch", "free_kb"} {
		if !seen[k] {
			return f, fmt.Errorf("probe: no %s in its output (is the host's shell POSIX?)", k)
		}
	}
	return f, nil
}

// Need is what a host must have for its part of the lab.
type Need struct {
	Roles    []string `json:"roles"`
	Packages []string `json:"packages"`
	Ports    []int    `json:"ports,omitempty"`
	// MinFreeBytes is the room hadrill's directory needs.
	MinFreeBytes int64 `json:"min_free_bytes"`
	// CPUs and MemBytes are the spec's machine for the host (0: none).
	Machine  string  `json:"machine,omitempty"`
	CPUs     float64 `json:"cpus,omitempty"`
	MemBytes int64   `json:"memory_bytes,omitempty"`
	// Queues: the host's region has WAN links to emulate, so hadrill's
	// netem daemon runs there and binds these netfilter queues, one per
	// link, to read their packets (on every kernel, with or without tc
	// netem).
	Queues []uint16 `json:"queues,omitempty"`
	// VirtualIP: a load balancer pair's host, the address keepalived moves
	// between the pair (the inventory's virtual_ips): it must be in the
	// network of the host's private address.
	VirtualIP string `json:"virtual_ip,omitempty"`
	// ClusterAddress: with a cluster network, the address of the host's
	// NIC there (the inventory's cluster_address): it must be the host's,
	// and ClusterPorts free on it.
	ClusterAddress string `json:"cluster_address,omitempty"`
	ClusterPorts   []int  `json:"cluster_ports,omitempty"`
}

// Room a host's directory needs: a database node's datadir starts at a few
// hundred MB and grows with the load; other hosts keep configs and logs.
const (
	MinFreeDB    = 2 << 30
	MinFreeOther = 256 << 20
)

// Needs says what every host of a plan of remote hosts needs.
func Needs(p *plan.Plan) map[string]Need {
	out := map[string]Need{}
	add := func(host, role string) {
		n := out[host]
		if !slices.Contains(n.Roles, role) {
			n.Roles = append(n.Roles, role)
		}
		out[host] = n
	}
	for _, n := range p.Nodes {
		add(n.Host, RoleDB)
	}
	for _, c := range p.Clusters {
		if c.Arbitrator != nil {
			add(c.Arbitrator.Name, RoleArbitrator)
		}
	}
	vips := map[string]string{} // a pair host's virtual IP (the inventory's)
	for _, lb := range p.LoadBalancers {
		for _, in := range lb.Instances {
			add(in.Host, RoleLB)
			if lb.VirtualIP {
				add(in.Host, RoleLBPair)
				vips[in.Host] = lb.Address
			}
		}
	}
	if p.Client.Host != "" {
		add(p.Client.Host, RoleClient)
	}
	for _, e := range p.Monitoring {
		switch e.Job {
		case plan.JobNode:
			add(e.Host, RoleMonitored)
		case plan.JobMysqld:
			add(e.Host, RoleMonitoredDB)
		}
	}
	ports, clusterPorts := p.Ports(), p.ClusterPorts()
	for _, h := range p.Hosts {
		n := out[h.Name]
		n.Packages = For(n.Roles)
		n.Ports = ports[h.Name]
		n.MinFreeBytes = MinFreeOther
		if slices.Contains(n.Roles, RoleDB) {
			n.MinFreeBytes = MinFreeDB
		}
		if m := h.Machine; m != nil {
			n.Machine, n.CPUs, n.MemBytes = m.Name, m.CPUs, m.MemoryBytes
		}
		n.Queues = p.WAN.Queues(h.Region)
		n.VirtualIP = vips[h.Name]
		if h.ClusterAddress != h.Address {
			n.ClusterAddress, n.ClusterPorts = h.ClusterAddress, clusterPorts[h.Name]
		}
		out[h.Name] = n
	}
	return out
}

// Union is what every host needs for all of several labs placed on the
// same machines one after another: every role, package and port of any,
// the most room any needs, the largest machine any asks for, links if any
// has them, the inventory's virtual IP and cluster address if any uses
// them.
func Union(all ...map[string]Need) map[string]Need {
	out := map[string]Need{}
	for _, needs := range all {
		for host, n := range needs {
			u := out[host]
			for _, r := range n.Roles {
				if !slices.Contains(u.Roles, r) {
					u.Roles = append(u.Roles, r)
				}
			}
			for _, pkg := range n.Packages {
				if !slices.Contains(u.Packages, pkg) {
					u.Packages = append(u.Packages, pkg)
				}
			}
			u.Ports = merged(u.Ports, n.Ports)
			u.ClusterPorts = merged(u.ClusterPorts, n.ClusterPorts)
			u.VirtualIP, u.ClusterAddress = cmp.Or(u.VirtualIP, n.VirtualIP), cmp.Or(u.ClusterAddress, n.ClusterAddress)
			u.MinFreeBytes = max(u.MinFreeBytes, n.MinFreeBytes)
			if n.CPUs > u.CPUs || n.MemBytes > u.MemBytes {
				u.Machine, u.CPUs, u.MemBytes = n.Machine, max(u.CPUs, n.CPUs), max(u.MemBytes, n.MemBytes)
			}
			u.Queues = merged(u.Queues, n.Queues)
			out[host] = u
		}
	}
	return out
}

// merged is a sorted list of what is in a or b, once each.
func merged[T cmp.Ordered](a, b []T) []T {
	for _, v := range b {
		if !slices.Contains(a, v) {
			a = append(a, v)
		}
	}
	slices.Sort(a)
	return a
}

// MaxSkew is how far a host's clock may be from this computer's: the
// keeper compares heartbeats written on one host with clocks of others
// (to 0.5 s), and logs of several hosts are read side by side.
const (
	MaxSkew  = time.Second
	WarnSkew = 250 * time.Millisecond
)

// goarch is the Go architecture of a uname -m.
var goarch = map[string]string{"x86_64": "amd64", "aarch64": "arm64", "arm64": "arm64", "i686": "386", "i386": "386",
	"armv7l": "arm", "ppc64le": "ppc64le", "s390x": "s390x", "riscv64": "riscv64"}

// Judge holds a host's facts against its needs: problems stop the lab
// from being made there, warnings are worth knowing. arch is this
// hadrill's GOARCH; address the host's private address (a listener on
// another address of the host does not take its ports).
func Judge(host, address string, need Need, f Facts, arch string) (problems, warnings []string) {
	bad := func(format string, a ...any) { problems = append(problems, host+": "+fmt.Sprintf(format, a...)) }
	warn := func(format string, a ...any) { warnings = append(warnings, host+": "+fmt.Sprintf(format, a...)) }
	if f.UID != 0 {
		bad("commands run as uid %d, not root: hadrill needs root on its hosts (log in as root, or set sudo: true for a login whose sudo -n works)", f.UID)
	}
	if a := goarch[f.Arch]; a != arch {
		bad("the host is %s, this hadrill is built for %s: it copies itself to each host, so they must match", f.Arch, arch)
	}
	switch {
	case f.NoDpkg:
		bad("no dpkg: hadrill's hosts run Debian (12 is what it is tested on)")
	case len(f.Missing) > 0:
		bad("missing Debian packages for its role (%s): %s (hadrill preflight --install installs them, or apt-get install %s)",
			strings.Join(need.Roles, ", "), strings.Join(f.Missing, ", "), strings.Join(f.Missing, " "))
	}
	if f.OS != "" && f.OS != "debian 12" && !f.NoDpkg {
		warn("runs %s; hadrill is tested on Debian 12 (package names and versions may differ)", f.OS)
	}
	if f.FreeBytes < need.MinFreeBytes {
		bad("%s free for hadrill's directory, %s needed (%s)", bytesString(f.FreeBytes), bytesString(need.MinFreeBytes), strings.Join(need.Roles, ", "))
	}
	if f.ListenUnknown && len(need.Ports) > 0 {
		warn("has no ss (iproute2): its free ports were not checked")
	}
	for _, port := range need.Ports {
		if by := taken(f.Listening, address, port); by != "" {
			bad("port %d is taken (something listens on %s): the lab's daemons listen there", port, by)
		}
	}
	for _, port := range need.ClusterPorts {
		reported := slices.Contains(need.Ports, port) && taken(f.Listening, address, port) != "" // on every address: said above
		if by := taken(f.Listening, need.ClusterAddress, port); by != "" && !(reported && by == taken(f.Listening, address, port)) {
			bad("port %d is taken on its cluster address (something listens on %s): Galera, state transfers and the server listen there", port, by)
		}
	}
	switch skew := abs(f.Skew) - f.SkewError; {
	case skew > MaxSkew:
		bad("its clock is %s off this computer's (at most %s): run chrony or systemd-timesyncd on every host", signed(f.Skew), MaxSkew)
	case skew > WarnSkew:
		warn("its clock is %s off this computer's", signed(f.Skew))
	}
	if _, ok := f.AddrOf(address); !ok && len(f.Addrs) > 0 {
		var have []string
		for _, a := range f.Addrs {
			have = append(have, a.Prefix.Addr().String()+" ("+a.Interface+")")
		}
		bad("its private address %s is none of its own (%s): the lab's daemons listen there (set private_address in the inventory)", address, strings.Join(have, ", "))
	}
	if _, ok := f.AddrOf(need.ClusterAddress); need.ClusterAddress != "" && !ok && len(f.Addrs) > 0 {
		bad("its cluster address %s is none of its own: Galera, state transfers and replication listen there (the inventory's cluster_address: the address of its NIC on the cluster network)", need.ClusterAddress)
	}
	if len(f.Addrs) == 0 && need.VirtualIP != "" {
		bad("its addresses could not be read (no ip command): keepalived puts the virtual IP %s on the interface holding its private address", need.VirtualIP)
	}
	if a, ok := f.AddrOf(address); ok && need.VirtualIP != "" {
		if vip, err := netip.ParseAddr(need.VirtualIP); err == nil && !a.Prefix.Masked().Contains(vip) {
			bad("the virtual IP %s is outside the network of its private address (%s on %s): keepalived moves an address within the pair's own network; "+
				"give an unused address of it in the inventory's virtual_ips", need.VirtualIP, a.Prefix.Masked(), a.Interface)
		}
	}
	if need.CPUs > 0 && float64(f.CPUs) < need.CPUs {
		warn("the spec's machine %s has %g CPUs, the host %d: machines are emulated only on this computer; on real hosts runs report what the host has", need.Machine, need.CPUs, f.CPUs)
	}
	if need.MemBytes > 0 && f.MemBytes < need.MemBytes {
		warn("the spec's machine %s has %s of memory, the host %s", need.Machine, bytesString(need.MemBytes), bytesString(f.MemBytes))
	}
	if len(need.Queues) > 0 && !f.NFQueue {
		bad("its kernel has no netfilter queue (nfnetlink_queue): the WAN links of its region are emulated by hadrill's daemon, which reads their packets from it")
	}
	for _, q := range need.Queues {
		if slices.Contains(f.Queues, q) {
			bad("netfilter queue %d is bound by another program (another lab's WAN emulator?): the lab's WAN emulator reads a link's packets from it", q)
		}
	}
	return problems, warnings
}

// taken says which listener holds port for a daemon binding address:
// one on every address, or on that one.
func taken(listening []string, address string, port int) string {
	for _, l := range listening {
		i := strings.LastIndexByte(l, ':')
		if i < 0 || l[i+1:] != strconv.Itoa(port) {
			continue
		}
		host := strings.Trim(l[:i], "[]")
		if j := strings.IndexByte(host, '%'); j >= 0 {
			host = host[:j] // an interface scope: ::%lo
		}
		ip := net.ParseIP(host)
		if host == "*" || (ip != nil && ip.IsUnspecified()) || (ip != nil && ip.Equal(net.ParseIP(address))) {
			return l
		}
	}
	return ""
}

func abs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

func signed(d time.Duration) string {
	if d < 0 {
		return "-" + (-d).Round(time.Millisecond).String()
	}
	return "+" + d.Round(time.Millisecond).String()
}

func bytesString(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%d MiB", b>>20)
	}
	return fmt.Sprintf("%d KiB", b>>10)
}
