package drill

import (
	"context"
	"time"

	"github.com/hadrill/hadrill/internal/chaos"
	"github.com/hadrill/hadrill/internal/hderr"
)

// FlapPeriod is how long a flapping partition holds, and then lifts,
// each time.
const FlapPeriod = 2 * time.Second

// flap: a flaky link: nodes, hosts or a region (default: the writer) cut
// off for FlapPeriod, healed for FlapPeriod, again and again for --hold.
// On a primary cluster each cut is shorter than the replicas' patience
// (slave_net_timeout), so the keeper must not fail over: writes pause
// while the primary is cut off and resume on it after each heal.
var flap = Scenario{
	Name:       Flap,
	Usage:      "flap [TARGET...]",
	Short:      "A flapping partition: cut nodes, hosts or a region off (default: the writer) for 2 s, heal for 2 s, for --hold",
	MaxTargets: -1,
	Replicated: true,
	targets: func(d *drill, given []string) ([]string, error) {
		if why := d.l.Plan().WithoutFirewall(); why != "" {
			return nil, hderr.User("drill flap: a network fault %s", why)
		}
		return partition.targets(d, given)
	},
	inject: func(ctx context.Context, d *drill) (time.Time, error) {
		d.faultAt = time.Now()
		last := d.faultAt
		n := 0
		for end := d.faultAt.Add(d.o.Hold); time.Now().Before(end) && ctx.Err() == nil; n++ {
			last = time.Now()
			if err := d.l.Inject(ctx, chaos.Partition{Targets: d.res.Targets}); err != nil {
				return last, err
			}
			sleep(ctx, FlapPeriod)
			if err := d.l.Heal(ctx); err != nil {
				return last, err
			}
			sleep(ctx, FlapPeriod)
		}
		d.logf("cut %v off and healed it %d times, %v each way", d.res.Targets, n, FlapPeriod)
		return last, nil
	},
}
