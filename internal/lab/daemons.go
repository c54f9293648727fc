package lab

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/hadrill/hadrill/internal/agent"
	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/keeper"
	"github.com/hadrill/hadrill/internal/lb"
	"github.com/hadrill/hadrill/internal/monitor"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
)

// Bounds: a load balancer routes once its checks saw rise × inter (0.4 s)
// of healthy agents; garbd is counted once the group took it in.
const (
	routeDeadline  = 30 * time.Second
	arbitratorJoin = 30 * time.Second
)

// ensureDaemons starts what is not running: each cluster's arbitrator,
// every node's health agent, every load balancer, the lab's keeper and
// its exporters (monitoring), and
// waits until each load balancer routes an application login. It is
// idempotent. Every daemon is a supervise.Daemon whose directories the plan
// resolved; a new one gets a Daemon function in its own package and a line here.
func (l *Lab) ensureDaemons(ctx context.Context) error {
	if err := l.startArbitrators(ctx); err != nil {
		return err
	}
	for i := range l.p.Nodes {
		n := &l.p.Nodes[i]
		addr := fmt.Sprintf("%s:%d", n.Address, n.AgentPort)
		h := l.Prov.Host(n.Host)
		if err := host.EnsureReady(ctx, h, agent.Daemon(l.p, n, h.Exe()), 10*time.Second, 20*time.Millisecond, host.Listens(h, addr)); err != nil {
			return err
		}
	}
	for i := range l.p.LoadBalancers {
		if err := l.Balancer(&l.p.LoadBalancers[i]).Start(ctx); err != nil {
			return err
		}
	}
	if _, err := keeper.Daemon(l.p, l.home, exe()).Ensure(); err != nil {
		return fmt.Errorf("keeper: %w", err)
	}
	if err := monitor.Ensure(ctx, l.p, l.Prov.Host); err != nil {
		return err
	}
	for i := range l.p.LoadBalancers {
		if err := l.waitRouting(ctx, &l.p.LoadBalancers[i]); err != nil {
			return err
		}
	}
	return nil
}

// Balancer is a load balancer on its hosts (HAProxy, and keepalived for a
// pair).
func (l *Lab) Balancer(b *plan.LB) lb.Balancer {
	return lb.Balancer{LB: b, Plan: l.p, Hosts: l.Prov.Host}
}

// garbd is a cluster's arbitrator on its host.
func garbd(a *plan.Arbitrator) host.Daemon {
	return host.Daemon{Name: a.Name + " garbd", Argv: a.Argv, Dir: a.Garbd.Dir, LogFile: a.Garbd.LogFile,
		PidFile: a.Garbd.PidFile, Marker: a.Garbd.Marker}
}

// garbdPid is the arbitrator's pid while it runs, else 0.
func (l *Lab) garbdPid(ctx context.Context, a *plan.Arbitrator) int {
	p, _ := l.Prov.Host(a.Name).Process(ctx, garbd(a))
	return p.Pid
}

// startArbitrators starts each cluster's garbd that is not running, once
// the cluster has a running node, and waits until the cluster counts it.
func (l *Lab) startArbitrators(ctx context.Context) error {
	for i := range l.p.Clusters {
		c := &l.p.Clusters[i]
		a := c.Arbitrator
		if a == nil || l.garbdPid(ctx, a) != 0 || len(l.running(c.Name)) == 0 {
			continue
		}
		n := l.running(c.Name)[0]
		err := host.EnsureReady(ctx, l.Prov.Host(a.Name), garbd(a), arbitratorJoin, 100*time.Millisecond, func(ctx context.Context) error {
			db := l.Admin(n)
			defer db.Close()
			st, err := mariadb.Status(ctx, db, "wsrep_cluster_size")
			if err != nil {
				return err
			}
			if size, _ := strconv.Atoi(st["wsrep_cluster_size"]); size != c.Members() {
				return fmt.Errorf("cluster %s has %d members, want %d with arbitrator %s (see %s)", c.Name, size, c.Members(), a.Name, a.LogFile)
			}
			return nil
		})
		if err != nil {
			return err
		}
		l.logf("arbitrator %s joined cluster %s", a.Name, c.Name)
	}
	return nil
}

// waitRouting waits until the load balancer sends an application login to
// a healthy node.
func (l *Lab) waitRouting(ctx context.Context, lb *plan.LB) error {
	db, err := l.AppDB(fmt.Sprintf("%s:%d", lb.Address, lb.Port))
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(routeDeadline)
	var last error
	for time.Now().Before(deadline) {
		qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		var node string
		last = db.QueryRowContext(qctx, "SELECT @@wsrep_node_name").Scan(&node)
		cancel()
		if last == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("load balancer %s does not route to a healthy node after %v: %v", lb.Name, routeDeadline, last)
}

// stopDaemons kills the agents, load balancers, keeper, WAN emulator,
// exporters and arbitrators (they hold no data).
func (l *Lab) stopDaemons() error {
	ctx := context.Background()
	var errs []error
	for i := range l.p.Nodes {
		n := &l.p.Nodes[i]
		h := l.Prov.Host(n.Host)
		errs = append(errs, h.Kill(ctx, agent.Daemon(l.p, n, h.Exe())))
	}
	for i := range l.p.LoadBalancers {
		errs = append(errs, l.Balancer(&l.p.LoadBalancers[i]).Stop(ctx))
	}
	errs = append(errs, keeper.Daemon(l.p, l.home, exe()).Kill(), l.wan.Stop(), monitor.Stop(ctx, l.p, l.Prov.Host))
	for _, c := range l.p.Clusters {
		if c.Arbitrator != nil {
			errs = append(errs, l.Prov.Host(c.Arbitrator.Name).Kill(ctx, garbd(c.Arbitrator)))
		}
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
		var err error
		h := l.Prov.Host(n.Host)
		if drain {
			err = h.WriteFile(ctx, n.DrainFile, []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o644)
		} else {
			err = h.RemoveAll(ctx, n.DrainFile)
		}
		if err != nil {
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
	_, err := l.Prov.Host(n.Host).ReadFile(ctx, n.DrainFile)
	return err == nil
}

// LB resolves a load balancer by name (plan.LBAlias: the lab's first).
func (l *Lab) LB(name string) (*plan.LB, error) {
	if lb, ok := l.p.LB(name); ok {
		return lb, nil
	}
	var names []string
	for _, lb := range l.p.LoadBalancers {
		names = append(names, lb.Name)
	}
	return nil, hderr.User("--lb: unknown load balancer %q (load balancers: %v)", name, names)
}

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
