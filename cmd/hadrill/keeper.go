package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hadrill/hadrill/internal/keeper"
)

func (cli *app) keeperCmd() *cobra.Command {
	var labDir string
	c := &cobra.Command{
		Use:    "keeper --name LAB",
		Short:  "Run a lab's keeper: heartbeats, DR channel re-pointing, automatic failover, binlog archiving (hadrill starts it)",
		Hidden: true,
		Args:   args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cli.daemon.Store(true) // SIGHUP is the daemon's own (reload), not an interruption
			l, err := cli.openLab()
			if err != nil {
				return err
			}
			log := keeper.Stamped(cmd.ErrOrStderr())
			fmt.Fprintf(log, "keeper for lab %s (%s)\n", l.Plan().Lab, labDir)
			repl := l.Replication()
			repl.Log = log
			k := &keeper.Keeper{Repl: repl, Log: log, Archive: l.Backups().Archive}
			return k.Run(cmd.Context())
		},
	}
	c.Flags().StringVar(&labDir, "lab-dir", "", "the lab's directory (identifies the process)")
	return c
}
