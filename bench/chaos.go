package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
)

// chaos: how precisely a chaos drill applies its schedule, per fault
// kind: galera3 with fast failure detection, every kind drawn, short
// holds. A step's start against its plan (late: the step before took
// longer to heal than the wait), its hold against the schedule's (from
// the fault applied to the heal begun), and the heal's own time (every
// server started again, the cluster settled), which is what makes the
// next step late.
func chaos(bin string, runs int) {
	runs = min(runs, 2)
	spec := tempSpec("clusters:\n  - name: db\n    nodes: 3\n    failure_detection: fast\nload_balancers:\n  - name: lb\n    cluster: db\n")
	_, home := scratchLab(bin, "bchaos", "-f", spec)
	type row struct{ start, holdErr, heal []float64 }
	rows := map[string]*row{}
	late, skipped, steps := 0, 0, 0
	for i := 1; i <= runs; i++ {
		var res struct {
			Schedule struct {
				Steps []struct {
					Hold   float64 `json:"hold_s"`
					Events []struct {
						Kind string `json:"kind"`
					} `json:"events"`
				} `json:"steps"`
			} `json:"schedule"`
			Applied []struct {
				PlanS   float64  `json:"plan_s"`
				AtS     float64  `json:"at_s"`
				HealS   float64  `json:"heal_s"`
				HealedS float64  `json:"healed_s"`
				LateS   float64  `json:"late_s"`
				Skipped []string `json:"skipped"`
			} `json:"applied"`
		}
		out, _ := runAllowFail(bin, "--home", home, "--name", "bchaos", "drill", "chaos", "--seed", fmt.Sprint(40+i), "--duration", "90s",
			"--hold", "3s", "--interval", "2s", "--faults", "kill,pause,crash,partition-one,partition-minority,partition-ring,partition-bridge,one-way,clock",
			"--rate", "20", "--before", "1s", "--after", "1s", "-o", "json")
		check(json.Unmarshal([]byte(out), &res))
		for j, a := range res.Applied {
			if j >= len(res.Schedule.Steps) {
				break
			}
			st := res.Schedule.Steps[j]
			var kinds []string
			for _, e := range st.Events {
				if !slices.Contains(kinds, e.Kind) {
					kinds = append(kinds, e.Kind)
				}
			}
			k := strings.Join(kinds, "+")
			r := rows[k]
			if r == nil {
				r = &row{}
				rows[k] = r
			}
			r.start = append(r.start, a.AtS-a.PlanS)
			r.holdErr = append(r.holdErr, a.HealS-a.AtS-st.Hold)
			r.heal = append(r.heal, a.HealedS-a.HealS)
			steps++
			if a.LateS > 0 {
				late++
			}
			skipped += len(a.Skipped)
		}
		fmt.Fprintf(os.Stderr, "chaos %d/%d: %d steps applied\n", i, runs, len(res.Applied))
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "scenario\tfault\tsteps\tstart − plan median s\tmax s\thold error median s\tmax s\theal median s\tmax s\t")
	kinds := make([]string, 0, len(rows))
	for k := range rows {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	var holdErr []float64
	for _, k := range kinds {
		r := rows[k]
		holdErr = append(holdErr, r.holdErr...)
		fmt.Fprintf(w, "chaos\t%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.2f\t%.2f\t\n", k, len(r.start), median(r.start), maxf(r.start), median(r.holdErr), maxf(r.holdErr), median(r.heal), maxf(r.heal))
	}
	w.Flush()
	if steps == 0 {
		fail("chaos: no step applied")
	}
	fmt.Printf("\n%d steps, %d began late (the heal before outlasted the wait), %d faults skipped (a node still coming back)\n", steps, late, skipped)
	fmt.Printf("target: a step's hold within 0.1 s of the schedule's (median of every step): %v (%.3f s)\n", abs(median(holdErr)) <= 0.1, median(holdErr))
}
