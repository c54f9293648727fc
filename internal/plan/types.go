// Package plan resolves a Spec into the fully specified lab: every host,
// address, port, namespace, path and rendered config. Build is pure.
package plan

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/netip"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/spec"
	"github.com/hadrill/hadrill/internal/supervise"
)

// Modes: of the local provider, and remote hosts.
const (
	ModeNetns    = "netns"    // one network namespace per host on a lab bridge (root)
	ModeRootless = "rootless" // distinct 127.x addresses on lo, no namespaces
	ModeSSH      = "ssh"      // each host a machine of its own, reached over SSH
)

// Facts are the few things about the machine a plan depends on.
type Facts struct {
	Root      bool   // running as root: namespaces available
	User      string // OS user name (mariadbd runs as this user)
	MemBytes  int64  // machine memory, for buffer pool sizing
	CPUs      int    // cores of this machine, to warn when machines promise more
	GaleraLib string // path of libgalera_smm.so
	// Cgroups is where hadrill may make cgroups, per v1 controller (cpu,
	// cpuacct, memory): the mount point joined with the cgroup hadrill runs
	// in. Empty: no cgroup v1, so hosts are neither measured nor limited.
	Cgroups map[string]string
	// Remote, when set, places every host on a machine of its own (the
	// inventory's): the plan is then of ModeSSH.
	Remote map[string]Remote
	// VirtualIPs are the addresses the load balancer pairs on remote hosts
	// share (by load balancer name; the inventory's).
	VirtualIPs map[string]string
}

// Remote is a host's machine: the address the lab's traffic uses (its
// private address), the interface holding it and that network, hadrill's
// directory there, and its memory; with a cluster network, its address
// there (the inventory's cluster_address) and the interface holding it.
type Remote struct {
	Address          string
	Interface        string
	Network          netip.Prefix
	Dir              string
	MemBytes         int64
	ClusterAddress   string
	ClusterInterface string
}

type Plan struct {
	Lab     string `json:"lab"`
	Dir     string `json:"dir"`
	Mode    string `json:"mode"`
	Network string `json:"network"`
	Netns   string `json:"netns,omitempty"` // the lab's switch namespace (holds the bridge)
	Bridge  string `json:"bridge,omitempty"`
	// The cluster network (a second NIC on database hosts and arbitrators).
	ClusterNetwork string    `json:"cluster_network,omitempty"`
	ClusterBridge  string    `json:"cluster_bridge,omitempty"`
	Hosts          []Host    `json:"hosts"`
	Clusters       []Cluster `json:"clusters"`
	Nodes          []Node    `json:"nodes"`
	Channels       []Channel `json:"channels,omitempty"`
	LoadBalancers  []LB      `json:"load_balancers"`
	Client         Client    `json:"client"`
	Secrets        Secrets   `json:"secrets"`
	FaultLog       string    `json:"fault_log"`     // faults and drill steps, one JSON record a line
	WAN            *WAN      `json:"wan,omitempty"` // root labs with links between regions
	Keeper         Daemon    `json:"keeper"`        // the lab's keeper (hadrill keeper)
	Backups        string    `json:"backups"`       // backups/<id>/ (prepared datadir, backup.json)
	Archive        string    `json:"archive"`       // archive/<node>/: each node's archived binary logs
	// Cgroups is the lab's cgroup directory per controller; each host's is
	// <dir>/<host> (root labs on a machine with cgroup v1).
	Cgroups map[string]string `json:"cgroups,omitempty"`
	// Disks are the lab's emulated disks (nil: nodes use the lab's own file system).
	Disks *Disks `json:"disks,omitempty"`
	// Warnings are what makes every result of this lab doubtful (machines
	// promised more CPUs than exist); each run carries them.
	Warnings []string   `json:"warnings,omitempty"`
	Spec     *spec.Spec `json:"spec"`
	// Monitoring is the lab's exporters (spec monitoring: true).
	Monitoring []Exporter `json:"monitoring,omitempty"`
}

// Daemon is where a supervised process runs and how it is recognised: its
// working directory (inside the lab), its log, its pid file, and a marker
// only its command line holds (a path of its own).
type Daemon struct {
	Dir     string `json:"dir"`
	LogFile string `json:"log_file"`
	PidFile string `json:"pid_file"`
	Marker  string `json:"marker"`
}

