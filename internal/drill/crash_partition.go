package drill

import (
	"context"
	"fmt"
	"time"

	"github.com/hadrill/hadrill/internal/chaos"
	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/hderr"
)

// crashPartition: process crashes during network partitions, the mix under
// which Jepsen saw Galera lose committed transactions even when flushing
// at every commit. One round per node: that node is cut off from the rest,
// a second later the next node is killed (kill -9), so the one left alone
// on the majority side loses its quorum; a second later the cut is lifted
// and the killed server started. The next round begins once the cluster is
// whole again.
var crashPartition = Scenario{
	Name:  CrashPartition,
	Usage: "crash-partition",
	Short: "One round per node: cut it off, kill -9 the next node a second later, heal; the cluster whole before the next round",
	targets: func(d *drill, given []string) ([]string, error) {
		if why := d.l.Plan().WithoutFirewall(); why != "" {
			return nil, hderr.User("drill crash-partition: a network fault %s", why)
		}
		if len(d.cluster.Nodes) < 2 {
			return nil, hderr.User("drill crash-partition: cluster %s has %d node; the drill cuts one node off and kills another", d.cluster.Name, len(d.cluster.Nodes))
		}
		return wholeCluster(d, given)
	},
	inject: func(ctx context.Context, d *drill) (time.Time, error) {
		nodes := d.cluster.Nodes
		d.faultAt = time.Now()
		var last time.Time
		for i, cut := range nodes {
			if ctx.Err() != nil {
				return last, ctx.Err()
			}
			victim := nodes[(i+1)%len(nodes)]
			last = time.Now()
			if err := d.l.Inject(ctx, chaos.Partition{Targets: []string{cut}}); err != nil {
				return last, err
			}
			sleep(ctx, time.Second)
			if err := d.l.Inject(ctx, chaos.Process{Kind: fault.Kill, Names: []string{victim}}); err != nil {
				return last, err
			}
			d.logf("round %d: cut %s off, then killed %s (kill -9)", i+1, cut, victim)
			sleep(ctx, time.Second)
			herr := d.l.Heal(ctx)
			if err := d.quorumBack(ctx, last, fmt.Sprintf("round %d (%s cut off, %s killed)", i+1, cut, victim), herr); err != nil {
				return last, err
			}
			if i == len(nodes)-1 {
				break // Run waits for the last round's recovery
			}
			if _, ok := d.s.waitFor(ctx, d.s.brokenAt(last), d.o.Timeout, d.whole); !ok {
				return last, fmt.Errorf("cluster %s not whole within %v after round %d (%s cut off, %s killed)", d.cluster.Name, d.o.Timeout, i+1, cut, victim)
			}
		}
		return last, nil
	},
}

// QuorumGrace is how long a drill gives a cluster that lost its quorum to
// form a primary component again by itself once the fault is undone.
const QuorumGrace = 20 * time.Second

// quorumBack waits QuorumGrace for the cluster to be whole again after a
// round; when it is not, the lab's recovery gives it a primary component
// (hadrill recover: pc.bootstrap of the most advanced node, as a DBA would
// by hand), and the drill records that it had to.
// A heal that failed (a killed node could not join a cluster left without
// a primary component) is recovered the same way.
func (d *drill) quorumBack(ctx context.Context, since time.Time, round string, healErr error) error {
	what := fmt.Sprintf("not whole %v after the heal", QuorumGrace)
	if healErr != nil {
		what = "the heal failed (" + healErr.Error() + ")"
	} else if _, ok := d.s.waitFor(ctx, d.s.brokenAt(since), QuorumGrace, d.whole); ok || ctx.Err() != nil {
		return nil
	}
	return d.recoverQuorum(ctx, round, what)
}

// recoverQuorum gives the cluster a primary component as a DBA would
// (hadrill recover: pc.bootstrap of the most advanced node) and records
// the intervention: what happened in round, and when.
func (d *drill) recoverQuorum(ctx context.Context, round, what string) error {
	began := time.Now().UTC()
	d.logf("%s: %s; recovering the cluster as a DBA would (hadrill recover)", round, what)
	if err := d.l.Recover(ctx, ""); err != nil {
		return fmt.Errorf("%s: %s, and recovering the cluster failed: %w", round, what, err)
	}
	d.res.Interventions = append(d.res.Interventions, fmt.Sprintf("%s: %s; hadrill recover gave the cluster a primary component again at %.1f s",
		round, what, began.Sub(d.faultAt).Seconds()))
	return d.l.RecordFault(fault.Record{Fault: fault.Recover, Targets: d.cluster.Nodes, At: began})
}
