package main

import (
	"encoding/json"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/hadrill/hadrill/internal/drill"
)

// drills: the four drills on the durable and the relaxed profile (galera3
// with fast failure detection behind its load balancer, 100 writes/s):
// client-visible gap, time to writes and to all Synced, acknowledged
// writes lost. Drills are long, so at most 2 rounds.
func drills(bin string, runs int) {
	runs = min(runs, 2)
	type row struct {
		profile, scenario  string
		gap, back, synced  []float64
		lost, acked, fails int
	}
	var rows []*row
	for _, profile := range []string{"durable", "relaxed"} {
		spec := tempSpec("clusters:\n  - name: db\n    nodes: 3\n    profile: " + profile +
			"\n    failure_detection: fast\nload_balancers:\n  - name: lb\n    cluster: db\n")
		name := "bd" + profile[:3]
		_, home := scratchLab(bin, name, "-f", spec)
		for _, sc := range []string{drill.Failover, drill.Partition, drill.RollingRestart, drill.FullOutage} {
			r := &row{profile: profile, scenario: sc}
			rows = append(rows, r)
			for i := 1; i <= runs; i++ {
				var res struct {
					Gap         struct{ Seconds float64 } `json:"client_gap"`
					WritesBackS *float64                  `json:"writes_back_s"`
					SyncedS     *float64                  `json:"synced_s"`
					LostCount   int                       `json:"lost_count"`
					WritesAcked int                       `json:"writes_acked"`
					Passed      bool                      `json:"passed"`
				}
				out, _ := runAllowFail(bin, "--home", home, "--name", name, "drill", sc, "-o", "json")
				check(json.Unmarshal([]byte(out), &res))
				r.gap = append(r.gap, res.Gap.Seconds)
				if res.WritesBackS != nil {
					r.back = append(r.back, *res.WritesBackS)
				}
				if res.SyncedS != nil {
					r.synced = append(r.synced, *res.SyncedS)
				}
				r.lost += res.LostCount
				r.acked += res.WritesAcked
				if !res.Passed {
					r.fails++
				}
				fmt.Fprintf(os.Stderr, "drill %s (%s) %d/%d: gap %.2fs, %d acknowledged, %d lost\n", sc, profile, i, runs, res.Gap.Seconds, res.WritesAcked, res.LostCount)
			}
		}
		runCleanups()
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "scenario\tprofile\tdrill\truns\tgap median s\twrites back s\tall Synced s\tacked\tlost acked\tfailed drills\t")
	durableLost := 0
	for _, r := range rows {
		fmt.Fprintf(w, "drill\t%s\t%s\t%d\t%.3f\t%s\t%s\t%d\t%d\t%d\t\n", r.profile, r.scenario, len(r.gap), median(r.gap), med(r.back), med(r.synced), r.acked, r.lost, r.fails)
		if r.profile == "durable" {
			durableLost += r.lost
		}
		if r.profile == "durable" && r.scenario == drill.FullOutage && len(r.back) > 0 {
			defer fmt.Printf("target: full outage → writes through the LB ≤ 15 s: %v (%.2f s)\n", median(r.back) <= 15, median(r.back))
		}
	}
	w.Flush()
	fmt.Printf("\ntarget: durable profile loses 0 acknowledged writes in all drills: %v (%d lost)\n", durableLost == 0, durableLost)
}

func med(v []float64) string {
	if len(v) == 0 {
		return "never"
	}
	return fmt.Sprintf("%.2f", median(v))
}
