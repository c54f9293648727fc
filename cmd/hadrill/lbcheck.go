package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/lb"
)

// lbCheckCmd is the health check keepalived runs on each host of a load
// balancer pair: exit 0 when the host's proxy answers on its admin socket,
// 1 otherwise (the virtual IP then moves). With --watch it keeps asking
// every 50 ms for that long and fails at the first silence (lb.Watch).
func lbCheckCmd() *cobra.Command {
	var socket, kind string
	var watch time.Duration
	c := &cobra.Command{
		Use:    "lb-check [--kind haproxy] --socket ADMIN_SOCKET",
		Short:  "Exit 0 when the proxy of this admin socket answers (keepalived's check on a load balancer pair)",
		Hidden: true,
		Args:   args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var problems []string
			if socket == "" {
				problems = append(problems, "--socket: required (the proxy's admin socket)")
			}
			if watch < 0 || watch > time.Minute {
				problems = append(problems, fmt.Sprintf("--watch: expected 0 to 1m, got %v", watch))
			}
			k, ok := lb.KindNamed(kind)
			if !ok {
				problems = append(problems, fmt.Sprintf("--kind: unknown proxy %q (known: %s)", kind, strings.Join(lb.KindNames(), ", ")))
			}
			if err := hderr.Users(problems); err != nil {
				return err
			}
			return lb.Watch(cmd.Context(), func(ctx context.Context) error { return k.Alive(ctx, socket) }, watch)
		},
	}
	c.Flags().StringVar(&socket, "socket", "", "the proxy's admin socket")
	c.Flags().StringVar(&kind, "kind", "haproxy", "the proxy's kind")
	c.Flags().DurationVar(&watch, "watch", 0, "keep checking every 50 ms for this long, failing at the first silence")
	return c
}