// Named is the daemon these files are a daemon's, with its name and
// command: what a host runs.
func (d Daemon) Named(name string, argv []string) supervise.Daemon {
	return supervise.Daemon{Name: name, Argv: argv, Dir: d.Dir, LogFile: d.LogFile, PidFile: d.PidFile, Marker: d.Marker}
}

// WAN is a lab's emulated links between regions and the files of the netem
// daemon that emulates them.
type WAN struct {
	Links     []spec.Link `json:"links"`      // as the spec sets them (heal returns to these)
	Config    string      `json:"config"`     // the links as they are now, faults included, and the queue rules
	ReadyFile string      `json:"ready_file"` // the daemon writes its pid here once every queue is bound
	PidFile   string      `json:"pid_file"`
	LogFile   string      `json:"log_file"`
	Dir       string      `json:"dir"`      // the daemon's working directory
	Measured  string      `json:"measured"` // the links' last measured round trips
	// Chain is the mangle-table chain that queues packets to the daemon on
	// each host: HDNETEM in a namespace, HDNETEM-<lab> on a remote machine
	// (whose tables outlive the lab and may hold another lab's).
	Chain string `json:"chain,omitempty"`
	// Remote: on remote hosts each host receiving from another region runs
	// a daemon of its own (its files there, by host); the files above
	// are this computer's (the links as they are now, the measurements).
	Remote map[string]WANDaemon `json:"remote,omitempty"`
	// Base (remote hosts) is each link's round trip between the machines
	// as measured before it was emulated.
	Base string `json:"base,omitempty"`
	// QueueBase is the netfilter queue of the first link (each link has
	// the next): 0 in a lab's own namespaces; on remote machines, whose
	// queue numbers every program and lab there shares, one of the lab's
	// own (QueueBaseOf), which preflight checks is free.
	QueueBase uint16 `json:"queue_base,omitempty"`
}

// QueueBaseOf is the first netfilter queue of a lab's links on remote
// machines: a number from 1000 to 60999 drawn from the lab's name (two
// labs on one machine then rarely want the same queues, and preflight
// refuses a queue that is bound), so another lab's or program's queues
// there are left alone.
func QueueBaseOf(lab string) uint16 {
	h := fnv.New32a()
	h.Write([]byte(lab))
	return uint16(1000 + h.Sum32()%60000)
}

// Queues are the netfilter queues the netem daemon binds on a host of
// region: one per link of the region, then its corrupting one (after all
// the links' queues).
func (w *WAN) Queues(region string) []uint16 {
	var out, corrupting []uint16
	if w == nil {
		return out
	}
	n := uint16(0)
	for _, l := range w.Links {
		if len(l.Between) == 2 { // a link, as netem.FromSpec reads them
			n++
		}
	}
	i := uint16(0)
	for _, l := range w.Links {
		if len(l.Between) != 2 {
			continue
		}
		if slices.Contains(l.Between, region) {
			out = append(out, w.QueueBase+i)
			corrupting = append(corrupting, w.QueueBase+n+i)
		}
		i++
	}
	return append(out, corrupting...)
}

// WANDaemon is the netem daemon of one remote host: its directory, log,
// pid file and marker (its config file, holding that host's rules), and
// the file it writes its pid to once its queues are bound.
type WANDaemon struct {
	Daemon
	Config    string `json:"config"`
	ReadyFile string `json:"ready_file"`
}

// Host is one machine of the lab: a network namespace, or an address on lo.
type Host struct {
	Name    string `json:"name"`
	Role    string `json:"role"` // db | lb | client
	Region  string `json:"region"`
	Netns   string `json:"netns,omitempty"`
	Address string `json:"address"`
	Veth    string `json:"veth,omitempty"` // the bridge-side end of the host's link
	// FaultDomain is what the host fails together with (its own name
	// unless the spec groups hosts).
	FaultDomain string `json:"fault_domain,omitempty"`
	// Machine is the host's size; nil: it shares this machine unlimited.
	Machine *Machine `json:"machine,omitempty"`
	// ClusterAddress is its address on the cluster network ("" without one).
	ClusterAddress string `json:"cluster_address,omitempty"`
	// NICs are its network interfaces (root labs): eth0, and eth1 on the
	// cluster network.
	NICs []NIC `json:"nics,omitempty"`
}

