package main

import (
	"encoding/json"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/hadrill/hadrill/internal/hderr"

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
		Use: "compare RUN_ID...", Short: "Compare sysbench runs side by side (TPS and p95/p99 per thread count)",
		Args: args(1, -1, "one or more run ids"),
		RunE: func(_ *cobra.Command, ids []string) error {
			h, err := home()
			if err != nil {
				return err
			}
			var cols []column
			var problems []error
			for _, id := range ids {
				r, err := results.Load(h, id)
				if err != nil {
					problems = append(problems, err)
					continue
				}
				var pts []sysbench.Point
				_ = json.Unmarshal(r.Results, &pts)
				for i := range pts {
					pts[i].Runs = nil
				}
				cols = append(cols, column{ID: id, Points: pts})
			}
			if len(problems) > 0 {
				return hderr.Join(problems)
			}
			return emit(cols, func() {
				w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
				fmt.Fprint(w, "threads\t")
				for _, c := range cols {
					fmt.Fprintf(w, "%s tps\tp95\tp99\t", c.ID)
				}
				fmt.Fprintln(w)
				var lists [][]sysbench.Point
				for _, c := range cols {
					lists = append(lists, c.Points)
				}
				for _, threads := range sysbench.ThreadCounts(lists...) {
					fmt.Fprintf(w, "%d\t", threads)
					for _, c := range cols {
						if pt, ok := pointAt(c.Points, threads); ok {
							fmt.Fprintf(w, "%.1f\t%.2f\t%.2f\t", pt.TPS, pt.P95, pt.P99)
						} else {
							fmt.Fprint(w, "-\t-\t-\t")
						}
					}
					fmt.Fprintln(w)
				}
				w.Flush()
			})
		},
	})
	return c
}

func pointAt(pts []sysbench.Point, threads int) (sysbench.Point, bool) {
	for _, p := range pts {
		if p.Threads == threads {
			return p, true
		}
	}
	return sysbench.Point{}, false
}

// column is one run in a comparison.
type column struct {
	ID     string           `json:"run_id"`
	Points []sysbench.Point `json:"results"`
}
