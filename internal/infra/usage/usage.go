// Package usage reads what a lab's host uses: CPU, memory, memory-limit
// kills, disk IO and NIC bytes, from its cgroups, its emulated disks'
// counters and its links here, or from a remote machine over its
// connection. Every run records it per second.
package usage

import (
	"context"
	"sync"
	"time"

	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/infra/disk"
	"github.com/hadrill/hadrill/internal/infra/machine"
	"github.com/hadrill/hadrill/internal/netns"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
)

// Of reads a host's counters: on this computer its CPU, memory and
// memory-limit kill counters (its cgroups), its emulated disks' IO and
// each NIC's bytes (the other end of its link, in the lab's namespace:
// what that end receives, the host sent); on a remote machine what
// Remote reads through h. False: nothing could be read.
func Of(p *plan.Plan, host string, h host.Host) (machine.Usage, bool) {
	if p.Mode == plan.ModeSSH {
		return Remote(p, host, h, time.Second)
	}
	u, ok := machine.Read(p, host)
	if n, isNode := p.Node(host); isNode {
		for _, io := range disk.Read(p, n) {
			c := volumeClass(n, io.Volume)
			u.Disks = append(u.Disks, machine.DiskIO{Name: io.Name, Volume: io.Volume, IOPSCap: c.IOPS, BpsCap: c.ThroughputBytes(),
				ClassLatencyMs: float64(c.LatencyDuration().Microseconds()) / 1000,
				Ops:            io.Reads + io.Writes + io.Flushes, Bytes: io.ReadBytes + io.WriteBytes, CacheHits: io.CacheHits, TicksMs: io.TicksMs, BusyMs: io.BusyMs})
		}
		if len(u.Disks) > 0 && u.At.IsZero() {
			u.At, ok = time.Now(), true
		}
	}
	ph, known := p.Host(host)
	if !known || len(ph.NICs) == 0 || p.Netns == "" {
		return u, ok
	}
	counters, err := netns.Counters(p.Netns)
	if err != nil {
		return u, ok
	}
	if u.At.IsZero() {
		u.At = time.Now()
	}
	for _, c := range ph.NICs {
		if b, found := counters[c.Veth]; found {
			u.NICs = append(u.NICs, machine.NICBytes{Name: c.Name, Network: c.Network, RateBps: c.RateBps, Tx: b.Rx, Rx: b.Tx})
		}
	}
	return u, ok || len(u.NICs) > 0
}

func volumeClass(n *plan.Node, role string) spec.DiskClass {
	for _, v := range n.Volumes {
		if v.Name == role {
			return v.Class
		}
	}
	return spec.DiskClass{}
}

// Remote reads a remote machine's counters over its connection, in one
// round trip: the whole machine's CPU time and memory in use, its NIC's
// bytes (machine.ParseRemote). False: the host did not answer within
// timeout.
func Remote(p *plan.Plan, name string, conn host.Host, timeout time.Duration) (machine.Usage, bool) {
	h, ok := p.Host(name)
	if !ok {
		return machine.Usage{}, false
	}
	argv := []string{"sh", "-c", machine.RemoteScript, "sh"}
	for _, c := range h.NICs {
		argv = append(argv, c.Name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out, err := conn.Run(ctx, argv, nil)
	if err != nil {
		return machine.Usage{}, false
	}
	u, err := machine.ParseRemote(string(out), h.NICs, time.Now())
	return u, err == nil
}

// All reads the CPU and memory counters of every host that has them: its
// cgroups here (a host with a machine), or a remote machine's own (every
// host at once, a round trip each, a host that does not answer within
// timeout left out).
func All(p *plan.Plan, hosts func(name string) host.Host, timeout time.Duration) map[string]machine.Usage {
	out := map[string]machine.Usage{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, h := range p.Hosts {
		wg.Go(func() {
			var u machine.Usage
			var ok bool
			if p.Mode == plan.ModeSSH {
				u, ok = Remote(p, h.Name, hosts(h.Name), timeout)
			} else {
				u, ok = machine.Read(p, h.Name)
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
