package drill

import (
	"context"
	"strconv"
	"time"

	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/server"
	"github.com/hadrill/hadrill/internal/workload"
)

// NodeSample is what one node said at one moment.
type NodeSample struct {
	State   server.State
	Primary bool // in a primary component
	Size    int  // cluster size it sees
}

// Sample is every node of the cluster at one moment.
type Sample struct {
	At    time.Time
	Nodes map[string]NodeSample
}

// Reformed reports whether some node outside the faulted ones is in a
// primary component of exactly want members (the cluster has re-formed
// without the faulted nodes); want 0 means any size.
func (s Sample) Reformed(faulted []string, want int) bool {
	for name, n := range s.Nodes {
		if contains(faulted, name) || !n.Primary || n.State != server.Synced {
			continue
		}
		if want == 0 || n.Size == want {
			return true
		}
	}
	return false
}

// Whole reports whether every node is Synced in one primary component of
// members members (the nodes, and an arbitrator when the cluster has one).
func (s Sample) Whole(members int) bool {
	for _, n := range s.Nodes {
		if !n.Primary || n.State != server.Synced || n.Size != members {
			return false
		}
	}
	return len(s.Nodes) > 0
}

// sampler is a workload sampler over the cluster's nodes, read as Samples.
type sampler struct {
	members int // a whole cluster's size
	*workload.Sampler
}

func startSampler(ctx context.Context, l Lab, nodes []*plan.Node, members int, every time.Duration) *sampler {
	return &sampler{members: members, Sampler: workload.StartSampler(ctx, l, nodes, every)}
}

// sampleOf reads a snapshot as the drill's verdicts need it.
func sampleOf(sn workload.Snapshot) Sample {
	smp := Sample{At: sn.At, Nodes: map[string]NodeSample{}}
	for name, st := range sn.Nodes {
		size, _ := strconv.Atoi(st.Status["wsrep_cluster_size"])
		smp.Nodes[name] = NodeSample{State: st.State, Primary: st.Primary(), Size: size}
	}
	return smp
}

// first is the first sample at or after from that satisfies ok.
func (s *sampler) first(from time.Time, ok func(Sample) bool) (time.Time, bool) {
	for _, sn := range s.Snapshots() {
		if !sn.At.Before(from) && ok(sampleOf(sn)) {
			return sn.At, true
		}
	}
	return time.Time{}, false
}

// brokenAt is the first sample at or after from in which the cluster is
// not whole (the fault became visible), or from when none is.
func (s *sampler) brokenAt(from time.Time) time.Time {
	if t, ok := s.first(from, func(x Sample) bool { return !x.Whole(s.members) }); ok {
		return t
	}
	return from
}

// waitFor polls until a sample at or after from satisfies ok, or limit passes.
func (s *sampler) waitFor(ctx context.Context, from time.Time, limit time.Duration, ok func(Sample) bool) (time.Time, bool) {
	for end := time.Now().Add(limit); time.Now().Before(end) && ctx.Err() == nil; time.Sleep(50 * time.Millisecond) {
		if t, found := s.first(from, ok); found {
			return t, true
		}
	}
	return time.Time{}, false
}

func (s *sampler) finish() { s.Stop() }
