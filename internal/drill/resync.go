package drill

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/lb"
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
		d.problems = append(d.problems, routed.verdict(d.logf)...)
		return d.faultAt, err
	},
	faulted:  func(*drill) int { return 1 },
	reformed: reformedWithout,
}

// verdict says where the writes went (logf) and what breaks the drill's
// rule: writes to a joiner at all, to a donor or to a node back before
// the checks saw it go for longer than TransferRouteBound.
func (r routing) verdict(logf func(string, ...any)) []string {
	var problems []string
	for _, who := range slices.Sorted(maps.Keys(r.toDonor)) {
		span := r.toDonor[who]
		logf("the load balancer sent writes to %s while it was a donor for %.2fs", who, span.Seconds())
		if span > TransferRouteBound {
			problems = append(problems, fmt.Sprintf("the load balancer sent writes to %s for %.2fs while it was the state transfer's donor (bound %v)", who, span.Seconds(), TransferRouteBound))
		}
	}
	for _, who := range slices.Sorted(maps.Keys(r.toLeaving)) {
		logf("the load balancer sent writes to %s for %.2fs while it was leaving its cluster, before it stopped (its checks' interval)", who, r.toLeaving[who].Seconds())
	}
	for _, who := range slices.Sorted(maps.Keys(r.unseen)) {
		span := r.unseen[who]
		logf("the load balancer sent writes to %s for %.2fs once it had gone down and come back (%s), its checks not yet having seen it go", who, span.Seconds(), r.state[who])
		if span > TransferRouteBound {
			problems = append(problems, fmt.Sprintf("the load balancer kept sending writes to %s for %.2fs after it went down and came back (%s), its checks not seeing it go (bound %v)", who, span.Seconds(), r.state[who], TransferRouteBound))
		}
	}
	for _, who := range slices.Sorted(maps.Keys(r.toJoiner)) {
		problems = append(problems, fmt.Sprintf("the load balancer sent writes to %s for %.2fs while it was joining (%s)", who, r.toJoiner[who].Seconds(), r.state[who]))
	}
	return problems
}

// routing is where the load balancer's writes went during a transfer:
// how long to a donor, to a node not yet Synced after it came back
// (joining: the load balancer came to it after it went down), and to one
// not Synced any more before it went down (leaving: a clean shutdown
// first takes the node out of its cluster, and the load balancer's checks
// see it within their interval). A node the load balancer never left,
// seen back before its checks saw it go (a clean stop and a fast start
// within their interval), is unseen: timed against TransferRouteBound,
// as a donor is.
type routing struct {
	toDonor, toJoiner, toLeaving, unseen map[string]time.Duration
	state                                map[string]server.State
	downAt                               map[string]time.Time // first seen not answering since the watch began
	// writer is the load balancer's writer at the last poll ("" for
	// none), since the poll that first saw it so.
	writer string
	since  time.Time
}

// watchRouting polls the load balancer's writer and the sampler's view of
// it every 100 ms until ctx ends. A poll that could not read the load
// balancer says nothing; one that read it serving writes on no node ends
// the writer's span.
func (d *drill) watchRouting(ctx context.Context) routing {
	r := newRouting()
	const every = 100 * time.Millisecond
	for ctx.Err() == nil {
		time.Sleep(every)
		w, err := d.writer()
		if err != nil && !errors.Is(err, lb.ErrNoWriter) {
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
		unseen: map[string]time.Duration{}, state: map[string]server.State{}, downAt: map[string]time.Time{}}
}

// observe counts one poll: the load balancer's writer w as read at at
// ("" for none), the cluster as last sampled, the time since the last
// poll. A joiner is the writer only by a sample taken once the load
// balancer was seen sending to it: one taken before may show the state it
// had before its agent let the load balancer in (the two are read 100 ms
// apart, on their own clocks), and a real misroute lasts the load
// balancer's checks' interval, longer than a poll.
func (r *routing) observe(w string, at time.Time, s Sample, every time.Duration) {
	if w != r.writer {
		r.writer, r.since = w, at
	}
	for name, n := range s.Nodes {
		if _, seen := r.downAt[name]; !seen && !n.State.Answering() {
			r.downAt[name] = s.At
		}
	}
	if w == "" {
		return
	}
	st := s.Nodes[w].State
	down, wentDown := r.downAt[w]
	switch {
	case strings.HasPrefix(string(st), "Donor"):
		r.toDonor[w] += every
	case !st.Answering() || st == server.Synced:
	case !wentDown:
		r.toLeaving[w] += every
	case r.since.Before(down):
		// the writer since before it went down: the load balancer never
		// left it, its checks not yet having seen it go
		r.unseen[w] += every
		r.state[w] = st
	case s.At.Before(r.since):
		// read before the load balancer was seen sending to it: unknown
	default:
		r.toJoiner[w] += every
		r.state[w] = st
	}
}
