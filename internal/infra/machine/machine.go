// Package machine gives a lab's hosts their machines on this computer: a
// cgroup (v1) per host in the cpu, cpuacct and memory hierarchies, holding
// every process the host runs. A host with a machine gets its CPU quota
// (cpu.cfs_quota_us) and memory limit (memory.limit_in_bytes); every host is
// measured (CPU time, throttling, memory, memory-limit kills).
package machine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hadrill/hadrill/internal/plan"
)

// cfsPeriod is the CPU quota's accounting period (the kernel's default).
const cfsPeriod = 100_000 // µs

// Setup makes every host's cgroups and sets its machine's limits. It is
// idempotent: a lab started again finds its cgroups and sets them again.
func Setup(p *plan.Plan) error {
	for _, h := range p.Hosts {
		for _, d := range p.CgroupDirs(h.Name) {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return fmt.Errorf("host %s: cgroup: %w", h.Name, err)
			}
		}
		if err := limit(p, h); err != nil {
			return fmt.Errorf("host %s: %w", h.Name, err)
		}
	}
	return nil
}

func limit(p *plan.Plan, h plan.Host) error {
	quota, mem := "-1", "-1"
	if m := h.Machine; m != nil {
		quota = strconv.Itoa(int(m.CPUs*cfsPeriod + 0.5))
		mem = strconv.FormatInt(m.MemoryBytes, 10)
	}
	cpu := p.CgroupDir(h.Name, "cpu")
	if cpu == "" {
		return nil
	}
	if err := write(filepath.Join(cpu, "cpu.cfs_period_us"), strconv.Itoa(cfsPeriod)); err != nil {
		return err
	}
	if err := write(filepath.Join(cpu, "cpu.cfs_quota_us"), quota); err != nil {
		return err
	}
	err := write(filepath.Join(p.CgroupDir(h.Name, "memory"), "memory.limit_in_bytes"), mem)
	if errors.Is(err, syscall.EBUSY) {
		return fmt.Errorf("machine %s: its processes already use more memory than its limit; stop the host first", h.Machine)
	}
	return err
}

// SetCPU changes a host's CPU quota live to cores (a CPU fault): its
// processes keep running, throttled to that share of the period.
func SetCPU(p *plan.Plan, host string, cores float64) error {
	cpu := p.CgroupDir(host, "cpu")
	if cpu == "" {
		return fmt.Errorf("host %s has no cpu cgroup (a root lab on this computer has one)", host)
	}
	return write(filepath.Join(cpu, "cpu.cfs_quota_us"), strconv.Itoa(max(1000, int(cores*cfsPeriod+0.5))))
}

// SetMemory changes a host's memory limit live to bytes (a memory fault):
// the kernel first reclaims what it can (the page cache); a host whose
// processes use more than that leaves is refused (EBUSY), and past the
// limit the cgroup's OOM killer ends its biggest process.
func SetMemory(p *plan.Plan, host string, bytes int64) error {
	mem := p.CgroupDir(host, "memory")
	if mem == "" {
		return fmt.Errorf("host %s has no memory cgroup (a root lab on this computer has one)", host)
	}
	err := write(filepath.Join(mem, "memory.limit_in_bytes"), strconv.FormatInt(bytes, 10))
	if errors.Is(err, syscall.EBUSY) {
		used := readInt(filepath.Join(mem, "memory.usage_in_bytes"))
		return fmt.Errorf("host %s: its processes use %d MiB, which %d MiB cannot hold even with its page cache given back", host, used>>20, bytes>>20)
	}
	return err
}

// RestoreCPU gives hosts (none named: every host) their machine's CPU
// quota back (none without a machine): what heal does after a CPU fault.
// A lab without cgroups has nothing to restore.
func RestoreCPU(p *plan.Plan, hosts ...string) error {
	return restore(p, "cpu", "cpu.cfs_quota_us", hosts, func(m *plan.Machine) string {
		return strconv.Itoa(int(m.CPUs*cfsPeriod + 0.5))
	})
}

// RestoreMemory gives hosts (none named: every host) their machine's
// memory limit back (none without a machine).
func RestoreMemory(p *plan.Plan, hosts ...string) error {
	return restore(p, "memory", "memory.limit_in_bytes", hosts, func(m *plan.Machine) string {
		return strconv.FormatInt(m.MemoryBytes, 10)
	})
}

// restore writes file in each host's controller cgroup back to its
// machine's value (of, or -1 without a machine); hosts not set up are
// passed over.
func restore(p *plan.Plan, controller, file string, hosts []string, of func(*plan.Machine) string) error {
	var errs []error
	for _, h := range p.Hosts {
		dir := p.CgroupDir(h.Name, controller)
		if dir == "" || (len(hosts) > 0 && !slices.Contains(hosts, h.Name)) {
			continue
		}
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		v := "-1"
		if h.Machine != nil {
			v = of(h.Machine)
		}
		errs = append(errs, write(filepath.Join(dir, file), v))
	}
	return errors.Join(errs...)
}

func write(path, value string) error {
	if err := os.WriteFile(path, []byte(value), 0o644); err != nil {
		return fmt.Errorf("cgroup %s: %w", path, err)
	}
	return nil
}

// Enter wraps argv so that it runs inside the host's cgroups: a shell puts
// itself in them, then becomes argv (the pid stays the same). Before any
// namespace wrapper: `ip netns exec` remounts /sys, hiding the cgroup files.
func Enter(p *plan.Plan, host string, argv []string) []string {
	dirs := p.CgroupDirs(host)
	if len(dirs) == 0 {
		return argv
	}
	var script []string
	for _, d := range dirs {
		script = append(script, "echo $$ > "+filepath.Join(d, "cgroup.procs"))
	}
	script = append(script, `exec "$@"`)
	return append([]string{"/bin/sh", "-c", strings.Join(script, " && "), "sh"}, argv...)
}

// Teardown ends every process left in the lab's cgroups (only hadrill puts
// processes there) and removes them, stray hosts' included. Idempotent.
func Teardown(p *plan.Plan) error {
	var errs []error
	for _, lab := range p.LabCgroupDirs() {
		if filepath.Base(lab) != p.Lab || filepath.Base(filepath.Dir(lab)) != "hadrill" {
			errs = append(errs, fmt.Errorf("cgroup %s: not a lab's cgroup (…/hadrill/%s); not touching it", lab, p.Lab))
			continue
		}
		entries, err := os.ReadDir(lab)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		for _, e := range entries {
			if e.IsDir() {
				errs = append(errs, remove(filepath.Join(lab, e.Name())))
			}
		}
		errs = append(errs, remove(lab))
		_ = os.Remove(filepath.Dir(lab)) // hadrill/: only when no other lab has cgroups
	}
	if d := p.NetemCgroup(); d != "" { // the WAN emulator's (a daemon killed without its own clean-up leaves it)
		if _, err := os.Stat(d); err == nil {
			errs = append(errs, remove(d))
		}
	}
	return errors.Join(errs...)
}

// remove kills what runs in a cgroup and removes it.
func remove(dir string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids := procs(dir)
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		err := os.Remove(dir)
		switch {
		case err == nil, errors.Is(err, os.ErrNotExist):
			return nil
		case time.Now().After(deadline):
			return fmt.Errorf("cgroup %s: %w (processes %v)", dir, err, pids)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func procs(dir string) []int {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
			out = append(out, pid)
		}
	}
	return out
}
