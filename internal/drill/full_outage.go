package drill

import (
	"context"
	"time"

	"github.com/hadrill/hadrill/internal/chaos"
	"github.com/hadrill/hadrill/internal/fault"
)

// fullOutage: kill -9 every node of the cluster, then recover it from its
// most advanced node.
var fullOutage = Scenario{
	Name:    FullOutage,
	Usage:   "full-outage",
	Short:   "Kill -9 every node of the cluster, then recover it (most advanced node first)",
	targets: wholeCluster,
	inject: func(ctx context.Context, d *drill) (time.Time, error) {
		d.faultAt = time.Now()
		if err := d.l.Inject(ctx, chaos.Process{Kind: fault.Kill, Names: d.cluster.Nodes}); err != nil {
			return d.faultAt, err
		}
		d.logf("killed every node of %s (kill -9); recovering", d.cluster.Name)
		began := time.Now().UTC()
		if err := d.l.Recover(ctx, ""); err != nil {
			return d.faultAt, err
		}
		// recorded once it took effect, dated when it began (like every fault)
		if err := d.l.RecordFault(fault.Record{Fault: fault.Recover, Targets: d.cluster.Nodes, At: began}); err != nil {
			return d.faultAt, err
		}
		d.waitWrites(ctx, d.o.Timeout)
		return d.faultAt, nil
	},
	// re-formed: the first primary component after the outage was seen
	reformed: func(d *drill, r *Result) {
		down, _ := d.s.first(d.faultAt, func(s Sample) bool { return !s.Reformed(nil, 0) })
		if t, ok := d.s.first(down, func(s Sample) bool { return s.Reformed(nil, 0) }); ok && !down.IsZero() {
			r.ReformedS = secs(t.Sub(d.faultAt))
		}
	},
}
