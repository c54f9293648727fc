package lab

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hadrill/hadrill/internal/chaos"
	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/galera"
	"github.com/hadrill/hadrill/internal/infra/disk"
	"github.com/hadrill/hadrill/internal/infra/machine"
	"github.com/hadrill/hadrill/internal/infra/usage"
	"github.com/hadrill/hadrill/internal/lb"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/replication"
	"github.com/hadrill/hadrill/internal/server"
	"github.com/hadrill/hadrill/internal/spec"
	"github.com/hadrill/hadrill/internal/state"
	"github.com/hadrill/hadrill/internal/status"
)

// CPUWindow is the least time over which `status` measures each host's CPU
// in use (the commands that print a status at their end do not wait for it).
const CPUWindow = 200 * time.Millisecond

// hostTimeout bounds how long status waits for a remote host's counters
// (a busy machine's SSH round trip takes seconds).
const hostTimeout = 5 * time.Second

// Status probes every node (in parallel) and reports the lab.
func (l *Lab) Status(ctx context.Context) status.Status { return l.StatusOver(ctx, 0) }

// StatusOver is Status with each host's CPU in use measured over at least
// window (none when 0).
func (l *Lab) StatusOver(ctx context.Context, window time.Duration) status.Status {
	p := l.p
	s := status.Status{Name: p.Lab, Status: l.State.Status, Mode: p.Mode, Network: p.Network, Dir: p.Dir, Inventory: l.inventoryFile(),
		Nodes: make([]status.NodeInfo, len(p.Nodes)), LoadBalancers: []status.LBInfo{},
		Client: status.ClientInfo{Name: p.Client.Host, Netns: p.Client.Netns, Address: p.Client.Address, DefaultsFile: p.Client.DefaultsFile}}
	before := usage.All(l.p, l.Prov.Host, hostTimeout)
	lost := l.disksLost()
	if p.Disks != nil {
		s.Disks = &status.DisksInfo{State: "serving"}
		if lost != "" {
			s.Disks = &status.DisksInfo{State: "not serving", Problem: lost, Fix: "hadrill start --all --name " + p.Lab}
		}
	}
	diskFaults, _ := disk.ReadFaults(p)
	if lost != "" {
		diskFaults = nil
	}
	cuts, _ := disk.Cuts(p)
	s.Daemons = l.hostDaemons(ctx)
	recs := l.Faults(time.Time{}, time.Now().Add(time.Hour))
	var wg sync.WaitGroup
	repl := l.Replication()
	roles, _ := state.RolesOf(p.Dir).Read()
	fenced := roles.Fenced
	for i := range p.Nodes {
		n := &p.Nodes[i]
		s.Nodes[i] = status.NodeInfo{Name: n.Name, Cluster: n.Cluster, Kind: n.Kind, Role: n.Role, Region: n.Region,
			Netns: n.Netns, Address: n.Address, Port: n.Port, Profile: n.ProfileLabel(), Drained: l.Drained(ctx, n),
			DisksDown: lost != "" && len(n.Volumes) > 0}
		s.Nodes[i].Pid, _ = s.Daemon(n.Host, roleServer)
		if f := chaos.DiskFaults(n, diskFaults, cuts); len(f) > 0 {
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
			probe := l.Probe(ctx, n)
			s.Nodes[i].State = probe.State
			if f := galera.FlowOf(probe.Status); f.Requested && f.Active {
				s.Nodes[i].HoldsBack = "it " + f.Holding(s.Nodes[i].DiskFaults)
			}
			if probe.State == server.Unresponsive && n.Kind == spec.KindPrimary {
				s.Nodes[i].Silent = replication.SilentAfterCut(recs, n.Name, time.Now())
			}
			if s.Nodes[i].State == server.Down {
				s.Nodes[i].Stopped = server.StoppedBecause(ctx, l.Prov.Host(n.Host), n, recs)
			}
			if s.Nodes[i].State == server.Inconsistent {
				s.Nodes[i].VotedOut, s.Nodes[i].Reversed = server.VotedOut(ctx, l.Prov.Host(n.Host), n)
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
		info := status.LBInfo{Name: b.LB.Name, Cluster: b.LB.Cluster, Mode: b.LB.Mode, Checks: b.LB.Checks, Netns: b.LB.Instances[0].Netns, Address: b.LB.Address,
			Port: b.LB.Port, Proxy: lb.KindOf(b.LB).Name(), State: "down", Backends: []lb.ServerState{}, Instances: b.Instances(ctx)}
		for j, in := range info.Instances {
			if in.Holder { // where the address is now
				info.Netns = b.LB.Instances[j].Netns
				if in.ProxyUp {
					info.State = "running"
					if st, err := b.Stat(ctx, &b.LB.Instances[j]); err == nil {
						info.Backends = st
						info.Out = lb.WhyOut(b.InstanceEvents(ctx, &b.LB.Instances[j], time.Time{}, time.Now()), st)
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
			ai := status.ArbitratorInfo{Name: a.Name, Cluster: c.Name, Region: a.Region, Netns: a.Netns, Address: a.Address}
			ai.Pid, ai.State = s.Daemon(a.Name, roleArbitrator)
			s.Arbitrators = append(s.Arbitrators, ai)
		}
	}
	s.Hosts = l.hostInfo(before, window)
	running := map[string]bool{}
	for _, n := range s.Nodes {
		running[n.Name] = n.State.Answering()
	}
	s.Faults, s.FaultsOver = chaos.InForce(ctx, l, l.p, fault.SinceHeal(recs), running)
	return s
}

// hostInfo reads each measured host again, at least window after before
// (CPU in use is measured only over a window).
func (l *Lab) hostInfo(before map[string]machine.Usage, window time.Duration) []status.HostInfo {
	p := l.p
	var first time.Time
	for _, u := range before {
		if first.IsZero() || u.At.Before(first) {
			first = u.At
		}
	}
	if window > 0 {
		time.Sleep(time.Until(first.Add(window)))
	}
	var out []status.HostInfo
	measured := disk.Last(p)
	var after map[string]machine.Usage
	if len(before) > 0 {
		after = usage.All(l.p, l.Prov.Host, hostTimeout)
	}
	for _, h := range p.Hosts {
		a, ok := before[h.Name]
		b, ok2 := after[h.Name]
		info := status.HostInfo{Name: h.Name, Role: h.Role, FaultDomain: h.FaultDomain, Machine: h.Machine, MemoryBytes: b.MemoryBytes, OOMKills: b.OOMKills, NICs: h.NICs}
		if !ok || !ok2 {
			if p.Mode != plan.ModeSSH {
				continue // a host here without a machine has no counters of its own
			}
			// a remote machine that did not answer is listed, not left out
			info.Unanswered = fmt.Sprintf("no answer within %v", hostTimeout)
		}
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
		if window > 0 && info.Unanswered == "" {
			cores := machine.Cores(a, b)
			info.CPUCores = &cores
		}
		out = append(out, info)
	}
	return out
}

func (l *Lab) linkInfo() []status.LinkInfo {
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
	var out []status.LinkInfo
	for _, k := range c.Links {
		li := status.LinkInfo{Name: k.Name, Regions: k.Regions, RTTMs: float64(k.RTT.Microseconds()) / 1000,
			JitterMs: float64(k.Jitter.Microseconds()) / 1000, LossPercent: k.Loss, ReorderPct: k.Reorder, DuplicatePct: k.Duplicate, CorruptPct: k.Corrupt, BandwidthBps: k.Bandwidth, Emulator: emulator}
		for i := range last {
			if last[i].Link == k.Name {
				li.Measured = &last[i]
			}
		}
		out = append(out, li)
	}
	return out
}
