package plan

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hadrill/hadrill/internal/spec"
)

// Machine is a host's size as the lab enforces it: a CPU quota in cores and
// a memory limit, on every process of the host.
type Machine struct {
	Name        string  `json:"name"`
	CPUs        float64 `json:"cpus"`
	MemoryBytes int64   `json:"memory_bytes"`
	// DiskIOPS and DiskBps cap the host's emulated disks together (0: no cap).
	DiskIOPS int64 `json:"disk_iops,omitempty"`
	DiskBps  int64 `json:"disk_bps,omitempty"`
}

// String is how a machine is shown: "d1 (1 CPU, 3.5G)".
func (m Machine) String() string {
	return spec.Machine{Name: m.Name, CPUs: m.CPUs, Memory: fmt.Sprint(m.MemoryBytes)}.String()
}

// CgroupControllers are the cgroup (v1) controllers a host's cgroup is made in: CPU quota, CPU
// accounting and the memory limit.
var CgroupControllers = []string{"cpu", "cpuacct", "memory"}

// CgroupDirs are the host's cgroup directories, one per distinct hierarchy
// (cpu and cpuacct may be mounted together); none when the lab has no cgroups.
func (p *Plan) CgroupDirs(host string) []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range CgroupControllers {
		if d := p.Cgroups[c]; d != "" && !seen[d] {
			seen[d] = true
			out = append(out, filepath.Join(d, host))
		}
	}
	return out
}

// CgroupDir is the host's directory in one controller's hierarchy ("" when
// the lab has none).
func (p *Plan) CgroupDir(host, controller string) string {
	if d := p.Cgroups[controller]; d != "" {
		return filepath.Join(d, host)
	}
	return ""
}

// LabCgroupDirs are the lab's own cgroup directories (the hosts' parents).
func (p *Plan) LabCgroupDirs() []string {
	seen := map[string]bool{}
	var out []string
	for _, d := range p.Cgroups {
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	sort.Strings(out)
	return out
}

// NetemCgroup is the cpu cgroup of the lab's WAN emulator (a lab of
// namespaces on a machine with cgroup v1): beside hadrill/, not below it, so
// that its weight counts against every other process of the machine rather
// than inside a group as heavy as one of them; "" when the lab has none.
func (p *Plan) NetemCgroup() string {
	d := p.Cgroups["cpu"]
	if d == "" || p.Mode != ModeNetns {
		return ""
	}
	return filepath.Join(filepath.Dir(filepath.Dir(d)), "hadrill-netem-"+p.Lab)
}

// cgroups gives a root lab a cgroup per host in every controller this
// machine has, so each host's CPU and memory are measured and, with a
// machine, limited.
func (b *builder) cgroups() {
	if b.p.Mode == ModeNetns {
		b.p.Cgroups = LabCgroups(b.p.Lab, b.f)
	}
}

// LabCgroups are a lab's cgroup directories: hadrill/<lab> below the cgroup
// hadrill runs in, per controller; nil unless this machine has every one.
func LabCgroups(lab string, f Facts) map[string]string {
	dirs := map[string]string{}
	for _, c := range CgroupControllers {
		if f.Cgroups[c] == "" {
			return nil
		}
		dirs[c] = filepath.Join(f.Cgroups[c], "hadrill", lab)
	}
	return dirs
}

// machines resolves each host's machine and refuses machines where they
// cannot be enforced, naming every field that asks for one.
func (b *builder) machines() {
	var asked []string
	set := func(host, path, name string) {
		if name == "" {
			return
		}
		asked = append(asked, path)
		m, ok := b.s.MachineNamed(name)
		if !ok {
			return
		}
		for i := range b.p.Hosts {
			if b.p.Hosts[i].Name == host {
				b.p.Hosts[i].Machine = &Machine{Name: m.Name, CPUs: m.CPUs, MemoryBytes: m.MemoryBytes(), DiskIOPS: int64(m.DiskIOPS), DiskBps: m.DiskBps()}
			}
		}
	}
	for ci, c := range b.s.Clusters {
		for j := 1; j <= c.NodeCount(); j++ {
			node := fmt.Sprintf("%s%d", c.Name, j)
			set(node, fmt.Sprintf("clusters[%d].machine", ci), c.Machine)
			set(node, fmt.Sprintf("clusters[%d].node_machines.%s", ci, node), c.NodeMachines[node])
		}
		if c.Arbitrator != nil {
			set(c.ArbitratorHost(), fmt.Sprintf("clusters[%d].arbitrator.machine", ci), c.Arbitrator.Machine)
		}
	}
	for i, lb := range b.s.LoadBalancers {
		set(lb.Name, fmt.Sprintf("load_balancers[%d].machine", i), lb.Machine)
		if lb.Pair() {
			set(lb.Name+"1", fmt.Sprintf("load_balancers[%d].machine", i), lb.Machine)
			set(lb.Name+"2", fmt.Sprintf("load_balancers[%d].machine", i), lb.Machine)
		}
	}
	set(b.s.Client.Name, "client.machine", b.s.Client.Machine)
	asked = dedupe(asked)
	switch {
	case len(asked) == 0:
	case b.p.Mode == ModeSSH: // a host is the machine it is: preflight holds it against the spec's
		for i := range b.p.Hosts { // no quota, no limit: nothing may say it had one
			b.p.Hosts[i].Machine = nil
		}
		b.p.Warnings = append(b.p.Warnings, fmt.Sprintf("%s: machines are emulated on this computer only; on remote hosts each host is the machine it is (preflight compared them)", strings.Join(asked, ", ")))
		return
	case b.p.Mode != ModeNetns:
		for _, path := range asked {
			b.problems = append(b.problems, path+": machines need root (each host's CPU and memory are limited in its own cgroup); remove it to run rootless")
		}
	case b.p.Cgroups == nil:
		for _, path := range asked {
			b.problems = append(b.problems, path+": machines need the cgroup v1 cpu, cpuacct and memory controllers, which this machine does not have mounted")
		}
	}
	b.p.Warnings = append(b.p.Warnings, machineWarnings(b.p.Hosts, b.f)...)
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// machineWarnings says when the hosts are promised more than this machine
// has: the lab then compares designs, it does not predict absolute figures.
func machineWarnings(hosts []Host, f Facts) []string {
	var cpus float64
	var mem int64
	var sized int
	for _, h := range hosts {
		if h.Machine != nil {
			cpus += h.Machine.CPUs
			mem += h.Machine.MemoryBytes
			sized++
		}
	}
	var out []string
	if sized > 0 && f.CPUs > 0 && cpus > float64(f.CPUs)+1e-9 {
		out = append(out, fmt.Sprintf("machines: %d hosts are given %s CPUs in all, this machine has %d: they compete for them, "+
			"so results compare designs and do not predict absolute figures", sized, spec.FormatCores(cpus), f.CPUs))
	}
	if sized > 0 && f.MemBytes > 0 && mem > f.MemBytes {
		out = append(out, fmt.Sprintf("machines: %d hosts are given %s of memory in all, this machine has %s: a host may be "+
			"short of memory before it reaches its limit", sized, spec.FormatSize(mem), spec.FormatSize(f.MemBytes)))
	}
	return out
}
