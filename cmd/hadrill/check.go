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
)

func (cli *app) checkCmd() *cobra.Command {
	var model string
	c := &cobra.Command{
		Use:   "check FILE [--model MODEL]",
		Short: "Check a history (list-append, bank or set, JSON Lines) for the anomalies a consistency model forbids",
		Long: `Reads a history (one operation a line: {"index", "time" (ns), "process", "type": invoke|ok|fail|info,
"f": "txn", "node", "value": [["append", KEY, VALUE], ["r", KEY, LIST]]}), infers each key's order of
versions from the reads, builds the transactions' dependency graph (ww, wr, rw; the clients' process
and real-time order), and names what it finds: G0, G1a, G1b, G1c, G-single, G2-item, G-nonadjacent
(long-fork the smallest) and their -process and -realtime forms, lost-update, lost, internal, non-repeatable-read, incompatible-order, duplicate-elements, garbage-read,
each with a count (of the reads or appends that show it, each counted once under the most severe type
it closes) and its smallest example in words. A bank history (f: init, with the opening balances
as {"ACCOUNT": BALANCE}; transfer, {"from", "to", "amount"}; read, the balances seen) is checked for
committed reads whose total differs from the opening one (wrong-total), that see a balance below zero
(negative-value) or other accounts than opened (unexpected-accounts), forbidden under every model.
A set history (f: add, the element; read-set, the elements read) gives each element's fate: stable,
lost (lost-element, forbidden under every model), never read after it was known, and how long reads
still missed it after it was known (stale-element, forbidden under strict serializability). List-append
and set histories also say, per node, how many reads were stale and how far behind.
Exits 0 when the history shows nothing the model forbids, 5 when it does, 1 when undecided (a cycle
search stopped at its bound) or interrupted, 2 for a history that is not in this shape.`,
		Args: args(1, 1, "a history file"),
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
		ops, err := consistency.Read(f)
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
	if r.Set != nil {
		fmt.Println("elements: " + r.Set.Text())
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
