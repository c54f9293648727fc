package lab

import (
	"context"
	"sync"
	"time"

	"github.com/hadrill/hadrill/internal/chaos"
	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/infra/disk"
	"github.com/hadrill/hadrill/internal/infra/machine"
	"github.com/hadrill/hadrill/internal/lb"
	"github.com/hadrill/hadrill/internal/netem"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/replication"
	"github.com/hadrill/hadrill/internal/server"
	"github.com/hadrill/hadrill/internal/spec"
	"github.com/hadrill/hadrill/internal/state"
	"github.com/hadrill/hadrill/internal/supervise"
)

// Status is what `hadrill status --output json` prints. Fields may be
// added, never renamed (other tools rely on them).
type Status struct {
	Name          string     `json:"name"`
	Status        string     `json:"status"`
	Mode          string     `json:"mode"`
	Network       string     `json:"network"`
	Inventory     string     `json:"inventory,omitempty"` // a lab of remote hosts: the inventory it was placed by
	Dir           string     `json:"dir"`
	Nodes         []NodeInfo `json:"nodes"`
	LoadBalancers []LBInfo   `json:"load_balancers"`
	Client        ClientInfo `json:"client"`
	// Links are the emulated WAN links: their current impairment (the
	// spec's, or a fault's) and the last measured round trip.
	Links []LinkInfo `json:"links,omitempty"`
	// Arbitrators are the clusters' garbd processes.
	Arbitrators []ArbitratorInfo `json:"arbitrators,omitempty"`
	// Disks is the lab's disk daemon, when it emulates disks: whether it
	// serves the volumes.
	Disks *DisksInfo `json:"disks,omitempty"`
	// Faults are those injected since the last heal (what may still be in
	// force: `hadrill fault heal` undoes them).
	Faults []fault.Record `json:"faults,omitempty"`
	// Hosts are the measured hosts: machine, CPU and memory in use,
	// memory-limit kills (root labs on a machine with cgroup v1).
	Hosts []HostInfo `json:"hosts,omitempty"`
}

// HostInfo is one host's machine and what its cgroups count.
type HostInfo struct {
	Name        string        `json:"name"`
	Role        string        `json:"role"`
	FaultDomain string        `json:"fault_domain"`
	Machine     *plan.Machine `json:"machine,omitempty"`
	CPUCores    *float64      `json:"cpu_cores,omitempty"` // in use now (`status` measures it over 200 ms; others do not)
	MemoryBytes int64         `json:"memory_bytes"`
	OOMKills    int           `json:"oom_kills"` // processes killed by the memory limit since the host was made
	NICs        []plan.NIC    `json:"nics,omitempty"`
	Volumes     []plan.Volume `json:"volumes,omitempty"` // a node's emulated disks (on a remote host: the spec's, not emulated)
	// DisksMeasured are its volumes as last measured (at up or start; on a
	// remote host, its own disk against each: disk.Measured.OnHost).
	DisksMeasured []disk.Measured `json:"disks_measured,omitempty"`
}

// DisksInfo is the disk daemon that serves a lab's emulated volumes.
type DisksInfo struct {
	State string `json:"state"` // serving | not serving
	// Problem says why it does not serve the volumes, and Fix the
	// command that serves the volumes again.
	Problem string `json:"problem,omitempty"`
	Fix     string `json:"fix,omitempty"`
}

// CPUWindow is the least time over which `status` measures each host's CPU
// in use (the commands that print a status at their end do not wait for it).
const CPUWindow = 200 * time.Millisecond

// ArbitratorInfo is one Galera arbitrator.
type ArbitratorInfo struct {
	Name    string `json:"name"`
	Cluster string `json:"cluster"`
	Region  string `json:"region"`
	Netns   string `json:"netns,omitempty"`
	Address string `json:"address"`
	State   string `json:"state"` // running | paused | down
	Pid     int    `json:"pid"`
}

// LinkInfo is one WAN link between two regions.
type LinkInfo struct {
	Name         string          `json:"name"`
	Regions      [2]string       `json:"regions"`
	RTTMs        float64         `json:"rtt_ms"`
	JitterMs     float64         `json:"jitter_ms,omitempty"`
	LossPercent  float64         `json:"loss_percent,omitempty"`
	ReorderPct   float64         `json:"reorder_percent,omitempty"`
	DuplicatePct float64         `json:"duplicate_percent,omitempty"`
	BandwidthBps int64           `json:"bandwidth_bps,omitempty"`
	Measured     *netem.Measured `json:"measured,omitempty"`
	Emulator     string          `json:"emulator"` // running | down
}

