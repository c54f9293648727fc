package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/stats"
	"github.com/hadrill/hadrill/internal/study"

	"github.com/spf13/cobra"

	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/workload/sysbench"
)

func runsCmd() *cobra.Command {
	c := &cobra.Command{Use: "runs", Short: "List and compare recorded runs"}
	c.AddCommand(&cobra.Command{
		Use: "list", Short: "List the runs in the run store", Args: args(0, 0, "no arguments"),
		RunE: func(*cobra.Command, []string) error {
			h, err := home()
			if err != nil {
				return err
			}
			var runs []*results.Run
			for _, id := range results.List(h) {
				if r, err := results.Load(h, id); err == nil {
					r.Configs, r.Topology, r.Results = nil, nil, nil
					runs = append(runs, r)
				}
			}
			return emit(runs, func() {
				w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, "RUN\tKIND\tLAB\tSTARTED\tSECONDS\tNOTE")
				for _, r := range runs {
					note := ""
					if r.Interrupted {
						note = "interrupted: partial"
					}
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%.0f\t%s\n", r.ID, r.Kind, r.Lab, r.Started.Format("2006-01-02 15:04:05"),
						r.Finished.Sub(r.Started).Seconds(), note)
				}
				w.Flush()
			})
		},
	}, &cobra.Command{
		Use: "compare RUN_ID...", Short: "Compare sysbench runs side by side (TPS with its spread over runs, p95/p99, the change against the first run)",
		Args: args(1, -1, "one or more run ids"),
		RunE: func(_ *cobra.Command, ids []string) error {
			h, err := home()
			if err != nil {
				return err
			}
			var cols []column
			var problems []error
			var runs []*results.Run
			for _, id := range ids {
				r, err := results.Load(h, id)
				if err != nil {
					problems = append(problems, err)
					continue
				}
				if r.Kind != results.Sysbench {
					problems = append(problems, hderr.User("RUN_ID: %s is a %s run; runs compare sets sysbench runs side by side (a study compares any step between set-ups: hadrill study)", id, r.Kind))
					continue
				}
				runs = append(runs, r)
				var pts []sysbench.Point
				_ = json.Unmarshal(r.Results, &pts)
				col := column{ID: id, Spread: map[int]stats.Spread{}}
				for i := range pts {
					var tps []float64
					for _, run := range pts[i].Runs {
						tps = append(tps, run.TPS)
					}
					if len(tps) == 0 {
						tps = []float64{pts[i].TPS}
					}
					col.Spread[pts[i].Threads] = stats.SpreadOf(tps)
					pts[i].Runs = nil
				}
				col.Points = pts
				cols = append(cols, col)
			}
			if len(problems) > 0 {
				return hderr.Join(problems)
			}
			for i := 1; i < len(cols); i++ { // against the first run
				cols[i].Delta = map[int]stats.Delta{}
				for threads, sp := range cols[i].Spread {
					if base, ok := cols[0].Spread[threads]; ok {
						cols[i].Delta[threads] = stats.Compare(sp, base)
					}
				}
			}
			return emit(cols, func() {
				w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
				fmt.Fprint(w, "threads\t")
				for i, c := range cols {
					fmt.Fprintf(w, "%s tps\truns (min–max)\tp95\tp99\t", c.ID)
					if i > 0 {
						fmt.Fprint(w, "vs first\t")
					}
				}
				fmt.Fprintln(w)
				var lists [][]sysbench.Point
				for _, c := range cols {
					lists = append(lists, c.Points)
				}
				for _, threads := range sysbench.ThreadCounts(lists...) {
					fmt.Fprintf(w, "%d\t", threads)
					for i, c := range cols {
						if pt, ok := pointAt(c.Points, threads); ok {
							sp := c.Spread[threads]
							fmt.Fprintf(w, "%.1f\t%d (%.1f–%.1f)\t%.2f\t%.2f\t", pt.TPS, sp.N, sp.Min, sp.Max, pt.P95, pt.P99)
						} else {
							fmt.Fprint(w, "-\t-\t-\t-\t")
						}
						if i > 0 {
							if d, ok := c.Delta[threads]; !ok {
								fmt.Fprint(w, "-\t")
							} else if d.Unknown {
								fmt.Fprintf(w, "%+.1f %% (1 run: noise unknown)\t", d.Percent)
							} else if d.WithinNoise {
								fmt.Fprintf(w, "%+.1f %% (noise)\t", d.Percent)
							} else {
								fmt.Fprintf(w, "%+.1f %%\t", d.Percent)
							}
						}
					}
					fmt.Fprintln(w)
				}
				w.Flush()
				if len(cols) > 1 {
					fmt.Println("vs first: the change of the median TPS against the first run's; (noise) unless Welch's t-test on their runs calls it a difference (at most 5 % of the time for runs that do not differ; record --runs 3 or more)")
					printRunDifferences(runs)
				}
			})
		},
	})
	return c
}

// printRunDifferences lists what differs between the runs: the first
// database node's settings, the tools' versions, the load's parameters.
func printRunDifferences(runs []*results.Run) {
	cnf, vers, params := map[string]map[string]string{}, map[string]map[string]string{}, map[string]map[string]string{}
	for _, r := range runs {
		var names []string
		for name := range r.Configs {
			if strings.HasSuffix(name, "/my.cnf") {
				names = append(names, name)
			}
		}
		sort.Strings(names)
		if len(names) > 0 {
			cnf[r.ID] = study.Settings(r.Configs[names[0]], r.Lab)
		}
		vers[r.ID] = r.Versions
		var p map[string]any
		b, _ := json.Marshal(r.Params)
		_ = json.Unmarshal(b, &p)
		params[r.ID] = map[string]string{}
		for k, v := range p {
			params[r.ID][k] = fmt.Sprint(v)
		}
	}
	for _, part := range []struct {
		what  string
		diffs []study.Difference
	}{{"setting (first database node's my.cnf)", study.Differences(cnf)}, {"tool version", study.Differences(vers)}, {"load parameter", study.Differences(params)}} {
		if len(part.diffs) == 0 {
			continue
		}
		fmt.Printf("\nwhat differs, %s:\n", part.what)
		w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprint(w, "\t")
		for _, r := range runs {
			fmt.Fprintf(w, "%s\t", r.ID)
		}
		fmt.Fprintln(w)
		for _, d := range part.diffs {
			fmt.Fprintf(w, "%s\t", d.Setting)
			for _, r := range runs {
				fmt.Fprintf(w, "%s\t", cmp.Or(d.Values[r.ID], "-"))
			}
			fmt.Fprintln(w)
		}
		w.Flush()
	}
}

func pointAt(pts []sysbench.Point, threads int) (sysbench.Point, bool) {
	for _, p := range pts {
		if p.Threads == threads {
			return p, true
		}
	}
	return sysbench.Point{}, false
}

// column is one run in a comparison: its points, the spread of each
// point's runs (TPS) and, after the first, the change against the first.
type column struct {
	ID     string               `json:"run_id"`
	Points []sysbench.Point     `json:"results"`
	Spread map[int]stats.Spread `json:"tps_spread"`
	Delta  map[int]stats.Delta  `json:"tps_vs_first,omitempty"`
}
