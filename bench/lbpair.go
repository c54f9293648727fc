package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"text/tabwriter"

	"github.com/hadrill/hadrill/internal/drill"
)

// lbPair: galera3 behind a load balancer pair (replicas: 2, durable
// profile, 100 writes/s through the virtual IP): the gap when the active
// host's HAProxy is killed and when the active host crashes, interleaved,
// and acknowledged writes lost (target: none; the gap well under a second).
func lbPair(bin string, runs int) {
	runs = min(runs, 5)
	spec := tempSpec("clusters:\n  - name: db\n    nodes: 3\n    profile: durable\n    failure_detection: fast\n" +
		"load_balancers:\n  - name: lb\n    cluster: db\n    replicas: 2\n")
	name := "bdlbp"
	_, home := scratchLab(bin, name, "-f", spec)
	gaps := map[string][]float64{}
	lost, fails := 0, 0
	for i := 1; i <= runs; i++ {
		for _, sc := range []string{drill.LBFailover, drill.LBCrash} {
			var res struct {
				Gap         struct{ Seconds float64 } `json:"client_gap"`
				LostCount   int                       `json:"lost_count"`
				WritesAcked int                       `json:"writes_acked"`
				Passed      bool                      `json:"passed"`
			}
			out, _ := runAllowFail(bin, "--home", home, "--name", name, "drill", sc, "--before", "2s", "--after", "1s", "-o", "json")
			check(json.Unmarshal([]byte(out), &res))
			gaps[sc] = append(gaps[sc], res.Gap.Seconds)
			lost += res.LostCount
			if !res.Passed {
				fails++
			}
			fmt.Fprintf(os.Stderr, "drill %s %d/%d: gap %.3fs, %d acknowledged, %d lost\n", sc, i, runs, res.Gap.Seconds, res.WritesAcked, res.LostCount)
		}
	}
	runCleanups()
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "scenario\tdrill\truns\tgap median s\tmin s\tmax s\t")
	for _, sc := range []string{drill.LBFailover, drill.LBCrash} {
		g := gaps[sc]
		fmt.Fprintf(w, "lbpair\t%s\t%d\t%.3f\t%.3f\t%.3f\t\n", sc, len(g), median(g), slices.Min(g), slices.Max(g))
	}
	w.Flush()
	fmt.Printf("\ntarget: no acknowledged write lost through the pair: %v (%d lost, %d drills failed)\n", lost == 0 && fails == 0, lost, fails)
	fmt.Printf("target: writes back through the same address within 1 s: %v (HAProxy killed %.2f s, host crashed %.2f s)\n",
		median(gaps[drill.LBFailover]) < 1 && median(gaps[drill.LBCrash]) < 1, median(gaps[drill.LBFailover]), median(gaps[drill.LBCrash]))
}
