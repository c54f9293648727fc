package study

import (
	"strings"
	"testing"

	"github.com/hadrill/hadrill/internal/infra/machine"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/results"
)

// TestSaturated: what a variant's runs measured at a limit is said over
// every round, with its mean share in the rounds that reached it; a limit
// one round reached is never given as the variant's whole story.
func TestSaturated(t *testing.T) {
	d1 := &plan.Machine{Name: "d1", CPUs: 1}
	run := func(db3AtCap, diskAtCap float64, used float64) *results.Run {
		return &results.Run{Host: map[string]string{"cpus": "2"}, Hosts: []machine.Summary{
			{Host: "db1", Machine: d1, CPUMean: used / 2},
			{Host: "db3", Machine: d1, CPUMean: used / 2, AtCap: db3AtCap,
				Disks: []machine.DiskSummary{{Volume: "data", IOPSCap: 500, AtCap: diskAtCap}}},
		}}
	}
	got := Saturated("Galera", []*results.Run{run(0.8, 0.1, 1.9), run(0.6, 0.7, 1.0), run(0.1, 0, 1.0)})
	want := []string{
		"Galera: db3 at its 1-CPU quota, 70 % of the run (in 2 of 3 rounds)",
		"Galera: the lab's hosts, the load generator among them, used the computer's cores, 95 % of its 2 cores (in 1 of 3 rounds)",
		"Galera: db3's data disk at its 500-IOPS cap, 70 % of the run (in 1 of 3 rounds)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := Saturated("Galera", []*results.Run{run(0.2, 0.1, 1.0)}); len(got) != 0 {
		t.Errorf("nothing at a limit: %v", got)
	}
}
