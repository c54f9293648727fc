package chaos

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/plan"
)

// TestCPU: a CPU fault names every problem at once (the share, an
// unknown host, a host without a machine cgroup); applied, it sets each
// host's quota and is logged; heal gives each host its machine's quota
// back (none without a machine).
func TestCPU(t *testing.T) {
	dir := t.TempDir()
	p := &plan.Plan{Lab: "c", Mode: plan.ModeNetns, Cgroups: map[string]string{"cpu": dir},
		Hosts: []plan.Host{{Name: "db1"}, {Name: "db2", Machine: &plan.Machine{CPUs: 1}}}}
	for _, h := range []string{"db1", "db2"} {
		if err := os.MkdirAll(filepath.Join(dir, h), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	l := newFakeLab(t, p, &sleepers{})
	err := CPU{Hosts: []string{"db1", "db9"}, Cores: 0}.Inject(context.Background(), l)
	if err == nil || !strings.Contains(err.Error(), "--cores: expected 0.01 to 64 cores, got 0") || !strings.Contains(err.Error(), `HOST: unknown host "db9"`) {
		t.Errorf("bad CPU fault: %v", err)
	}
	if err := (CPU{Hosts: []string{"db1", "db2"}, Cores: 0.25}).Inject(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	quota := func(h string) string {
		b, _ := os.ReadFile(filepath.Join(dir, h, "cpu.cfs_quota_us"))
		return string(b)
	}
	if quota("db1") != "25000" || quota("db2") != "25000" {
		t.Errorf("quotas under the fault: %q %q", quota("db1"), quota("db2"))
	}
	if recs := l.log.Between(time.Time{}, time.Now().Add(time.Hour)); len(recs) != 1 || recs[0].Value != "0.25 cores" {
		t.Errorf("log: %+v", recs)
	}
	if err := Heal(context.Background(), l); err != nil && !strings.Contains(err.Error(), "iptables") {
		t.Logf("heal: %v", err)
	}
	if quota("db1") != "-1" || quota("db2") != "100000" {
		t.Errorf("quotas after heal: %q %q", quota("db1"), quota("db2"))
	}
	p.Cgroups = nil
	if err := (CPU{Hosts: []string{"db1"}, Cores: 1}).Inject(context.Background(), l); err == nil || !strings.Contains(err.Error(), "no machine cgroup") {
		t.Errorf("a lab without cgroups: %v", err)
	}
}

// TestMemory: a memory fault names every problem at once; applied, it
// sets each host's limit and is logged; heal gives each host its
// machine's limit back.
func TestMemory(t *testing.T) {
	dir := t.TempDir()
	p := &plan.Plan{Lab: "m", Mode: plan.ModeNetns, Cgroups: map[string]string{"memory": dir},
		Hosts: []plan.Host{{Name: "db1"}, {Name: "db2", Machine: &plan.Machine{MemoryBytes: 1 << 30}}}}
	for _, h := range []string{"db1", "db2"} {
		if err := os.MkdirAll(filepath.Join(dir, h), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	l := newFakeLab(t, p, &sleepers{})
	err := Memory{Hosts: []string{"db9"}, Limit: "1K"}.Inject(context.Background(), l)
	if err == nil || !strings.Contains(err.Error(), `--limit: expected a size of at least 16M (e.g. 300M, 1G), got "1K"`) || !strings.Contains(err.Error(), `HOST: unknown host "db9"`) {
		t.Errorf("bad memory fault: %v", err)
	}
	if err := (Memory{Hosts: []string{"db1", "db2"}, Limit: "300M"}).Inject(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	limit := func(h string) string {
		b, _ := os.ReadFile(filepath.Join(dir, h, "memory.limit_in_bytes"))
		return string(b)
	}
	if limit("db1") != "314572800" || limit("db2") != "314572800" {
		t.Errorf("limits under the fault: %q %q", limit("db1"), limit("db2"))
	}
	if err := Heal(context.Background(), l); err != nil {
		t.Logf("heal: %v", err)
	}
	if limit("db1") != "-1" || limit("db2") != "1073741824" {
		t.Errorf("limits after heal: %q %q", limit("db1"), limit("db2"))
	}
}
