package drill

import (
	"context"
	"strconv"
	"time"

	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/server"
	"github.com/hadrill/hadrill/internal/spec"
	"github.com/hadrill/hadrill/internal/workload"
)

// NodeSample is what one node said at one moment.
type NodeSample struct {
	State   server.State
	Primary bool // Galera: in a primary component
	Size    int  // Galera: the cluster size it sees
	// Primary clusters: it takes writes, or the node it replicates from
	// with both threads running ("" when it does not).
	Writable bool
	Source   string
}

// Sample is every node of the cluster at one moment.
type Sample struct {
	At    time.Time
	Nodes map[string]NodeSample
	// Replicated: the nodes of a primary cluster (roles, not Galera
	// membership); Fenced are its nodes kept out of replication on purpose.
	Replicated bool
	Fenced     map[string]bool
}

// Reformed reports whether some node outside the faulted ones is in a
// primary component of exactly want members (the cluster has re-formed
// without the faulted nodes); want 0 means any size. In a primary
// cluster: whether a node outside the faulted ones takes writes.
func (s Sample) Reformed(faulted []string, want int) bool {
	for name, n := range s.Nodes {
		if contains(faulted, name) {
			continue
		}
		if s.Replicated && n.Writable {
			return true
		}
		if s.Replicated || !n.Primary || n.State != server.Synced {
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
// In a primary cluster: one node takes writes and every other node
// replicates from it, or is fenced.
func (s Sample) Whole(members int) bool {
	if s.Replicated {
		return s.wholeReplicated()
	}
	for _, n := range s.Nodes {
		if !n.Primary || n.State != server.Synced || n.Size != members {
			return false
		}
	}
	return len(s.Nodes) > 0
}

func (s Sample) wholeReplicated() bool {
	writer := ""
	for name, n := range s.Nodes {
		if n.Writable {
			if writer != "" {
				return false // two writers
			}
			writer = name
		}
	}
	if writer == "" {
		return false
	}
	for name, n := range s.Nodes {
		if name != writer && n.Source != writer && !(s.Fenced[name] && n.State == server.Running) {
			return false
		}
	}
	return true
}

// sampler is a workload sampler over the cluster's nodes, read as Samples.
type sampler struct {
	members    int               // a whole cluster's size
	replicated bool              // a primary cluster
	addrs      map[string]string // a node's addresses → its name
	fenced     func() map[string]string
	*workload.Sampler
}

func startSampler(ctx context.Context, l Lab, c *plan.Cluster, nodes []*plan.Node, every time.Duration) *sampler {
	s := &sampler{members: c.Members(), replicated: c.Kind == spec.KindPrimary, addrs: map[string]string{}, fenced: l.Fenced,
		Sampler: workload.StartSampler(ctx, l, nodes, every)}
	for _, n := range nodes {
		s.addrs[n.Address], s.addrs[n.PeerAddress()] = n.Name, n.Name
	}
	return s
}

// sampleOf reads a snapshot as the drill's verdicts need it.
func (s *sampler) sampleOf(sn workload.Snapshot) Sample {
	smp := Sample{At: sn.At, Nodes: map[string]NodeSample{}, Replicated: s.replicated}
	if s.replicated {
		smp.Fenced = map[string]bool{}
		for name, why := range s.fenced() {
			smp.Fenced[name] = why != ""
		}
	}
	for name, st := range sn.Nodes {
		size, _ := strconv.Atoi(st.Status["wsrep_cluster_size"])
		ns := NodeSample{State: st.State, Primary: st.Primary(), Size: size, Writable: st.Writable()}
		if src := s.addrs[st.Status[server.KeySource]]; src != "" && st.Replicating(st.Status[server.KeySource]) {
			ns.Source = src
		}
		smp.Nodes[name] = ns
	}
	return smp
}

// first is the first sample at or after from that satisfies ok.
func (s *sampler) first(from time.Time, ok func(Sample) bool) (time.Time, bool) {
	for _, sn := range s.Snapshots() {
		if !sn.At.Before(from) && ok(s.sampleOf(sn)) {
			return sn.At, true
		}
	}
	return time.Time{}, false
}

// writerBefore is the node that took writes in the last sample begun
// before t that shows one ("": none did). A sample begun a moment before
// t may have read a node after the fault took hold (a paused primary shows
// no writer), so the last one with a writer is the state before it.
func (s *sampler) writerBefore(t time.Time) string {
	w := ""
	for _, sn := range s.Snapshots() {
		if !sn.At.Before(t) {
			break
		}
		if x := s.sampleOf(sn).Writer(); x != "" {
			w = x
		}
	}
	return w
}

// Writer is the node that takes writes in a primary cluster's sample ("":
// none, or more than one).
func (s Sample) Writer() string {
	w := ""
	for name, n := range s.Nodes {
		if n.Writable {
			if w != "" {
				return ""
			}
			w = name
		}
	}
	return w
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

// steadyFrom is the start of the first run of samples from from on for
// which ok held without a break for at least hold (false when none yet).
func (s *sampler) steadyFrom(from time.Time, hold time.Duration, ok func(Sample) bool) (time.Time, bool) {
	var samples []Sample
	for _, sn := range s.Snapshots() {
		if !sn.At.Before(from) {
			samples = append(samples, s.sampleOf(sn))
		}
	}
	return steadyRun(samples, hold, ok)
}

// steadyRun is the start of the first run of samples (in time order) for
// which ok held without a break, from its first sample to one at least
// hold later. Pure.
func steadyRun(samples []Sample, hold time.Duration, ok func(Sample) bool) (time.Time, bool) {
	var start time.Time
	for _, smp := range samples {
		if !ok(smp) {
			start = time.Time{}
			continue
		}
		if start.IsZero() {
			start = smp.At
		}
		if smp.At.Sub(start) >= hold {
			return start, true
		}
	}
	return time.Time{}, false
}

// waitSteady waits up to limit until ok has held for hold without a
// break, from from on: a cluster whole for one sample may still lose a
// node the load left behind.
func (s *sampler) waitSteady(ctx context.Context, from time.Time, limit, hold time.Duration, ok func(Sample) bool) (time.Time, bool) {
	for end := time.Now().Add(limit + hold); time.Now().Before(end) && ctx.Err() == nil; time.Sleep(50 * time.Millisecond) {
		if t, found := s.steadyFrom(from, hold, ok); found {
			return t, true
		}
	}
	return time.Time{}, false
}

func (s *sampler) finish() { s.Stop() }
