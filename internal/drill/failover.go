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

// failover: kill -9 one node (default: the load balancer's writer), wait
// for writes to resume and the survivors to re-form (a primary cluster: a
// replica promoted by the keeper), start it again (a former primary
// rejoins as a replica, or is fenced when it holds what the new primary
// never received).
var failover = Scenario{
	Name:         Failover,
	Usage:        "failover [NODE|active]",
	Short:        "Kill -9 a node (default: the load balancer's writer) or crash its host (--crash), then start it again",
	MaxTargets:   1,
	NodeFlag:     true,
	CrashFlag:    true,
	Replicated:   true,
	AutoFailover: true,
	targets: func(d *drill, given []string) ([]string, error) {
		t, err := d.activeOr(given)
		if err != nil {
			return nil, err
		}
		if len(t) != 1 {
			return nil, hderr.User("NODE: a failover drill kills one node (or active, the load balancer's writer), got %d", len(t))
		}
		if !slices.Contains(d.cluster.Nodes, t[0]) {
			return nil, hderr.User("NODE: %q is not a node of cluster %s (nodes: %s, or active)", t[0], d.cluster.Name, strings.Join(d.cluster.Nodes, ", "))
		}
		return t, nil
	},
	inject: func(ctx context.Context, d *drill) (time.Time, error) {
		d.faultAt = time.Now()
		if d.o.Crash {
			var hosts []string
			for _, n := range nodes(d.l.Plan(), d.res.Targets) {
				hosts = append(hosts, n.Host)
			}
			if err := d.l.Inject(ctx, chaos.Crash(hosts)); err != nil {
				return d.faultAt, err
			}
			d.logf("crashed %s's host (every process killed, its NICs down); waiting for writes to resume", d.res.Targets[0])
		} else {
			if err := d.l.Inject(ctx, chaos.Process{Kind: fault.Kill, Names: d.res.Targets}); err != nil {
				return d.faultAt, err
			}
			d.logf("killed %s (kill -9); waiting for writes to resume", d.res.Targets[0])
		}
		d.waitWrites(ctx, d.o.Hold)
		d.waitReformed(ctx, d.cluster.Members()-1)
		sleep(ctx, time.Second)
		d.logf("starting %s again", d.res.Targets[0])
		if err := d.l.Heal(ctx); err != nil {
			return d.faultAt, fmt.Errorf("starting %s again: %w", d.res.Targets[0], err)
		}
		return d.faultAt, nil
	},
	faulted:  func(*drill) int { return 1 },
	reformed: reformedWithout,
}
