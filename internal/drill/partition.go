package drill

import (
	"context"
	"slices"
	"time"

	"github.com/hadrill/hadrill/internal/chaos"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/spec"
)

// partition: cut nodes, hosts or a region off (default: the writer), wait
// for writes to resume on the majority side (if there is one; in a primary
// cluster, on a replica the keeper promoted), heal.
var partition = Scenario{
	Name:       Partition,
	Usage:      "partition [TARGET...]",
	Short:      "Cut nodes, hosts or a region off (default: the writer), then heal",
	MaxTargets: -1,
	// a primary cluster's primary cut off is failed over by the keeper
	Replicated:   true,
	AutoFailover: true,
	targets: func(d *drill, given []string) ([]string, error) {
		if why := d.l.Plan().WithoutFirewall(); why != "" {
			return nil, hderr.User("drill partition: a network fault %s", why)
		}
		t, err := d.activeOr(given)
		if err != nil {
			return nil, err
		}
		if _, err := chaos.NewCut(d.l.Plan(), t, nil); err != nil {
			return nil, err
		}
		return t, nil
	},
	inject: func(ctx context.Context, d *drill) (time.Time, error) {
		d.faultAt = time.Now()
		if err := d.l.Inject(ctx, chaos.Partition{Targets: d.res.Targets}); err != nil {
			return d.faultAt, err
		}
		if d.cluster.Kind == spec.KindPrimary {
			d.logf("cut %v off; waiting for writes to resume (a replica promoted by the keeper, if the primary was cut off)", d.res.Targets)
			d.waitWrites(ctx, d.o.Hold)
			d.waitReformed(ctx, 0)
			sleep(ctx, time.Second)
			d.logf("healing the partition")
			return d.faultAt, d.l.Heal(ctx)
		}
		members := d.cluster.Members()
		survivors := members - partitioned(d)
		d.logf("cut %v off; waiting for writes to resume", d.res.Targets)
		if survivors*2 <= members {
			d.logf("no side keeps a majority of the %d members: writes can only resume once the partition heals (after --hold %v)",
				members, d.o.Hold)
		}
		d.waitWrites(ctx, d.o.Hold)
		if survivors*2 > members {
			d.waitReformed(ctx, survivors)
		}
		sleep(ctx, time.Second)
		d.logf("healing the partition")
		return d.faultAt, d.l.Heal(ctx)
	},
	faulted:  partitioned,
	reformed: reformedWithout,
}

// partitioned counts the cluster's members (nodes, arbitrator) the cut
// takes away; a cut isolating the majority leaves the larger side the one
// that should carry on.
func partitioned(d *drill) int {
	cut, err := chaos.NewCut(d.l.Plan(), d.res.Targets, nil)
	if err != nil {
		return 0
	}
	n := 0
	for _, h := range cut.Side {
		if slices.Contains(d.cluster.Nodes, h.Name) || (d.cluster.Arbitrator != nil && h.Name == d.cluster.Arbitrator.Name) {
			n++
		}
	}
	if rest := d.cluster.Members() - n; rest < n {
		return rest
	}
	return n
}
