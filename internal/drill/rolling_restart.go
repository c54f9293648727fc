package drill

import (
	"context"
	"fmt"
	"time"

	"github.com/hadrill/hadrill/internal/fault"
)

// rollingRestart: restart every node in turn, the writer last (as a DBA
// would), each back to Synced before the next.
var rollingRestart = Scenario{
	Name:    RollingRestart,
	Usage:   "rolling-restart",
	Short:   "Restart every node in turn, the writer last, each back to Synced before the next",
	targets: wholeCluster,
	inject: func(ctx context.Context, d *drill) (time.Time, error) {
		w, _ := d.writer()
		var order []string
		for _, n := range d.cluster.Nodes {
			if n != w {
				order = append(order, n)
			}
		}
		if w != "" {
			order = append(order, w)
		}
		d.faultAt = time.Now()
		var last time.Time
		for _, name := range order {
			last = time.Now() // Restart says "restarting NODE"
			if err := d.l.Restart(ctx, []string{name}); err != nil {
				return last, err
			}
			// recorded once it took effect, dated when it began (like every fault)
			if err := d.l.RecordFault(fault.Record{Fault: fault.Restart, Targets: []string{name}, At: last.UTC()}); err != nil {
				return last, err
			}
			if _, ok := d.s.waitFor(ctx, d.s.brokenAt(last), d.o.Timeout, d.whole); !ok {
				return last, fmt.Errorf("cluster %s not whole within %v after restarting %s", d.cluster.Name, d.o.Timeout, name)
			}
		}
		return last, nil
	},
}
