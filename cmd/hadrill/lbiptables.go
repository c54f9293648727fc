package main

import (
	"github.com/spf13/cobra"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/lb/iptables"
)

// lbIPTablesCmd is a load balancer instance of kind iptables on its host:
// the prober that rewrites the host's DNAT rules as its servers' health
// agents answer (hadrill starts it; SIGTERM takes its rules away).
func lbIPTablesCmd() *cobra.Command {
	var config string
	c := &cobra.Command{
		Use:    "lb-iptables --config FILE",
		Short:  "Run a load balancer instance of kind iptables: probe the servers, rewrite the host's DNAT rules (hadrill starts it)",
		Hidden: true,
		Args:   args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if config == "" {
				return hderr.User("--config: required (the instance's configuration file)")
			}
			c, err := iptables.Load(config)
			if err != nil {
				return hderr.User("--config: %v", err)
			}
			return iptables.Run(cmd.Context(), c, cmd.OutOrStdout())
		},
	}
	c.Flags().StringVar(&config, "config", "", "the instance's configuration file (JSON)")
	return c
}