// NodeInfo is one database node.
type NodeInfo struct {
	Name    string       `json:"name"`
	Cluster string       `json:"cluster"`
	Kind    spec.Kind    `json:"kind"`
	Role    plan.Role    `json:"role"`
	Region  string       `json:"region"`
	Netns   string       `json:"netns"`
	Address string       `json:"address"`
	Port    int          `json:"port"`
	State   server.State `json:"state"`
	Pid     int          `json:"pid"`
	Profile string       `json:"profile"`
	Drained bool         `json:"drained"`
	// DisksDown: its volumes' disk daemon does not serve them: the server
	// may still answer, and fails at its next write.
	DisksDown bool `json:"disks_down,omitempty"`
	// Fenced says why a node of a primary cluster is kept read-only and
	// outside replication (role fenced).
	Fenced string `json:"fenced,omitempty"`
	// Stopped says why a server that is down stopped on its own, from its
	// error log ("InnoDB: fdatasync() returned 5 (EIO: …)").
	Stopped string `json:"stopped,omitempty"`
	// DiskFaults are the disk faults in force on its volumes (volume →
	// what: "eio fsync", "full", "lose-unsynced armed (…)").
	DiskFaults map[string]string `json:"disk_faults,omitempty"`
	// Clock is its clock fault in force ("+1m0s", "drift +500ppm"), "" for
	// the real time.
	Clock string `json:"clock,omitempty"`
	// Replication (servers with binary logs): GTID position, read_only,
	// each replication connection, and a primary's semi-sync state.
	replication.Detail
}

// LBInfo is one load balancer.
type LBInfo struct {
	Name    string      `json:"name"`
	Cluster string      `json:"cluster"`
	Mode    spec.LBMode `json:"mode"`
	Netns   string      `json:"netns"`
	Address string      `json:"address"`
	Port    int         `json:"port"`
	State   string      `json:"state"` // running | down
	// Backends are the servers as HAProxy sees them (proxy "writes", and "reads" when balanced).
	Backends []lb.ServerState `json:"backends"`
	// Instances are a pair's two hosts (Address is then the virtual IP,
	// Netns the namespace of the host holding it).
	Instances []lb.Instance `json:"instances,omitempty"`
}

// ClientInfo is the host load generators run on.
type ClientInfo struct {
	Name         string `json:"name"`
	Netns        string `json:"netns"`
	Address      string `json:"address"`
	DefaultsFile string `json:"defaults_file"`
}

// Status probes every node (in parallel) and reports the lab.
func (l *Lab) Status(ctx context.Context) Status { return l.StatusOver(ctx, 0) }

// StatusOver is Status with each host's CPU in use measured over at least
// window (none when 0).
func (l *Lab) StatusOver(ctx context.Context, window time.Duration) Status {
	p := l.p
	s := Status{Name: p.Lab, Status: l.State.Status, Mode: p.Mode, Network: p.Network, Dir: p.Dir, Inventory: l.inventoryFile(),
		Nodes: make([]NodeInfo, len(p.Nodes)), LoadBalancers: []LBInfo{},
		Client: ClientInfo{Name: p.Client.Host, Netns: p.Client.Netns, Address: p.Client.Address, DefaultsFile: p.Client.DefaultsFile}}
	before := l.usage()
	lost := l.disksLost()
	if p.Disks != nil {
		s.Disks = &DisksInfo{State: "serving"}
		if lost != "" {
			s.Disks = &DisksInfo{State: "not serving", Problem: lost, Fix: "hadrill start --all --name " + p.Lab}
		}
	}
	diskFaults, _ := disk.ReadFaults(p)
	if lost != "" {
		diskFaults = nil
	}
	var wg sync.WaitGroup
	repl := l.Replication()
	roles, _ := state.RolesOf(p.Dir).Read()
	fenced := roles.Fenced
	for i := range p.Nodes {
		n := &p.Nodes[i]
		s.Nodes[i] = NodeInfo{Name: n.Name, Cluster: n.Cluster, Kind: n.Kind, Role: n.Role, Region: n.Region,
			Netns: n.Netns, Address: n.Address, Port: n.Port, Pid: l.Pid(n), Profile: n.ProfileLabel(), Drained: l.Drained(ctx, n),
			DisksDown: lost != "" && len(n.Volumes) > 0}
		if f := chaos.DiskFaults(n, diskFaults); len(f) > 0 {
			s.Nodes[i].DiskFaults = f
		}
		if c := chaos.ClockOf(ctx, l.Prov.Host(n.Host), n); !c.IsZero() {
			s.Nodes[i].Clock = c.String()
		}
		if c, _ := p.Cluster(n.Cluster); c.Kind == spec.KindPrimary {
			s.Nodes[i].Role = plan.RoleReplica
			if repl.PrimaryOf(c) == n.Name {
				s.Nodes[i].Role = plan.RolePrimary
			}
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			s.Nodes[i].State = l.NodeState(ctx, n)
			if s.Nodes[i].State == server.Down {
				s.Nodes[i].Stopped = l.stoppedBecause(ctx, n)
			}
			if s.Nodes[i].State.Answering() {
				s.Nodes[i].Detail = repl.Detail(ctx, n)
				if r := s.Nodes[i].Detail.Role; r != "" {
					s.Nodes[i].Role = r
				}
			}
			if why := fenced[n.Name]; why != "" {
				s.Nodes[i].Role, s.Nodes[i].Fenced = plan.RoleFenced, why
			}
		}(i)
	}
	wg.Wait()
	for i := range p.LoadBalancers {
		b := l.Balancer(&p.LoadBalancers[i])
		info := LBInfo{Name: b.LB.Name, Cluster: b.LB.Cluster, Mode: b.LB.Mode, Netns: b.LB.Netns, Address: b.LB.Address,
			Port: b.LB.Port, State: "down", Backends: []lb.ServerState{}, Instances: b.Instances(ctx)}
		for j, in := range info.Instances {
			if in.Holder { // where the address is now
				info.Netns = b.LB.Instances[j].Netns
				if in.Haproxy {
					info.State = "running"
					if st, err := b.Stat(ctx, &b.LB.Instances[j]); err == nil {
						info.Backends = st
					}
				}
			}
		}
		if !b.LB.VirtualIP {
			info.Instances = nil // one host: the fields above say it all
		}
		s.LoadBalancers = append(s.LoadBalancers, info)
	}
	s.Links = l.linkInfo()
	for _, c := range p.Clusters {
		if a := c.Arbitrator; a != nil {
			ai := ArbitratorInfo{Name: a.Name, Cluster: c.Name, Region: a.Region, Netns: a.Netns, Address: a.Address, State: "down", Pid: l.garbdPid(ctx, a)}
			if ai.Pid != 0 {
				ai.State = "running"
				if supervise.Paused(ai.Pid) {
					ai.State = "paused"
				}
			}
			s.Arbitrators = append(s.Arbitrators, ai)
		}
	}
	s.Hosts = l.hostInfo(before, window)
	s.Faults = fault.SinceHeal(l.Faults(time.Time{}, time.Now().Add(time.Hour)))
	return s
}

