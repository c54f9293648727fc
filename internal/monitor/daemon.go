// Package monitor runs the Prometheus exporters of a lab with monitoring on
// (node_exporter, mysqld_exporter, the proxy's own endpoint), scrapes them
// every second while a run is recorded, and turns what was scraped into
// OpenMetrics and into the report's Galera panels.
package monitor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/plan"
)

// Daemon is an exporter as a daemon on its host (a proxy's endpoint is not
// one: the proxy serves it).
func Daemon(e plan.Exporter) host.Daemon {
	return e.Daemon.Named(e.Name(), e.Argv)
}

// Start starts an exporter on its host when it does not run and waits
// until it listens: a mysqld_exporter's defaults file (the health-check
// user, its password read from the node's secret, the node's socket) is
// written first, 0600. An exporter the proxy serves has nothing to start.
func Start(ctx context.Context, p *plan.Plan, h host.Host, e plan.Exporter) error {
	if len(e.Argv) == 0 {
		return nil
	}
	if e.DefaultsFile != "" {
		n, ok := p.Node(e.Instance)
		if !ok {
			return fmt.Errorf("%s: no node %s", e.Name(), e.Instance)
		}
		pw, err := h.ReadFile(ctx, n.CheckSecret)
		if err != nil {
			return fmt.Errorf("%s: %w", e.Name(), err)
		}
		cnf := fmt.Sprintf("[client]\nuser=%s\npassword=%s\nsocket=%s\n", plan.CheckUser, strings.TrimSpace(string(pw)), n.Socket)
		if err := h.WriteFile(ctx, e.DefaultsFile, []byte(cnf), 0o600); err != nil {
			return fmt.Errorf("%s: %w", e.Name(), err)
		}
	}
	addr := fmt.Sprintf("%s:%d", e.Address, e.Port)
	return host.EnsureReady(ctx, h, Daemon(e), 10*time.Second, 20*time.Millisecond, host.Listens(h, addr))
}
