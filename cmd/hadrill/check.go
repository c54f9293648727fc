package main

import (
	"fmt"
	"os"
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
		Short: "Check a transactional history (list-append or bank, JSON Lines) for the anomalies a consistency model forbids",
		Long: `Reads a history (one operation a line: {"index", "time" (ns), "process", "type": invoke|ok|fail|info,
"f": "txn", "node", "value": [["append", KEY, VALUE], ["r", KEY, LIST]]}), infers each key's order of
versions from the reads, builds the transactions' dependency graph (ww, wr, rw; the clients' process
and real-time order), and names what it finds: G0, G1a, G1b, G1c, G-single, G2-item and their -process
and -realtime forms, lost-update, lost, internal, non-repeatable-read, incompatible-order, duplicate-elements, garbage-read,
each with a count and its smallest example in words. A bank history (f: init, with the opening balances
as {"ACCOUNT": BALANCE}; transfer, {"from", "to", "amount"}; read, the balances seen) is checked for
committed reads whose total differs from the opening one (wrong-total) or that see a balance below zero
(negative-value), forbidden under every model. Exits 0 when the history shows nothing the model
forbids, 5 when it does.`,
		Args: args(1, 1, "a history file"),
		RunE: func(_ *cobra.Command, a []string) error {
			var problems []error
			if err := modelProblem(model); err != nil {
				problems = append(problems, err)
			}
			f, err := os.Open(a[0])
			if err != nil {
				problems = append(problems, hderr.User("FILE: %v", err))
			}
			if len(problems) > 0 {
				return hderr.Join(problems)
			}
			defer f.Close()
			ops, err := consistency.Read(f)
			if err != nil {
				return hderr.User("FILE %s: %v", a[0], err)
			}
			res, err := consistency.Check(ops, model)
			if err != nil {
				return hderr.User("FILE %s: %v", a[0], err)
			}
			if err := cli.emit(res, func() { printCheck(a[0], res) }); err != nil {
				return err
			}
			if !res.Valid {
				return &consistency.Invalid{Result: res}
			}
			return nil
		},
	}
	c.Flags().StringVar(&model, "model", "strict-serializable", "the promise checked: "+strings.Join(consistency.Models, ", "))
	return c
}

// modelProblem refuses a --model that is not one of the checker's models.
func modelProblem(model string) error {
	if slices.Contains(consistency.Models, model) {
		return nil
	}
	return hderr.User("--model: expected one of %s, got %q", strings.Join(consistency.Models, ", "), model)
}

func printCheck(file string, r *consistency.Result) {
	fmt.Printf("history %s: %d operations, %d transactions committed, %d failed, %d unknown; checked as %s\n", file, r.Ops, r.OK, r.Fail, r.Info, r.Model)
	if r.Escaped > 0 {
		fmt.Printf("%d transactions were ended by the server before their commit without an error (their later statements ran outside them); recorded as of unknown outcome\n", r.Escaped)
	}
	if r.Valid {
		fmt.Printf("valid: nothing %s forbids\n", r.Model)
	} else {
		fmt.Printf("not %s: %s\n", r.Model, strings.Join(r.Forbidden, ", "))
	}
	for _, a := range r.Anomalies {
		verdict := "allowed by " + r.Model
		if a.Forbidden {
			verdict = "forbidden"
		}
		fmt.Printf("\n%s ×%d (%s)\n  %s\n", a.Type, a.Count, verdict, a.Example)
	}
}
