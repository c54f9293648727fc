package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/hadrill/hadrill/internal/buildinfo"
	"github.com/hadrill/hadrill/internal/host"
)

// hostCmd answers a controller that reached this host over SSH: one
// operation on the host's daemons or files, every path below --root.
func hostCmd() *cobra.Command {
	var root string
	c := &cobra.Command{
		Use:    "host --root DIR OPERATION [ARG...]",
		Short:  "Answer a controller on this host: " + host.Ops + " (hadrill runs it over SSH)",
		Hidden: true,
		RunE: func(_ *cobra.Command, a []string) error {
			err := host.Serve(root, buildinfo.Version, a, os.Stdin, os.Stdout)
			if errors.Is(err, os.ErrNotExist) { // a status of its own: the controller tells it apart
				fmt.Fprintln(os.Stderr, "hadrill: "+err.Error())
				os.Exit(host.ExitNotExist)
			}
			return err
		},
	}
	c.Flags().StringVar(&root, "root", "", "hadrill's directory on this host: every path must lie below it")
	c.Flags().SetInterspersed(false)
	return c
}
