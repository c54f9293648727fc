package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/plan"
)

// Daemon is a node's health agent: `exe agent` on the node's host (exe is
// hadrill's binary there), answering on the node's address.
func Daemon(p *plan.Plan, n *plan.Node, exe string) host.Daemon {
	argv := []string{exe, "agent", "--node", n.Name, "--listen", fmt.Sprintf("%s:%d", n.Address, n.AgentPort),
		"--socket", n.Socket, "--user", plan.CheckUser, "--password-file", n.CheckSecret,
		"--drain-file", n.DrainFile, "--pid-file", n.PidFile, "--server-marker", n.Server.Marker}
	if n.DeposedFile != "" {
		argv = append(argv, "--deposed-file", n.DeposedFile)
	}
	if n.AvailableWhenDonor {
		argv = append(argv, "--available-when-donor")
	}
	return n.Agent.Named(n.Name+" agent", argv)
}

// Start starts a node's health agent on its host when it does not run,
// and waits until it listens.
func Start(ctx context.Context, h host.Host, p *plan.Plan, n *plan.Node) error {
	addr := fmt.Sprintf("%s:%d", n.Address, n.AgentPort)
	return host.EnsureReady(ctx, h, Daemon(p, n, h.Exe()), 10*time.Second, 20*time.Millisecond, host.Listens(h, addr))
}

// Drain takes a node out of load balancing (drain) or back in: while its
// drain file exists on its host, its agent answers 503.
func Drain(ctx context.Context, h host.Host, n *plan.Node, drain bool) error {
	return host.Mark(ctx, h, n.DrainFile, drain)
}

// Drained reports whether a node is drained.
func Drained(ctx context.Context, h host.Host, n *plan.Node) bool {
	_, err := h.ReadFile(ctx, n.DrainFile)
	return err == nil
}
