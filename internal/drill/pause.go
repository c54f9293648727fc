package drill

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/chaos"
	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/hderr"
)

// pause: freeze nodes' servers (SIGSTOP; default: the load balancer's
// writer) as a long stall would (a garbage-collecting hypervisor, a
// swapping host): alive, holding their connections, answering nothing.
// The fault holds until writes resume and the others re-form without them
// (or --hold), then the servers are thawed and rejoin (a primary cluster's
// former primary as a replica, or fenced).
var pause = Scenario{
	Name:       Pause,
	Usage:      "pause [NODE...|active]",
	Short:      "Freeze nodes' servers (SIGSTOP; default: the load balancer's writer), then thaw them",
	MaxTargets: -1,
	// a primary cluster's frozen primary is failed over by the keeper once
	// its replicas give up on it; thawed, it must not take writes again
	Replicated:   true,
	AutoFailover: true,
	targets: func(d *drill, given []string) ([]string, error) {
		t, err := d.activeOr(given)
		if err != nil {
			return nil, err
		}
		var problems []string
		for _, n := range t {
			if !slices.Contains(d.cluster.Nodes, n) {
				problems = append(problems, fmt.Sprintf("NODE: %q is not a node of cluster %s (nodes: %s, or active)", n, d.cluster.Name, strings.Join(d.cluster.Nodes, ", ")))
			}
		}
		if len(t) >= d.cluster.Members() {
			problems = append(problems, fmt.Sprintf("NODE: pausing all %d members of cluster %s leaves nothing to take writes; use full-outage", d.cluster.Members(), d.cluster.Name))
		}
		return t, hderr.Users(problems)
	},
	inject: func(ctx context.Context, d *drill) (time.Time, error) {
		d.faultAt = time.Now()
		if err := d.l.Inject(ctx, chaos.Process{Kind: fault.Pause, Names: d.res.Targets}); err != nil {
			return d.faultAt, err
		}
		d.logf("paused %v (SIGSTOP); waiting for writes to resume", d.res.Targets)
		d.waitWrites(ctx, d.o.Hold)
		d.waitReformed(ctx, d.cluster.Members()-len(d.res.Targets))
		sleep(ctx, time.Second)
		d.logf("thawing %v", d.res.Targets)
		return d.faultAt, d.l.Heal(ctx)
	},
	faulted:  func(d *drill) int { return len(d.res.Targets) },
	reformed: reformedWithout,
}
