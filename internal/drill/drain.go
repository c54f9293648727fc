package drill

import (
	"context"
	"fmt"
	"time"

	"github.com/hadrill/hadrill/internal/chaos"
	"github.com/hadrill/hadrill/internal/fault"
)

// DrainWait bounds how long the load balancer may take to move writes off
// a drained node (its health checks must see the agent's 503).
const DrainWait = 15 * time.Second

// drain: planned maintenance as a DBA does it: the node (default: the load
// balancer's writer) drained first, so the load balancer moves its traffic
// to another node, then stopped cleanly, started again and undrained. The
// client-visible gap is what the maintenance costs the application.
var drain = Scenario{
	Name:       Drain,
	Usage:      "drain [NODE|active]",
	Short:      "Maintenance: drain a node (default: the writer), stop it cleanly once the load balancer moved off it, start it, undrain",
	MaxTargets: 1,
	NodeFlag:   true,
	targets:    oneNode,
	inject: func(ctx context.Context, d *drill) (time.Time, error) {
		node := d.res.Targets[0]
		d.faultAt = time.Now()
		if err := d.l.Drain(ctx, []string{node}, true); err != nil {
			return d.faultAt, err
		}
		d.logf("drained %s; waiting for the load balancer to move writes off it", node)
		moved := false
		for end := time.Now().Add(DrainWait); time.Now().Before(end) && ctx.Err() == nil; time.Sleep(100 * time.Millisecond) {
			if w, err := d.writer(); err == nil && w != node {
				d.logf("writes go to %s after %.2fs", w, time.Since(d.faultAt).Seconds())
				moved = true
				break
			}
		}
		if !moved {
			_ = d.l.Drain(context.WithoutCancel(ctx), []string{node}, false)
			return d.faultAt, fmt.Errorf("the load balancer still sent writes to %s %v after it was drained", node, DrainWait)
		}
		stopAt := time.Now().UTC()
		if err := d.l.Inject(ctx, chaos.Process{Kind: fault.Stop, Names: []string{node}}); err != nil {
			return d.faultAt, err
		}
		d.logf("stopped %s cleanly %.2fs after the drain", node, stopAt.Sub(d.faultAt).Seconds())
		d.waitReformed(ctx, d.cluster.Members()-1)
		sleep(ctx, time.Second)
		d.logf("starting %s again and undraining it", node)
		if err := d.l.Heal(ctx); err != nil {
			return d.faultAt, err
		}
		return d.faultAt, d.l.Drain(ctx, []string{node}, false)
	},
	faulted:  func(*drill) int { return 1 },
	reformed: reformedWithout,
	undo: func(ctx context.Context, d *drill) error {
		if err := d.l.Drain(ctx, d.res.Targets, false); err != nil {
			return fmt.Errorf("undraining %v: %w", d.res.Targets, err)
		}
		return nil
	},
}
