package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/hadrill/hadrill/internal/lab"
	"github.com/hadrill/hadrill/internal/state"
)

func (cli *app) downCmd() *cobra.Command {
	var keep, all bool
	c := &cobra.Command{
		Use:   "down [--name LAB | --all] [--keep-data]",
		Short: "Remove a lab: processes, namespaces and files (idempotent)",
		Args:  args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, err := cli.home()
			if err != nil {
				return err
			}
			names := []string{cli.labFlag}
			switch {
			case all:
				names = state.List(h)
			case cli.labFlag == "":
				n, err := cli.labName()
				if err != nil {
					return err
				}
				names = []string{n}
			}
			for _, n := range names {
				if err := lab.Down(cmd.Context(), h, n, keep, cli.wait, os.Stderr); err != nil {
					return err
				}
			}
			return cli.emit(map[string]any{"removed": !keep, "labs": names}, func() {})
		},
	}
	c.Flags().BoolVar(&keep, "keep-data", false, "stop cleanly and keep the datadirs (`hadrill up --name LAB` starts it again)")
	c.Flags().BoolVar(&all, "all", false, "every lab in the home")
	return c
}
