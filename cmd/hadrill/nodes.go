package main

import (
	"github.com/spf13/cobra"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/lab"
)

// nodeCmd builds start, stop and restart: NODE... or --all.
func (cli *app) nodeCmd(verb string) *cobra.Command {
	var all bool
	short := map[string]string{
		"start":   "Start nodes; a Galera node joins its running cluster, --all starts a stopped cluster safely",
		"stop":    "Stop nodes cleanly (a Galera node leaves its cluster)",
		"restart": "Restart nodes one at a time (rolling)",
	}[verb]
	c := &cobra.Command{
		Use:   verb + " NODE... | --all",
		Short: short,
		RunE: func(cmd *cobra.Command, names []string) error {
			if all == (len(names) > 0) {
				return hderr.User("%s: name one or more nodes, or give --all", verb)
			}
			l, err := cli.changeLab()
			if err != nil {
				return err
			}
			ops := map[string]func(*lab.Lab) error{
				"start":   func(l *lab.Lab) error { return l.Start(cmd.Context(), names) },
				"stop":    func(l *lab.Lab) error { return l.Stop(cmd.Context(), names) },
				"restart": func(l *lab.Lab) error { return l.Restart(cmd.Context(), names) },
			}
			if err := ops[verb](l); err != nil {
				return err
			}
			st := l.Status(cmd.Context())
			return cli.emit(st, func() { printStatus(st) })
		},
	}
	c.Flags().BoolVar(&all, "all", false, "every node of the lab")
	return c
}

func (cli *app) recoverCmd() *cobra.Command {
	var force string
	c := &cobra.Command{
		Use:   "recover [--force NODE]",
		Short: "Start a crashed lab: each Galera cluster restarts from its most advanced node, never blindly from the first",
		Long: `recover reads every node's grastate.dat, recovers the positions a crash left unknown
(mariadbd --wsrep-recover), and then either restarts the members together (they all kept
the same primary view or position) or bootstraps only the node with the highest seqno and
joins the rest. When it cannot decide safely it refuses and says why; --force NODE makes
NODE the one to bootstrap from (what only the other nodes committed is then lost).`,
		Args: args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := cli.changeLab()
			if err != nil {
				return err
			}
			if err := l.Recover(cmd.Context(), force); err != nil {
				return err
			}
			st := l.Status(cmd.Context())
			return cli.emit(st, func() { printStatus(st) })
		},
	}
	c.Flags().StringVar(&force, "force", "", "bootstrap from this node when hadrill refuses to choose")
	return c
}