// usage reads the counters of every host that has them: its cgroups here
// (a host with a machine), or a remote machine's own (every host at once,
// a round trip each).
func (l *Lab) usage() map[string]machine.Usage {
	out := map[string]machine.Usage{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, h := range l.p.Hosts {
		wg.Go(func() {
			var u machine.Usage
			var ok bool
			if l.p.Mode == plan.ModeSSH {
				u, ok = l.remoteUsage(h.Name)
			} else {
				u, ok = machine.Read(l.p, h.Name)
			}
			if ok {
				mu.Lock()
				out[h.Name] = u
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return out
}

// hostInfo reads each measured host again, at least window after before
// (CPU in use is measured only over a window).
func (l *Lab) hostInfo(before map[string]machine.Usage, window time.Duration) []HostInfo {
	p := l.p
	if len(before) == 0 {
		return nil
	}
	var first time.Time
	for _, u := range before {
		if first.IsZero() || u.At.Before(first) {
			first = u.At
		}
	}
	if window > 0 {
		time.Sleep(time.Until(first.Add(window)))
	}
	var out []HostInfo
	measured := disk.Last(p)
	after := l.usage()
	for _, h := range p.Hosts {
		a, ok := before[h.Name]
		b, ok2 := after[h.Name]
		if !ok || !ok2 {
			continue
		}
		info := HostInfo{Name: h.Name, Role: h.Role, FaultDomain: h.FaultDomain, Machine: h.Machine, MemoryBytes: b.MemoryBytes, OOMKills: b.OOMKills, NICs: h.NICs}
		if n, ok := p.Node(h.Name); ok {
			info.Volumes = n.Volumes
			if len(info.Volumes) == 0 {
				info.Volumes = n.Asked
			}
			for _, m := range measured {
				if m.Node == n.Name {
					info.DisksMeasured = append(info.DisksMeasured, m)
				}
			}
		}
		if window > 0 {
			cores := machine.Cores(a, b)
			info.CPUCores = &cores
		}
		out = append(out, info)
	}
	return out
}

func (l *Lab) linkInfo() []LinkInfo {
	if !l.wan.Enabled() {
		return nil
	}
	c, err := l.wan.Config()
	if err != nil {
		return nil
	}
	last := l.wan.Last()
	emulator := "down"
	if l.wan.Pid() != 0 { // once: on remote hosts it asks every host
		emulator = "running"
	}
	var out []LinkInfo
	for _, k := range c.Links {
		li := LinkInfo{Name: k.Name, Regions: k.Regions, RTTMs: float64(k.RTT.Microseconds()) / 1000,
			JitterMs: float64(k.Jitter.Microseconds()) / 1000, LossPercent: k.Loss, ReorderPct: k.Reorder, DuplicatePct: k.Duplicate, BandwidthBps: k.Bandwidth, Emulator: emulator}
		for i := range last {
			if last[i].Link == k.Name {
				li.Measured = &last[i]
			}
		}
		out = append(out, li)
	}
	return out
}

// stoppedBecause reads why a server that is down stopped on its own, from
// the end of its error log ("" when it said nothing: a kill, a clean stop).
func (l *Lab) stoppedBecause(ctx context.Context, n *plan.Node) string {
	b, err := l.Prov.Host(n.Host).ReadFile(ctx, n.LogFile)
	if err != nil {
		return ""
	}
	if len(b) > 256<<10 {
		b = b[len(b)-256<<10:]
	}
	return mariadb.StoppedBecause(string(b))
}