// Cluster is a resolved cluster.
type Cluster struct {
	Name      string    `json:"name"`
	Kind      spec.Kind `json:"kind"`
	StateUUID string    `json:"state_uuid,omitempty"` // Galera group state UUID the nodes are seeded with
	Nodes     []string  `json:"nodes"`
	// Primary clusters: the replication mode and the node that starts as primary.
	Mode    spec.ReplMode `json:"mode,omitempty"`
	Primary string        `json:"primary,omitempty"`
	// AutoFailover: the keeper promotes a replica when the primary dies,
	// leaving behind at most FailoverMaxLag of its writes.
	AutoFailover   bool          `json:"auto_failover,omitempty"`
	FailoverMaxLag time.Duration `json:"failover_max_lag,omitempty"`
	// FailoverAfter: how long a running primary must be out of reach first.
	FailoverAfter time.Duration `json:"failover_after,omitempty"`
	// GTIDDomain is the domain id of the cluster's replicated transactions.
	GTIDDomain int `json:"gtid_domain"`
	// Arbitrator is the cluster's garbd, if it has one.
	Arbitrator *Arbitrator `json:"arbitrator,omitempty"`
	// NoBinlog: the nodes keep no binary log (spec binary_log: false).
	NoBinlog bool `json:"no_binlog,omitempty"`
}

// Arbitrator is garbd on a host of its own: a voting member without data.
type Arbitrator struct {
	Name    string   `json:"name"`  // = its host
	Group   string   `json:"group"` // the cluster's wsrep_cluster_name
	Region  string   `json:"region"`
	Netns   string   `json:"netns,omitempty"`
	Address string   `json:"address"`
	PidFile string   `json:"pid_file"`
	LogFile string   `json:"log_file"`
	Argv    []string `json:"argv"`
	Garbd   Daemon   `json:"garbd"`
}

// Members is how many members a whole Galera cluster has (nodes + arbitrator).
func (c Cluster) Members() int {
	if c.Arbitrator != nil {
		return len(c.Nodes) + 1
	}
	return len(c.Nodes)
}

// Channel is asynchronous (or semi-sync) replication from one cluster into
// another: the receiver applies what one node of the source cluster sends.
type Channel struct {
	Name     string        `json:"name"` // the replication connection's name on the receiver
	From     string        `json:"from"`
	To       string        `json:"to"`
	Mode     spec.ReplMode `json:"mode"`
	Receiver string        `json:"receiver"` // the node of the target cluster that applies the stream
	Source   string        `json:"source"`   // the node of the source cluster it starts from
}

