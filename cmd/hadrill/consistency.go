package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hadrill/hadrill/internal/consistency"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/lab"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/workload"
)

func (cli *app) consistencyCmd() *cobra.Command {
	p := workload.HistoryParams{}
	var target, readTarget string
	var seconds int
	c := &cobra.Command{
		Use:   "consistency [--workload " + strings.Join(workload.HistoryWorkloads, "|") + "] [--time 30] [--clients 6] [--keys 10] [--target nodes|lb|NODE,...] [--read-target replicas|lb-balanced|NODE,...] [--sync-wait N] [--model M]",
		Short: "Run a history workload (" + strings.Join(workload.HistoryWorkloads, ", ") + ") from several clients, record its history and check it for anomalies (hadrill check)",
		Long:  consistencyLong(),
		Args:  args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var problems []error
			p.Time = time.Duration(seconds) * time.Second
			if seconds < 1 || seconds > 3600 { // said in the flag's unit, before a duration could overflow
				problems = append(problems, hderr.User("--time: expected 1 to 3600 seconds, got %d", seconds))
				p.Time = time.Second
			}
			if why := p.Problems(); len(why) > 0 {
				problems = append(problems, hderr.Users(why))
			}
			l, err := cli.benchLab()
			if err != nil {
				return hderr.Join(append(problems, err))
			}
			targets, names, err := resolveTargets(cmd.Context(), l, target)
			if err != nil {
				problems = append(problems, err)
			}
			readers, readNames, err := workload.ResolveReads(cmd.Context(), l, readTarget)
			if err != nil {
				problems = append(problems, err)
			}
			if len(problems) > 0 {
				return hderr.Join(problems)
			}
			p.Targets, p.ReadTargets = names, readNames
			return cli.runConsistency(cmd.Context(), l, targets, readers, p)
		},
	}
	f := c.Flags()
	f.IntVar(&seconds, "time", 30, "seconds the clients run")
	f.IntVar(&p.Clients, "clients", 6, "clients at once")
	f.IntVar(&p.Keys, "keys", 10, "keys the transactions share (bank: the accounts)")
	f.StringVar(&p.Workload, "workload", workload.HistoryName(""), workload.HistoryUsage())
	f.IntVar(&p.MaxOps, "max-ops", 4, "micro-operations a transaction at most")
	f.IntVar(&p.SyncWait, "sync-wait", -1, "each session's wsrep_sync_wait (-1: the server's own)")
	f.StringVar(&p.Model, "model", "strict-serializable", "the promise checked: "+strings.Join(consistency.Models, ", "))
	f.StringVar(&target, "target", plan.NodesAlias, "nodes (each database node directly, clients in turn), lb, or node and load balancer names")
	f.StringVar(&readTarget, "read-target", "", "where read-only transactions go, apart from the writes (half the transactions then only read): "+
		workload.ReadReplicas+" (every replica now, clients in turn), "+workload.ReadBalanced+" (the balanced load balancer's read port), or node and load balancer names")
	return c
}

// runConsistency runs the history workload, prints its check and fails
// (exit 5) when the history shows what the model forbids.
func (cli *app) runConsistency(ctx context.Context, l *lab.Lab, targets, readers []workload.Endpoint, p workload.HistoryParams) error {
	out, err := workload.Consistency(ctx, l, targets, readers, p, os.Args, cli.progressLog())
	if err != nil {
		return err
	}
	if err := cli.emit(out, func() {
		fmt.Printf("run %s: history %s\n", out.RunID, workload.HistoryFile)
		printCheck("of run "+out.RunID, out.Check)
	}); err != nil {
		return err
	}
	if err := interrupted(out.Interrupted, out.RunID); err != nil {
		return err
	}
	return out.Check.Err()
}

// resolveTargets are the endpoints a comma-separated list of nodes and
// load balancers names (nodes: every database node), with their names;
// every name that does not resolve is named at once.
func resolveTargets(ctx context.Context, l *lab.Lab, list string) ([]workload.Endpoint, []string, error) {
	names := strings.Split(list, ",")
	if list == plan.NodesAlias {
		names = l.Plan().NodeNames()
	}
	var targets []workload.Endpoint
	var problems []error
	for _, n := range names {
		e, err := workload.Resolve(ctx, l, n, "")
		if err != nil {
			problems = append(problems, err)
			continue
		}
		targets = append(targets, e)
	}
	return targets, names, hderr.Join(problems)
}

// consistencyLong is bench consistency's help, each workload's paragraph
// its registry's.
func consistencyLong() string {
	return `Clients run the workload's operations (--workload, default ` + workload.HistoryName("") + `), spread over the targets, one
each in turn (nodes: every database node directly). Every operation is recorded as invoked and then ok,
fail (the server refused or rolled it back) or info (the connection went while it committed: unknown),
in the run's history.jsonl, which is then checked against --model (hadrill check FILE checks it again).
--sync-wait sets each session's wsrep_sync_wait (Galera's causal reads).
` + reflow(workload.HistoryHelp(), 104) + `
With --read-target, half the transactions only read and go there, each client holding a session on its
writes' target and one on its reads' (a read/write split): the check then says, per node, how many reads
were stale (missed a write acknowledged before they began) and by how much, and names what the reads'
order shows (a long fork: two readers saw two writes in opposite orders). Exit 5 when the history shows
an anomaly the model forbids.`
}

// reflow fills each paragraph of s (its lines) to width columns.
func reflow(s string, width int) string {
	var out []string
	for _, para := range strings.Split(s, "\n\n") {
		line := ""
		var lines []string
		for _, w := range strings.Fields(para) {
			if line != "" && len(line)+1+len(w) > width {
				lines, line = append(lines, line), ""
			}
			if line != "" {
				line += " "
			}
			line += w
		}
		out = append(out, strings.Join(append(lines, line), "\n"))
	}
	return strings.Join(out, "\n")
}
