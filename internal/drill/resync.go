package drill

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/server"
)

// TransferRouteBound is how long the load balancer may keep sending
// writes to a node that became a state transfer's donor: its health
// checks must first see the agent refuse (document 000's probe rule: a
// donor or a joiner takes no traffic).
const TransferRouteBound = 3 * time.Second

// resync: a Galera node (default: the load balancer's writer) joins by a
// full state transfer (SST) while the cluster takes writes, as a node whose
// data was lost does. While it runs, the load balancer's writer is watched:
// writes sent to the joiner at all, or to the donor for longer than
// TransferRouteBound, fail the drill.
var resync = Scenario{
	Name:       Resync,
	Aliases:    []string{"rebuild"}, // a node rebuilt from a donor
	Usage:      "resync [NODE|active]",
	Short:      "A node (default: the writer) joins by a full state transfer under load; the load balancer must not send writes to the joiner or the donor",
	MaxTargets: 1,
	NodeFlag:   true,
	targets:    oneNode,
	inject: func(ctx context.Context, d *drill) (time.Time, error) {
		node := d.res.Targets[0]
		watch, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		var routed routing
		wg.Go(func() { routed = d.watchRouting(watch) })
		d.faultAt = time.Now()
		began := d.faultAt.UTC()
		err := d.l.Resync(ctx, node)
		stop()
		wg.Wait()
		if err == nil {
			err = d.l.RecordFault(fault.Record{Fault: fault.Restart, Targets: []string{node}, Value: "full state transfer", At: began})
		}
		d.logf("%s synced again by a full state transfer after %.2fs", node, time.Since(d.faultAt).Seconds())
		for who, span := range routed.toDonor {
			d.logf("the load balancer sent writes to %s while it was a donor for %.2fs", who, span.Seconds())
			if span > TransferRouteBound {
				d.problems = append(d.problems, fmt.Sprintf("the load balancer sent writes to %s for %.2fs while it was the state transfer's donor (bound %v)", who, span.Seconds(), TransferRouteBound))
			}
		}
		for who, span := range routed.toLeaving {
			d.logf("the load balancer sent writes to %s for %.2fs while it was leaving its cluster, before it stopped (its checks' interval)", who, span.Seconds())
		}
		for who, span := range routed.toJoiner {
			d.problems = append(d.problems, fmt.Sprintf("the load balancer sent writes to %s for %.2fs while it was joining (%s)", who, span.Seconds(), routed.state[who]))
		}
		return d.faultAt, err
	},
	faulted:  func(*drill) int { return 1 },
	reformed: reformedWithout,
}

// routing is where the load balancer's writes went during a transfer:
// how long to a donor, to a node not yet Synced after it came back
// (joining), and to one not Synced any more before it went down
// (leaving: a clean shutdown first takes the node out of its cluster,
// and the load balancer's checks see it within their interval).
type routing struct {
	toDonor, toJoiner, toLeaving map[string]time.Duration
	state                        map[string]server.State
	wentDown                     map[string]bool // seen not answering since the watch began
	// writer is the load balancer's writer at the last poll, since the
	// poll that first saw it so.
	writer string
	since  time.Time
}

// watchRouting polls the load balancer's writer and the sampler's view of
// it every 100 ms until ctx ends.
func (d *drill) watchRouting(ctx context.Context) routing {
	r := newRouting()
	const every = 100 * time.Millisecond
	for ctx.Err() == nil {
		time.Sleep(every)
		w, err := d.writer()
		if err != nil {
			continue
		}
		at := time.Now()
		snaps := d.s.Snapshots()
		if len(snaps) == 0 {
			continue
		}
		r.observe(w, at, d.s.sampleOf(snaps[len(snaps)-1]), every)
	}
	return r
}

func newRouting() routing {
	return routing{toDonor: map[string]time.Duration{}, toJoiner: map[string]time.Duration{}, toLeaving: map[string]time.Duration{},
		state: map[string]server.State{}, wentDown: map[string]bool{}}
}

// observe counts one poll: the load balancer's writer w as read at at,
// the cluster as last sampled, the time since the last poll. A joiner is
// the writer only by a sample taken once the load balancer was seen
// sending to it: one taken before may show the state it had before its
// agent let the load balancer in (the two are read 100 ms apart, on their
// own clocks), and a real misroute lasts the load balancer's checks'
// interval, longer than a poll.
func (r *routing) observe(w string, at time.Time, s Sample, every time.Duration) {
	if w != r.writer {
		r.writer, r.since = w, at
	}
	for name, n := range s.Nodes {
		if !n.State.Answering() {
			r.wentDown[name] = true
		}
	}
	st := s.Nodes[w].State
	switch {
	case strings.HasPrefix(string(st), "Donor"):
		r.toDonor[w] += every
	case st.Answering() && st != server.Synced && r.wentDown[w] && s.At.Before(r.since):
		// read before the load balancer was seen sending to it: unknown
	case st.Answering() && st != server.Synced && r.wentDown[w]:
		r.toJoiner[w] += every
		r.state[w] = st
	case st.Answering() && st != server.Synced:
		r.toLeaving[w] += every
	}
}