// Node is one database server.
type Node struct {
	Name    string    `json:"name"`
	Cluster string    `json:"cluster"`
	Kind    spec.Kind `json:"kind"`
	Role    Role      `json:"role"`
	Region  string    `json:"region"`
	Host    string    `json:"host"`
	Netns   string    `json:"netns,omitempty"`
	Address string    `json:"address"`
	// ClusterAddress is where its peers reach it for Galera, IST/SST and
	// replication: the cluster network's address, else Address.
	ClusterAddress string `json:"cluster_address"`
	Port           int    `json:"port"`
	GaleraPort     int    `json:"galera_port,omitempty"`
	ServerID       int    `json:"server_id"`
	GTIDDomain     int    `json:"gtid_domain"`
	UUID           string `json:"uuid,omitempty"` // Galera node UUID used for the seeded primary view
	// ProviderOptions is the node's wsrep_provider_options as in its my.cnf;
	// UserProviderOptions: the spec sets them itself (hadrill then adds none).
	ProviderOptions     string `json:"provider_options,omitempty"`
	UserProviderOptions bool   `json:"user_provider_options,omitempty"`
	Profile             string `json:"profile"`
	// ProfileNote: the settings the profile stands for that the spec's
	// config changes ("innodb_flush_log_at_trx_commit=2"), so the profile
	// is never shown by a name whose promise no longer holds.
	ProfileNote string `json:"profile_note,omitempty"`
	Dir         string `json:"dir"`
	DataDir     string `json:"datadir"`
	Socket      string `json:"socket"`
	PidFile     string `json:"pid_file"`
	LogFile     string `json:"log_file"`
	ConfigFile  string `json:"config_file"`
	Config      string `json:"config"`
	// Volumes hold its files on emulated disks; RedoDir and BinlogDir are
	// where its redo log and binary log go when not in the datadir (""),
	// TmpDir where its temporary files go: its own (a server starting
	// removes every #sql file in its tmpdir), on a volume or in its
	// directory ("": a lab made before, the machine's).
	Volumes []Volume `json:"volumes,omitempty"`
	// Asked are the spec's volumes of a node on a remote host, which has
	// its own disk instead: its files are there, and the disk check
	// measures that disk against what they ask (disk.Check).
	Asked     []Volume `json:"asked_volumes,omitempty"`
	RedoDir   string   `json:"redo_dir,omitempty"`
	BinlogDir string   `json:"binlog_dir,omitempty"`
	TmpDir    string   `json:"tmp_dir,omitempty"`
	// Server is the node's mariadbd as a daemon.
	Server Daemon `json:"server"`
	// The node's health agent (hadrill agent) and its drain switch.
	AgentPort int    `json:"agent_port"`
	Agent     Daemon `json:"agent"`
	DrainFile string `json:"drain_file"`
	// DeposedFile (a primary cluster's nodes): while it exists on the
	// node's host, its agent refuses it writes (/primary), whatever its
	// read_only says: the keeper made another node the primary. A former
	// primary cut off from everyone cannot be made read-only until its
	// commits in progress end; this takes it out of the load balancer's
	// writes at once, before it is reachable again.
	DeposedFile string `json:"deposed_file,omitempty"`
	// AvailableWhenDonor: its agent admits it while Donor/Desynced.
	AvailableWhenDonor bool `json:"available_when_donor,omitempty"`
	// CheckSecret is the health check user's password file on the node's
	// host (the lab's secrets/check.password on this computer).
	CheckSecret string `json:"check_secret"`
}

// ProfileLabel is the node's profile as shown: its name, and what the
// config changes of what that name stands for.
func (n *Node) ProfileLabel() string {
	if n.ProfileNote == "" {
		return n.Profile
	}
	return n.Profile + " (" + n.ProfileNote + ")"
}

// LB is a load balancer: a proxy on its own host in front of one cluster.
type LB struct {
	Name    string      `json:"name"`
	Cluster string      `json:"cluster"`
	Mode    spec.LBMode `json:"mode"`
	// Kind is what it balances with (a lab recorded before it had the
	// field: haproxy).
	Kind spec.LBKind `json:"kind,omitempty"`
	// Checks is how it checks its servers (a lab recorded before it had
	// the field: fast).
	Checks   spec.LBChecks `json:"checks,omitempty"`
	Address  string        `json:"address"`
	Port     int           `json:"port"`                // writes (and everything in single-writer mode)
	ReadPort int           `json:"read_port,omitempty"` // reads, balanced mode only
	// Instances are the hosts the load balancer runs on: one, or a pair
	// sharing the virtual IP Address (VirtualIP).
	Instances []LBInstance `json:"instances"`
	VirtualIP bool         `json:"virtual_ip,omitempty"`
}

// LBHosts are the hosts the plan's load balancers run on.
func (p *Plan) LBHosts() []string {
	var out []string
	for _, b := range p.LoadBalancers {
		for _, in := range b.Instances {
			out = append(out, in.Host)
		}
	}
	return out
}

// LBOn is the load balancer whose instance runs on host (false: none).
func (p *Plan) LBOn(host string) (*LB, bool) {
	for i := range p.LoadBalancers {
		b := &p.LoadBalancers[i]
		for _, in := range b.Instances {
			if in.Host == host {
				return b, true
			}
		}
	}
	return nil, false
}

