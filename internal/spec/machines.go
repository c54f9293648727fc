package spec

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Machine is a host's size: CPU time in cores (fractions allowed: 0.5 is
// half of one core's time) and memory. The lab enforces both on every
// process of the host (cgroup CPU quota and memory limit).
type Machine struct {
	Name   string  `yaml:"name" json:"name"`
	CPUs   float64 `yaml:"cpus" json:"cpus"`
	Memory string  `yaml:"memory" json:"memory"`
	// Price is what the machine costs an hour (in the user's currency;
	// studies divide throughput by it). 0: not priced.
	Price float64 `yaml:"price,omitempty" json:"price,omitempty"`
	// DiskIOPS and DiskThroughput are the machine's own caps over all its
	// emulated disks together (a cloud VM's uncached disk limit: disks
	// whose caps add up to more than the VM's get no more than the VM's).
	// 0 and "": no cap of the machine's.
	DiskIOPS       int    `yaml:"disk_iops,omitempty" json:"disk_iops,omitempty"`
	DiskThroughput string `yaml:"disk_throughput,omitempty" json:"disk_throughput,omitempty"` // bytes per second, e.g. 32M
}

// DiskBps is the machine's disk throughput cap in bytes per second (0: none).
func (m Machine) DiskBps() int64 {
	b, _ := ParseSize(m.DiskThroughput)
	return b
}

// BuiltinMachines are the sizes every spec may name without defining them:
// lab-scale versions of the virtual machines the reference designs run on.
var BuiltinMachines = []Machine{
	{Name: "small", CPUs: 0.5, Memory: "1G"}, // a burstable entry size
	{Name: "d1", CPUs: 1, Memory: "3584M"},   // 1 vCPU, 3.5 GB (a DS1-class VM)
	{Name: "d2", CPUs: 2, Memory: "7G"},      // 2 vCPUs, 7 GB (a DS2-class VM)
	{Name: "a3", CPUs: 4, Memory: "7G"},      // 4 cores, 7 GB (an A3-class VM)
}

// Bounds of a machine.
const (
	MinMachineMemory = 256 << 20
	MaxMachineCPUs   = 256
)

// MachineNamed resolves a machine name: the spec's own machines first, then
// the built-in sizes.
func (s *Spec) MachineNamed(name string) (Machine, bool) {
	return lookup(name, machineName, s.Machines, BuiltinMachines)
}

// MachineNames lists every machine a spec may name, sorted.
func (s *Spec) MachineNames() []string { return namesOf(machineName, s.Machines, BuiltinMachines) }

// MemoryBytes is the machine's memory (0 when it does not parse).
func (m Machine) MemoryBytes() int64 {
	b, _ := ParseSize(m.Memory)
	return b
}

// String is how a machine is shown: "d1 (1 CPU, 3.5G)".
func (m Machine) String() string {
	unit := "CPUs"
	if m.CPUs == 1 {
		unit = "CPU"
	}
	return fmt.Sprintf("%s (%s %s, %s)", m.Name, FormatCores(m.CPUs), unit, FormatSize(m.MemoryBytes()))
}

// FormatCores renders a number of cores without trailing zeros: 0.5, 1, 1.25.
func FormatCores(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", f), "0"), ".")
}

// FormatSize renders a byte count the way sizes are written in a spec.
func FormatSize(b int64) string {
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if b >= u.size {
			if b%u.size == 0 {
				return fmt.Sprintf("%d%s", b/u.size, u.suffix)
			}
			return FormatCores(float64(b)/float64(u.size)) + u.suffix
		}
	}
	return fmt.Sprintf("%d", b)
}

