package lab

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/hadrill/hadrill/internal/agent"
	"github.com/hadrill/hadrill/internal/keeper"
	"github.com/hadrill/hadrill/internal/lb"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
)

// Balancer is a load balancer on its hosts (its proxy, and keepalived for a
// pair).
func (l *Lab) Balancer(b *plan.LB) lb.Balancer {
	return lb.Balancer{LB: b, Plan: l.p, Hosts: l.Prov.Host}
}

// stopDaemons kills every host's daemons but its server (the agents, load
// balancers, arbitrators, exporters: they hold no data), the keeper and
// the WAN emulator.
func (l *Lab) stopDaemons() error {
	ctx := context.Background()
	errs := []error{keeper.Daemon(l.p, l.home, exe()).Kill(), l.wan.Stop()}
	for _, h := range l.p.Hosts {
		errs = append(errs, l.killDaemons(ctx, h.Name, startOrder...))
	}
	return errors.Join(errs...)
}

// Drain takes nodes out of (or back into) load balancing: their agents
// answer 503 while the drain file exists.
func (l *Lab) Drain(ctx context.Context, names []string, drain bool) error {
	if err := l.p.CheckNodes(names); err != nil {
		return err
	}
	for _, n := range l.Nodes(names) {
		if err := agent.Drain(ctx, l.Prov.Host(n.Host), n, drain); err != nil {
			return fmt.Errorf("%s: %w", n.Name, err)
		}
	}
	if drain {
		l.warnNoWriter(ctx, names)
	}
	return nil
}

// warnNoWriter says so when a drain leaves a cluster without a node the
// load balancers may send writes to: a primary cluster's primary, or every
// node of a Galera cluster.
func (l *Lab) warnNoWriter(ctx context.Context, drained []string) {
	repl := l.Replication()
	for i := range l.p.Clusters {
		c := &l.p.Clusters[i]
		if c.Kind == spec.KindPrimary {
			if p := repl.PrimaryOf(c); slices.Contains(drained, p) {
				l.logf("note: %s is the primary of cluster %s, its only writer: drained, its agent answers 503, so the load balancers send writes nowhere "+
					"until `hadrill undrain %s` (for a planned switchover, `hadrill promote` another node first)", p, c.Name, p)
			}
			continue
		}
		all := len(c.Nodes) > 0
		for _, name := range c.Nodes {
			n, _ := l.p.Node(name)
			all = all && l.Drained(ctx, n)
		}
		if all && slices.ContainsFunc(c.Nodes, func(n string) bool { return slices.Contains(drained, n) }) {
			l.logf("note: every node of cluster %s is drained now: the load balancers send its reads and writes nowhere until one is undrained", c.Name)
		}
	}
}

// Drained reports whether a node is drained.
func (l *Lab) Drained(ctx context.Context, n *plan.Node) bool {
	return agent.Drained(ctx, l.Prov.Host(n.Host), n)
}

// LB resolves a load balancer by name (plan.LBAlias: the lab's first).
func (l *Lab) LB(name string) (*plan.LB, error) { return l.p.FindLB(name) }

// Balanced reports whether target names a balanced load balancer or the
// nodes as sysbench's own host list (writes then reach several nodes at
// once).
func (l *Lab) Balanced(target string) bool {
	if target == plan.NodesAlias {
		return true
	}
	lb, err := l.LB(target)
	return err == nil && lb.Mode == spec.LBBalanced
}

// Nodes resolves node names (all when empty) to plan nodes.
func (l *Lab) Nodes(names []string) []*plan.Node {
	var out []*plan.Node
	for i := range l.p.Nodes {
		if n := &l.p.Nodes[i]; len(names) == 0 || slices.Contains(names, n.Name) {
			out = append(out, n)
		}
	}
	return out
}