// UnmarshalJSON reads a stored load balancer; one stored before pairs
// kept its one host in its own fields, which become its instance.
func (l *LB) UnmarshalJSON(b []byte) error {
	type plain LB
	var v struct {
		plain
		Host        string `json:"host"`
		Netns       string `json:"netns"`
		Dir         string `json:"dir"`
		ConfigFile  string `json:"config_file"`
		PidFile     string `json:"pid_file"`
		LogFile     string `json:"log_file"`
		AdminSocket string `json:"admin_socket"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	if len(v.Instances) == 0 && v.Host != "" {
		v.Instances = []LBInstance{{Host: v.Host, Netns: v.Netns, Address: v.Address, Dir: v.Dir, ConfigFile: v.ConfigFile,
			PidFile: v.PidFile, LogFile: v.LogFile, AdminSocket: v.AdminSocket}}
	}
	*l = LB(v.plain)
	return nil
}

// LBInstance is one host of a load balancer: its proxy, and in a pair
// its keepalived.
type LBInstance struct {
	Host        string      `json:"host"`
	Netns       string      `json:"netns,omitempty"`
	Address     string      `json:"address"` // the host's own address
	Dir         string      `json:"dir"`
	ConfigFile  string      `json:"config_file"`
	PidFile     string      `json:"pid_file"`
	LogFile     string      `json:"log_file"`
	AdminSocket string      `json:"admin_socket"`
	Proxy       Daemon      `json:"proxy"`
	Keepalived  *Keepalived `json:"keepalived,omitempty"`
}

// Keepalived is a pair host's VRRP daemon: its config, the script it runs
// to see whether the host's proxy answers, its pid files.
type Keepalived struct {
	// Interface carries the virtual IP (VIP, with its prefix length).
	Interface   string `json:"interface,omitempty"`
	VIP         string `json:"vip,omitempty"`
	ConfigFile  string `json:"config_file"`
	Check       string `json:"check"`         // the script (written at start: it names the hadrill binary)
	PidFile     string `json:"pid_file"`      // the supervisor's
	MainPidFile string `json:"main_pid_file"` // keepalived's own (-p), and its VRRP process's (-r)
	VRRPPidFile string `json:"vrrp_pid_file"`
	Daemon      Daemon `json:"daemon"`
}

// Client is the host load generators run on.
type Client struct {
	Host         string `json:"host"`
	Netns        string `json:"netns,omitempty"`
	Address      string `json:"address"`
	DefaultsFile string `json:"defaults_file"`
}

// Secrets are the files holding generated credentials (0600, in a 0700 dir).
type Secrets struct {
	Dir    string `json:"dir"`
	App    string `json:"app"`    // application user's password
	Check  string `json:"check"`  // health-check user's password
	Repl   string `json:"repl"`   // replication user's password
	Client string `json:"client"` // client defaults file for the application user
}

// Users created in every lab.
const (
	AppUser   = "app"
	CheckUser = "hdcheck"
	ReplUser  = "repl"
)

// Role is what a node does in its cluster.
type Role string

// Roles. A primary cluster's nodes start as primary (the first) and
// replicas; promote changes which is which (status reads it from the server).
const (
	RoleGalera     Role = "galera"
	RoleStandalone Role = "standalone"
	RolePrimary    Role = "primary"
	RoleReplica    Role = "replica"
	// RoleFenced: a primary cluster's node kept read-only and outside
	// replication because it holds transactions the primary never received.
	RoleFenced Role = "fenced"
)

// BuiltFrom reports whether the plan was built from s (a lab started again
// with a spec must be the same topology).
func (p *Plan) BuiltFrom(s *spec.Spec) bool { return reflect.DeepEqual(p.Spec, s) }

// CheckNodes names every unknown node at once.
func (p *Plan) CheckNodes(names []string) error {
	var problems []string
	for _, n := range names {
		if _, ok := p.Node(n); !ok {
			problems = append(problems, fmt.Sprintf("NODE: unknown node %q in lab %s (nodes: %v)", n, p.Lab, p.NodeNames()))
		}
	}
	return hderr.Users(problems)
}

// LBAlias names a lab's first load balancer wherever a target is asked for.
const LBAlias = "lb"

// NodesAlias names, as a sysbench target, the writable nodes of the lab's
// first Galera cluster as one host list: sysbench spreads its connections
// over them itself (document 000's "sysbench built-in load balancer").
const NodesAlias = "nodes"

// Writers are the nodes NodesAlias names: the first Galera cluster's.
func (p *Plan) Writers() ([]*Node, error) {
	var out []*Node
	for i := range p.Nodes {
		n := &p.Nodes[i]
		if n.Role == RoleGalera && (len(out) == 0 || out[0].Cluster == n.Cluster) {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("target %q: lab %s has no Galera cluster (only a cluster's nodes all take writes)", NodesAlias, p.Lab)
	}
	return out, nil
}

// LB resolves a load balancer by name; LBAlias is the lab's first.
func (p *Plan) LB(name string) (*LB, bool) {
	for i := range p.LoadBalancers {
		if lb := &p.LoadBalancers[i]; lb.Name == name || (name == LBAlias && i == 0) {
			return lb, true
		}
	}
	return nil, false
}

// FindLB is the load balancer a command's --lb names, or an error naming
// the load balancers there are.
func (p *Plan) FindLB(name string) (*LB, error) {
	if lb, ok := p.LB(name); ok {
		return lb, nil
	}
	var names []string
	for _, lb := range p.LoadBalancers {
		names = append(names, lb.Name)
	}
	return nil, hderr.User("--lb: unknown load balancer %q (load balancers: %v)", name, names)
}

// Target is what a command's target names: a load balancer or a node.
type Target struct {
	LB   *LB
	Node *Node
}

// Address is where an application connects to the target.
func (t Target) Address() (string, int) {
	if t.LB != nil {
		return t.LB.Address, t.LB.Port
	}
	return t.Node.Address, t.Node.Port
}

// Target resolves a target by name: LBAlias, a load balancer, or a node.
// The one resolver every command uses; the error names what is known.
func (p *Plan) Target(name string) (Target, error) {
	if lb, ok := p.LB(name); ok {
		return Target{LB: lb}, nil
	}
	if n, ok := p.Node(name); ok {
		return Target{Node: n}, nil
	}
	known := []string{}
	if len(p.LoadBalancers) > 0 {
		known = append(known, LBAlias)
	}
	for _, lb := range p.LoadBalancers {
		if lb.Name != LBAlias {
			known = append(known, lb.Name)
		}
	}
	return Target{}, fmt.Errorf("unknown target %q in lab %s (known: %s)", name, p.Lab, strings.Join(append(known, p.NodeNames()...), ", "))
}

// poolSize is a buffer pool size line of a my.cnf.
var poolSize = regexp.MustCompile(`(?m)^innodb[-_]buffer[-_]pool[-_]size\s*=\s*(\S+)`)

// BufferPool is the node's InnoDB buffer pool size as its my.cnf sets it
// (the last line wins, as in the server; 0 when it sets none).
func (n *Node) BufferPool() int64 { return n.configSize(poolSize) }

var redoSize = regexp.MustCompile(`(?m)^innodb[-_]log[-_]file[-_]size\s*=\s*(\S+)`)

// RedoLog is the size of the node's redo log, from its config (0 when not set).
func (n *Node) RedoLog() int64 { return n.configSize(redoSize) }

// configSize is the last size re finds in the node's config (0: none).
func (n *Node) configSize(re *regexp.Regexp) int64 {
	m := re.FindAllStringSubmatch(n.Config, -1)
	if len(m) == 0 {
		return 0
	}
	b, _ := spec.ParseSize(m[len(m)-1][1])
	return b
}

// Node returns the node with that name.
func (p *Plan) Node(name string) (*Node, bool) {
	for i := range p.Nodes {
		if p.Nodes[i].Name == name {
			return &p.Nodes[i], true
		}
	}
	return nil, false
}

// NodeNames lists the nodes in plan order.
func (p *Plan) NodeNames() []string {
	var out []string
	for _, n := range p.Nodes {
		out = append(out, n.Name)
	}
	return out
}

// Cluster returns the cluster with that name.
func (p *Plan) Cluster(name string) (*Cluster, bool) {
	for i := range p.Clusters {
		if p.Clusters[i].Name == name {
			return &p.Clusters[i], true
		}
	}
	return nil, false
}

// WithoutFirewall says why what drops or holds a host's packets
// (partitions, crashes, link faults) cannot be done in this lab ("" when it
// can: in a namespace, or on a remote machine, each host has packet filter
// tables of its own; a rootless lab has none).
func (p *Plan) WithoutFirewall() string {
	if p.Mode == ModeNetns || p.Mode == ModeSSH {
		return ""
	}
	return fmt.Sprintf("needs network namespaces (run as root); lab %s runs rootless", p.Lab)
}
