package drill

import (
	"context"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/chaos"
	"github.com/hadrill/hadrill/internal/hderr"
)

// Injection is a fault given to the fault drill: what `hadrill fault`
// would inject, parsed by the CLI, with its command line as its label.
type Injection struct {
	Label string
	Fault chaos.Fault
}

// anyFault: any fault `hadrill fault` injects (a disk that stalls, a clock
// that jumps, a one-way cut, a WAN's loss), applied under traffic, held for
// --hold, then healed; the cluster must be whole again and every
// acknowledged write on every node, as after every drill.
var anyFault = Scenario{
	Name:       FaultDrill,
	Usage:      "fault [flags] -- FAULT...",
	Short:      "Any fault of `hadrill fault` (given after --) under traffic: applied, held for --hold, healed",
	MaxTargets: -1,
	Replicated: true,
	targets: func(d *drill, given []string) ([]string, error) {
		if d.o.Fault == nil || d.o.Fault.Fault == nil {
			return nil, hderr.User("FAULT: give the fault after --, as `hadrill fault` takes it (e.g. hadrill drill fault --hold 20s -- disk db2 --stall 2s)")
		}
		d.res.Fault = d.o.Fault.Label
		return nil, nil
	},
	inject: func(ctx context.Context, d *drill) (time.Time, error) {
		d.faultAt = time.Now()
		if err := d.l.Inject(ctx, d.o.Fault.Fault); err != nil {
			return d.faultAt, err
		}
		d.logf("%s: applied; held for %v", strings.TrimSpace(d.o.Fault.Label), d.o.Hold)
		sleep(ctx, d.o.Hold)
		d.logf("healing")
		err := d.l.Heal(ctx)
		// the fault lasted until healed: the cluster is whole again at the
		// first whole sample after it (a fault that never broke the
		// cluster, a slow disk, would otherwise end at once, its held
		// seconds counted as after)
		return time.Now(), err
	},
}
