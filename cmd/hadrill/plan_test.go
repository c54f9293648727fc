package main

import (
	"os"
	"strings"
	"testing"

	"github.com/hadrill/hadrill/internal/golden"
	"github.com/hadrill/hadrill/internal/plan"
)

// TestPlanOutput: plan's text and JSON (golden) for a Galera cluster
// behind a load balancer and an auto-failover primary with a load
// balancer pair; it creates nothing in the home.
func TestPlanOutput(t *testing.T) {
	home := t.TempDir()
	for _, c := range []struct{ name, preset, output string }{
		{"plan-galera3.txt", "galera3", "text"},
		{"plan-semisync.txt", "semisync", "text"},
		{"plan-galera3.json", "galera3", "json"},
	} {
		out, errs, code := run(t, &app{facts: fixedFacts}, "--home", home, "plan", "--preset", c.preset, "-o", c.output)
		if code != 0 {
			t.Errorf("plan --preset %s: exit %d\n%s", c.preset, code, errs)
			continue
		}
		golden.Check(t, c.name, []byte(strings.ReplaceAll(out, home, "HOME")))
	}
	if left := entries(t, home); len(left) > 0 {
		t.Errorf("plan wrote into the home: %v", left)
	}
}

// fixedFacts are a computer's facts as a plan reads them: a root user
// on 2 CPUs and 24 GiB with cgroups, the Debian Galera library.
func fixedFacts() plan.Facts {
	return plan.Facts{Root: true, MemBytes: 24 << 30, CPUs: 2, User: "root", GaleraLib: "/usr/lib/galera/libgalera_smm.so",
		Cgroups: map[string]string{"cpu": "/sys/fs/cgroup/cpu", "cpuset": "/sys/fs/cgroup/cpuset", "memory": "/sys/fs/cgroup/memory", "blkio": "/sys/fs/cgroup/blkio", "freezer": "/sys/fs/cgroup/freezer"}}
}

// entries are the names in a directory.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range des {
		out = append(out, d.Name())
	}
	return out
}

// TestStudyList: study list's text (golden): every embedded study, its
// variants and title, whether it runs here and on remote machines, and
// why not where it does not.
func TestStudyList(t *testing.T) {
	out, errs, code := hadrill(t, "study", "list")
	if code != 0 {
		t.Fatalf("study list: exit %d\n%s", code, errs)
	}
	golden.Check(t, "study-list.txt", []byte(out))
}
