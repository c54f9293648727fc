package main

import (
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/hadrill/hadrill/internal/lab"
)

func statusCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "status [--name LAB]",
		Short: "Show every node's state (Galera: Synced, Donor/Desynced, Joining, ...) and the lab's hosts",
		Args:  args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := openLab()
			if err != nil {
				return err
			}
			st := l.Status(cmd.Context())
			return emit(st, func() { printStatus(st) })
		},
	}
}

func openLab() (*lab.Lab, error) {
	name, err := labName()
	if err != nil {
		return nil, err
	}
	h, err := home()
	if err != nil {
		return nil, err
	}
	return lab.Open(h, name, os.Stderr)
}

func printStatus(st lab.Status) {
	fmt.Printf("lab %s (%s, %s, network %s)\n", st.Name, st.Status, st.Mode, st.Network)
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NODE\tCLUSTER\tROLE\tREGION\tADDRESS\tSTATE\tPID\tPROFILE")
	for _, n := range st.Nodes {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s:%d\t%s\t%d\t%s\n", n.Name, n.Cluster, n.Role, n.Region, n.Address, n.Port, n.State, n.Pid, n.Profile)
	}
	for _, lb := range st.LoadBalancers {
		fmt.Fprintf(w, "%s\t%s\tlb/%s\t\t%s:%d\t%s\t\t\n", lb.Name, lb.Cluster, lb.Mode, lb.Address, lb.Port, lb.State)
	}
	fmt.Fprintf(w, "%s\t\tclient\t\t%s\t\t\t\n", st.Client.Name, st.Client.Address)
	w.Flush()
}
