package main

import (
	"encoding/json"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/hadrill/hadrill/internal/drill"
)

// failover: kill -9 of the node taking writes through the load balancer,
// under the drill's open-loop writer (a new connection per write), with
// Galera's stock failure detection and with the galera3 preset's fast one.
// It runs the real command, `hadrill drill failover -o json`, so the gap is
// the drill's own (the longest span between acknowledgements after the
// kill) and the audit is the drill's.
func failover(bin string, runs int) {
	stock := failoverVariant(bin, runs, "stock")
	fast := failoverVariant(bin, runs, "fast")
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "scenario\tfailure_detection\truns\tgap median s\tmin s\tmax s\tmissing acked\tratio\t")
	for _, r := range []failoverResult{stock, fast} {
		fmt.Fprintf(w, "failover\t%s\t%d\t%.3f\t%.3f\t%.3f\t%d\t%.2f\t\n", r.detection, runs, median(r.gaps), minf(r.gaps), maxf(r.gaps),
			r.missing, median(r.gaps)/median(fast.gaps))
	}
	w.Flush()
	fmt.Printf("\ntarget (galera3, fast): gap median ≤ 1.000 s: %v; 0 acknowledged writes missing in all runs: %v\n",
		median(fast.gaps) <= 1, stock.missing+fast.missing == 0)
}

type failoverResult struct {
	detection string
	gaps      []float64
	missing   int
}

func failoverVariant(bin string, runs int, detection string) failoverResult {
	spec := tempSpec("clusters:\n  - name: db\n    nodes: 3\n    failure_detection: " + detection +
		"\nload_balancers:\n  - name: lb\n    cluster: db\n")
	name := "bf" + detection
	_, home := scratchLab(bin, name, "-f", spec)
	defer runCleanups()
	res := failoverResult{detection: detection}
	for trial := 1; trial <= runs; trial++ {
		var r struct {
			Targets     []string                  `json:"targets"`
			Gap         struct{ Seconds float64 } `json:"client_gap"`
			WritesAcked int                       `json:"writes_acked"`
			WritesFail  int                       `json:"writes_failed"`
			LostCount   int                       `json:"lost_count"`
			Verdict     string                    `json:"verdict"`
		}
		out, _ := runAllowFail(bin, "--home", home, "--name", name, "drill", drill.Failover, "--before", "2s", "--after", "1s", "-o", "json")
		check(json.Unmarshal([]byte(out), &r))
		res.missing += r.LostCount
		res.gaps = append(res.gaps, r.Gap.Seconds)
		fmt.Fprintf(os.Stderr, "failover (%s) trial %d/%d: killed %v, gap %.3fs, %d acknowledged, %d failed, %d acknowledged writes missing (%s)\n",
			detection, trial, runs, r.Targets, r.Gap.Seconds, r.WritesAcked, r.WritesFail, r.LostCount, r.Verdict)
	}
	return res
}
