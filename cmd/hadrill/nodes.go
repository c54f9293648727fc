package main

import (
	"github.com/spf13/cobra"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/lab"
)

// nodeCmd builds start, stop and restart: NODE... or --all.
func nodeCmd(verb string) *cobra.Command {
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
			l, err := openLab()
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
			return emit(st, func() { printStatus(st) })
		},
	}
	c.Flags().BoolVar(&all, "all", false, "every node of the lab")
	return c
}
