package lab

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/lb"
	"github.com/hadrill/hadrill/internal/plan"
)

// RoutingWait is how long drain waits, by default, for the load balancers
// to stop routing to a drained node (and undrain for them to route to it
// again): their checks see the agent's answer within a second or two.
const RoutingWait = 15 * time.Second

// routed is one load balancer instance's view of one node.
type routed struct {
	LB, Host, Node string
	// Status is the node's state in each of the instance's groups
	// ("writes UP", "reads DOWN").
	Status []string
	Up     bool // given new sessions by one of them (routes)
}

func (r routed) String() string {
	if r.LB == "" {
		return "no running load balancer has " + r.Node
	}
	return fmt.Sprintf("%s on %s marks %s %s", r.LB, r.Host, r.Node, strings.Join(r.Status, ", "))
}

// viewOf is what one instance's servers say of node; found is false when
// none of its groups has it.
func viewOf(lbName, hostName, node string, servers []lb.ServerState) (r routed, found bool) {
	r = routed{LB: lbName, Host: hostName, Node: node}
	for _, s := range servers {
		if s.Name != node {
			continue
		}
		found = true
		r.Status = append(r.Status, s.Proxy+" "+s.Status)
		r.Up = r.Up || routes(s.Status)
	}
	return r, found
}

// routes: a server in this state gets new sessions (UP, or UP and going
// down: "UP 1/2"; HAProxy's "no check": never checked, always up), unlike
// DOWN, "DOWN 1/2" (coming up), MAINT or DRAIN.
func routes(status string) bool {
	return strings.HasPrefix(status, "UP") || status == "no check"
}

// pendingRouting is what still disagrees with a drain (a view that marks
// its node UP) or an undrain of nodes (for a node no view marks UP, its
// views, or one with no LB when no running proxy has it).
func pendingRouting(views []routed, nodes []string, drain bool) []routed {
	var out []routed
	if drain {
		for _, v := range views {
			if v.Up {
				out = append(out, v)
			}
		}
		return out
	}
	for _, n := range nodes {
		var of []routed
		for _, v := range views {
			if v.Node == n {
				of = append(of, v)
			}
		}
		switch {
		case len(of) == 0:
			out = append(out, routed{Node: n})
		case !slices.ContainsFunc(of, func(v routed) bool { return v.Up }):
			out = append(out, of...)
		}
	}
	return out
}

// routingViews asks every running proxy of every load balancer what it
// makes of nodes.
func (l *Lab) routingViews(ctx context.Context, nodes []string) []routed {
	var out []routed
	for i := range l.p.LoadBalancers {
		b := l.Balancer(&l.p.LoadBalancers[i])
		for j, in := range b.Instances(ctx) {
			if !in.ProxyUp {
				continue
			}
			st, err := b.Stat(ctx, &b.LB.Instances[j])
			if err != nil {
				continue // gone meanwhile: it routes nothing
			}
			for _, n := range nodes {
				if v, ok := viewOf(b.LB.Name, in.Host, n, st); ok {
					out = append(out, v)
				}
			}
		}
	}
	return out
}

// awaitRouting waits at most within until the load balancers agree with a
// drain (no running proxy marks a node UP: nothing new goes to it) or an
// undrain (each node is UP in one of them again), and returns what still
// disagrees then.
func (l *Lab) awaitRouting(ctx context.Context, names []string, drain bool, within time.Duration) []routed {
	end := time.Now().Add(within)
	for {
		pending := pendingRouting(l.routingViews(ctx, names), names, drain)
		if len(pending) == 0 || !time.Now().Before(end) || ctx.Err() != nil {
			return pending
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// FollowRouting waits, after a drain or undrain of names, at most within
// for the load balancers to follow it, and says how long they took. A
// drained node a running proxy still marks UP then is an error naming
// each such proxy (its clients may still be sent there); an undrained node
// none routes to yet is said, not an error (its agent may have another
// reason to refuse it: not synced, read-only, a replica in a writes group).
func (l *Lab) FollowRouting(ctx context.Context, names []string, drain bool, within time.Duration) error {
	if within <= 0 {
		return nil
	}
	t0 := time.Now()
	var waited []string
	for _, n := range l.Nodes(names) {
		balanced := slices.ContainsFunc(l.p.LoadBalancers, func(b plan.LB) bool { return b.Cluster == n.Cluster })
		if balanced && (drain || l.NodeState(ctx, n).Answering()) { // a stopped node is routed to by none, drained or not
			waited = append(waited, n.Name)
		}
	}
	if len(waited) == 0 {
		return nil
	}
	pending := l.awaitRouting(ctx, waited, drain, within)
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case len(pending) == 0 && drain:
		l.logf("no load balancer routes to %s any more (%.1fs)", strings.Join(waited, ", "), time.Since(t0).Seconds())
		return nil
	case len(pending) == 0:
		l.logf("the load balancers route to %s again (%.1fs)", strings.Join(waited, ", "), time.Since(t0).Seconds())
		return nil
	}
	var said []string
	for _, p := range pending {
		said = append(said, p.String())
	}
	if drain {
		return fmt.Errorf("drained, but after %v %s: new sessions may still go there (see `hadrill status` and the load balancer's log)", within, strings.Join(said, "; "))
	}
	l.logf("note: undrained, but after %v %s (its agent may refuse it for another reason: `hadrill status`)", within, strings.Join(said, "; "))
	return nil
}
