package machine

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/plan"
)

// Usage is what a host's cgroups counted up to At.
type Usage struct {
	At          time.Time
	CPU         time.Duration // CPU time used by every process of the host
	Throttled   time.Duration // time the host's processes waited for its CPU quota
	MemoryBytes int64         // memory charged now (resident memory and page cache)
	MemoryPeak  int64         // the most ever charged
	OOMKills    int           // processes the memory limit's OOM killer ended
	NICs        []NICBytes    // what the host sent and received on each NIC so far
	Disks       []DiskIO      // what each of its emulated disks did so far
}

// DiskIO is one emulated disk's counters (its loop device's) and its class's caps.
type DiskIO struct {
	Name, Volume    string
	IOPSCap         int
	BpsCap          int64
	ClassLatencyMs  float64 // the class's time per IO
	Ops, Bytes      uint64  // reads, writes and flushes; bytes read and written
	CacheHits       uint64  // reads the host's cache answered (they never reached the storage)
	TicksMs, BusyMs uint64  // time IOs spent (summed); time the disk had IOs in flight
}

// NICBytes are one NIC's byte counters, from the host's side.
type NICBytes struct {
	Name    string // eth0, eth1
	Network string // application, cluster
	RateBps int64  // the NIC's cap (0: none)
	Tx, Rx  uint64
}

// Read reads a host's counters now; ok is false when the host has no cgroups.
func Read(p *plan.Plan, host string) (Usage, bool) {
	acct := p.CgroupDir(host, "cpuacct")
	if acct == "" {
		return Usage{}, false
	}
	if _, err := os.Stat(acct); err != nil {
		return Usage{}, false
	}
	u := Usage{At: time.Now()}
	u.CPU = time.Duration(readInt(filepath.Join(acct, "cpuacct.usage")))
	u.Throttled = time.Duration(field(filepath.Join(p.CgroupDir(host, "cpu"), "cpu.stat"), "throttled_time"))
	mem := p.CgroupDir(host, "memory")
	u.MemoryBytes = readInt(filepath.Join(mem, "memory.usage_in_bytes"))
	u.MemoryPeak = readInt(filepath.Join(mem, "memory.max_usage_in_bytes"))
	u.OOMKills = int(field(filepath.Join(mem, "memory.oom_control"), "oom_kill"))
	return u, true
}

func readInt(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	v, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return v
}

// field reads "name value" from a cgroup key-value file (cpu.stat, memory.oom_control).
func field(path, name string) int64 {
	fh, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == name {
			v, _ := strconv.ParseInt(f[1], 10, 64)
			return v
		}
	}
	return 0
}

// Cores is the CPU used between two readings, in cores (1 = one core busy).
func Cores(a, b Usage) float64 {
	dt := b.At.Sub(a.At)
	if dt <= 0 || b.CPU < a.CPU {
		return 0
	}
	return float64(b.CPU-a.CPU) / float64(dt)
}
