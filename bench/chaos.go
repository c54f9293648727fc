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
// kind: galera3 with fast failure detection drawing the process, network
// and clock faults, then a galera of two regions 10 ms apart on emulated
// volumes drawing the machine, disk and packet faults; short holds. A step's start against its plan (late: the step before took
// longer to heal than the wait), its hold against the schedule's (from
// the fault applied to the heal begun), and the heal's own time (every
// server started again, the cluster settled), which is what makes the
// next step late.
func chaos(bin string, runs int) {
	runs = min(runs, 2)
	rows := map[string]*chaosRow{}
	var tally chaosTally
	spec := tempSpec("clusters:\n  - name: db\n    nodes: 3\n    failure_detection: fast\nload_balancers:\n  - name: lb\n    cluster: db\n")
	_, home := scratchLab(bin, "bchaos", "-f", spec)
	chaosRuns(bin, home, "bchaos", "kill,pause,crash,partition-one,partition-minority,partition-ring,partition-bridge,partition-primary,one-way,clock,clock-strobe", 40, runs, rows, &tally)
	runCleanups()
	// the machine, disk and packet faults: two regions 10 ms apart, the
	// nodes on emulated volumes
	spec = tempSpec("regions: [{name: east}, {name: west}]\nlinks: [{between: [east, west], rtt: 10ms}]\n" +
		"clusters:\n  - name: db\n    nodes: 3\n    regions: [east, west]\n    failure_detection: fast\n    storage:\n      volumes:\n        - {name: data, disk: local}\n" +
		"load_balancers:\n  - name: lb\n    cluster: db\n    region: east\nclient: {name: client, region: east}\n")
	_, home = scratchLab(bin, "bchaosm", "-f", spec)
	chaosRuns(bin, home, "bchaosm", "cpu,memory,disk,packets", 60, runs, rows, &tally)
	late, skipped, steps := tally.late, tally.skipped, tally.steps
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

type chaosRow struct{ start, holdErr, heal []float64 }

type chaosTally struct{ late, skipped, steps int }

// chaosRuns runs a chaos drill of 90 s for each of runs seeds from seed
// on a lab, drawing from faults, and adds each step to its kind's row.
func chaosRuns(bin, home, lab, faults string, seed, runs int, rows map[string]*chaosRow, tally *chaosTally) {
	for i := 1; i <= runs; i++ {
		var res struct {
			Schedule struct {
				Steps []struct {
					Hold   float64 `json:"hold_s"`
					Events []struct {
						Kind   string `json:"kind"`
						Packet string `json:"packet"`
						Disk   string `json:"disk"`
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
		out, _ := runAllowFail(bin, "--home", home, "--name", lab, "drill", "chaos", "--seed", fmt.Sprint(seed+i), "--duration", "90s",
			"--hold", "3s", "--interval", "2s", "--faults", faults, "--rate", "20", "--before", "1s", "--after", "1s", "-o", "json")
		check(json.Unmarshal([]byte(out), &res))
		for j, a := range res.Applied {
			if j >= len(res.Schedule.Steps) {
				break
			}
			st := res.Schedule.Steps[j]
			var kinds []string
			for _, e := range st.Events {
				k := e.Kind
				if e.Packet != "" {
					k += " " + e.Packet
				}
				if e.Disk != "" {
					k += " " + e.Disk
				}
				if !slices.Contains(kinds, k) {
					kinds = append(kinds, k)
				}
			}
			k := strings.Join(kinds, "+")
			r := rows[k]
			if r == nil {
				r = &chaosRow{}
				rows[k] = r
			}
			r.start = append(r.start, a.AtS-a.PlanS)
			r.holdErr = append(r.holdErr, a.HealS-a.AtS-st.Hold)
			r.heal = append(r.heal, a.HealedS-a.HealS)
			tally.steps++
			if a.LateS > 0 {
				tally.late++
			}
			tally.skipped += len(a.Skipped)
		}
		fmt.Fprintf(os.Stderr, "chaos %s %d/%d: %d steps applied\n", lab, i, runs, len(res.Applied))
	}
}
