package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/hadrill/hadrill/internal/lab"
	"github.com/hadrill/hadrill/internal/status"
)

func (cli *app) statusCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "status [--name LAB]",
		Short: "Show every node's state (Galera: Synced, Donor/Desynced, Joining, ...) and the lab's hosts",
		Args:  args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := cli.openLab()
			if err != nil {
				return err
			}
			st := l.StatusOver(cmd.Context(), lab.CPUWindow)
			return cli.emit(st, func() { printStatus(st) })
		},
	}
}

func printStatus(st status.Status) { status.Text(os.Stdout, st) }
