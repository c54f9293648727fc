package main

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hadrill/hadrill/internal/consistency"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/workload"
)

func (cli *app) checkCmd() *cobra.Command {
	var model string
	c := &cobra.Command{
		Use:   "check FILE [--model MODEL]",
		Short: "Check a history (" + strings.Join(historyFamilies(), ", ") + "; JSON Lines) for the anomalies a consistency model forbids",
		Long:  checkLong(),
		Args:  args(1, 1, "a history file"),
		RunE: func(cmd *cobra.Command, a []string) error {
			var problems []error
			if why := consistency.ModelProblem(model); why != "" {
				problems = append(problems, hderr.User("%s", why))
			}
			if st, err := os.Stat(a[0]); err != nil {
				problems = append(problems, hderr.User("FILE: %v", err))
			} else if st.IsDir() {
				problems = append(problems, hderr.User("FILE: %s is a directory, expected a history file", a[0]))
			}
			if len(problems) > 0 {
				return hderr.Join(problems)
			}
			res, err := checkFile(cmd.Context(), a[0], model)
			if err != nil {
				return err
			}
			if err := cli.emit(res, func() { printCheck(a[0], res) }); err != nil {
				return err
			}
			return res.Err()
		},
	}
	c.Flags().StringVar(&model, "model", "strict-serializable", "the promise checked: "+strings.Join(consistency.Models, ", "))
	return c
}

// checkMemory is the heap a check of a history of size bytes is held near
// (the collector works harder rather than let it grow past): three times
// the history, which its reading and its graph take at most when its keys
// are retired as the workloads' are, at least 768 MiB. Without it the heap
// grows to twice what is live: 1.4 GB for a million operations, 0.9 with
// it, at a few percent more time (GOMEMLIMIT, when set, wins).
func checkMemory(size int64) int64 { return max(768<<20, 3*size) }

// checkFile reads and checks a history; it gives up when ctx ends, even
// while the file will not open (a named pipe nobody writes) or read.
func checkFile(ctx context.Context, path, model string) (*consistency.Result, error) {
	type outcome struct {
		res *consistency.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		f, err := os.Open(path)
		if err != nil {
			done <- outcome{err: hderr.User("FILE: %v", err)}
			return
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil && os.Getenv("GOMEMLIMIT") == "" {
			debug.SetMemoryLimit(checkMemory(st.Size()))
		}
		ops, err := consistency.Read(f, workload.HistoryFamilies()...)
		if err != nil {
			done <- outcome{err: hderr.User("FILE %s: %v", path, err)}
			return
		}
		res, err := consistency.Check(ctx, ops, model)
		if err != nil && ctx.Err() == nil {
			err = hderr.User("FILE %s: %v", path, err)
		}
		done <- outcome{res, err}
	}()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case o := <-done:
		return o.res, o.err
	}
}

func printCheck(file string, r *consistency.Result) {
	fmt.Printf("history %s: %d operations, %d transactions committed, %d failed, %d unknown; checked as %s\n", file, r.Ops, r.OK, r.Fail, r.Info, r.Model)
	if r.Escaped > 0 {
		fmt.Printf("%d transactions were ended by the server before their commit without an error (their later statements ran outside them); recorded as of unknown outcome\n", r.Escaped)
	}
	fmt.Println(r.Verdict())
	if r.Own != nil {
		fmt.Println(r.Own.Of + ": " + r.Own.Text)
	}
	if len(r.Reads) > 0 {
		fmt.Println("reads (stale: missed a write acknowledged before they began; behind: at least the time since):")
		for _, f := range r.Reads {
			fmt.Println("  " + f.Text())
		}
	}
	for _, a := range r.Anomalies {
		verdict := "allowed by " + r.Model
		switch {
		case a.Forbidden:
			verdict = "forbidden"
		case slices.Contains(r.Undecided, a.Type):
			verdict = "undecided"
		}
		fmt.Printf("\n%s: %s (%s)\n  %s\n", a.Type, a.Counted(), verdict, a.Example)
	}
}

// historyFamilies are the names of the histories check reads.
func historyFamilies() []string {
	var out []string
	for _, f := range workload.HistoryFamilies() {
		out = append(out, f.Name())
	}
	return out
}

// checkLong is check's help: the history's shape, each workload's
// operations and what its checker finds, the exit statuses.
func checkLong() string {
	s := `Reads a history (one operation a line: {"index", "time" (ns), "process", "type": invoke|ok|fail|info,
"f", "node", "value"}), all of one workload's operations, and checks it against --model:
`
	for _, f := range workload.HistoryFamilies() {
		s += "\n" + f.Help() + "\n"
	}
	return s + `
Exits 0 when the history shows nothing the model forbids, 5 when it does, 1 when undecided (a cycle
search stopped at its bound) or interrupted, 2 for a history that is not in this shape.`
}