func (v *validator) machines(s *Spec) {
	seen := map[string]string{}
	for i, m := range s.Machines {
		p := fmt.Sprintf("machines[%d]", i)
		v.name(p+".name", m.Name, seen)
		if m.CPUs <= 0 || m.CPUs > MaxMachineCPUs || math.IsNaN(m.CPUs) || math.Abs(m.CPUs*100-math.Round(m.CPUs*100)) > 1e-9 {
			v.add(p+".cpus", "expected a number of cores from 0.01 to %d in steps of 0.01 like 0.5 or 2, got %g", MaxMachineCPUs, m.CPUs)
		}
		if b, err := ParseSize(m.Memory); err != nil || b < MinMachineMemory {
			v.add(p+".memory", "expected a size of at least 256M like 1G or 3584M, got %q", m.Memory)
		}
		if m.Price < 0 || m.Price > 1e6 || math.IsNaN(m.Price) {
			v.add(p+".price", "expected an hourly price from 0 to 1000000, got %g", m.Price)
		}
		if m.DiskIOPS < 0 || m.DiskIOPS > MaxDiskIOPS {
			v.add(p+".disk_iops", "expected 0 (no cap) to %d IOPS over the machine's disks, got %d", MaxDiskIOPS, m.DiskIOPS)
		}
		if b, err := ParseSize(m.DiskThroughput); m.DiskThroughput != "" && (err != nil || b < 1<<20) {
			v.add(p+".disk_throughput", "expected bytes per second of at least 1M like 32M or 1G, got %q", m.DiskThroughput)
		}
	}
}

// HourlyPrice is what the spec's database service costs an hour: the
// machines of its nodes, arbitrators and load balancers (the client is the
// load generator, not the service). ok is false when none of them is
// priced; unpriced ones count 0.
func (s *Spec) HourlyPrice() (price float64, ok bool) {
	add := func(name string) {
		if m, found := s.MachineNamed(name); found && m.Price > 0 {
			price, ok = price+m.Price, true
		}
	}
	for _, c := range s.Clusters {
		for j := 1; j <= c.NodeCount(); j++ {
			name := c.Machine
			if m, set := c.NodeMachines[fmt.Sprintf("%s%d", c.Name, j)]; set {
				name = m
			}
			add(name)
		}
		if c.Arbitrator != nil {
			add(c.Arbitrator.Machine)
		}
	}
	for _, lb := range s.LoadBalancers {
		add(lb.Machine)
	}
	return price, ok
}

// machineRef checks a host's machine name; the machine when it is known.
func (v *validator) machineRef(s *Spec, path, name string) (Machine, bool) {
	if name == "" {
		return Machine{}, false
	}
	m, ok := s.MachineNamed(name)
	if !ok {
		v.add(path, "unknown machine %q (known: %s)", name, strings.Join(s.MachineNames(), ", "))
	}
	return m, ok
}

// clusterMachine checks a cluster's machines: known, and holding the memory
// share the cluster asks its nodes for.
func (v *validator) clusterMachine(s *Spec, p string, c Cluster) {
	if c.Arbitrator != nil {
		v.machineRef(s, p+".arbitrator.machine", c.Arbitrator.Machine)
	}
	share, err := ParseSize(c.Memory)
	holds := func(path string, m Machine) {
		if c.Memory != "" && err == nil && m.MemoryBytes() > 0 && share > m.MemoryBytes() {
			v.add(path, "%s is more than its machine %s has", c.Memory, m)
		}
	}
	if m, ok := v.machineRef(s, p+".machine", c.Machine); ok {
		holds(p+".memory", m)
	}
	for _, node := range keys(c.NodeMachines) {
		path := p + ".node_machines." + node
		if k, err := strconv.Atoi(strings.TrimPrefix(node, c.Name)); !strings.HasPrefix(node, c.Name) || err != nil || k < 1 || k > c.NodeCount() {
			v.add(path, "unknown node %q (the cluster's nodes are %s1 to %s%d)", node, c.Name, c.Name, c.NodeCount())
			continue
		}
		if c.NodeMachines[node] == "" {
			v.add(path, "expected a machine name (like small or d1)")
			continue
		}
		if m, ok := v.machineRef(s, path, c.NodeMachines[node]); ok {
			holds(path, m)
		}
	}
}
