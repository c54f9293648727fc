package drill

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/lab"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/supervise"
)

// NodeSample is what one node said at one moment.
type NodeSample struct {
	State   string // Synced, Donor/Desynced, ..., running, down, paused, unresponsive
	Primary bool   // in a primary component (always true outside Galera when running)
	Size    int    // cluster size it sees
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
		if contains(faulted, name) || !n.Primary || n.State != "Synced" {
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
		if !n.Primary || n.State != "Synced" || n.Size != members {
			return false
		}
	}
	return len(s.Nodes) > 0
}

// sampler polls the cluster's nodes over their admin sockets.
type sampler struct {
	members int // a whole cluster's size
	mu      sync.Mutex
	samples []Sample
	stop    chan struct{}
	done    chan struct{}
}

func startSampler(ctx context.Context, l *lab.Lab, nodes []*plan.Node, members int, every time.Duration) *sampler {
	s := &sampler{members: members, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			smp := Sample{At: time.Now(), Nodes: map[string]NodeSample{}}
			var mu sync.Mutex
			var wg sync.WaitGroup
			for _, n := range nodes {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ns := probe(ctx, l, n)
					mu.Lock()
					smp.Nodes[n.Name] = ns
					mu.Unlock()
				}()
			}
			wg.Wait()
			s.mu.Lock()
			s.samples = append(s.samples, smp)
			s.mu.Unlock()
			select {
			case <-s.stop:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func probe(ctx context.Context, l *lab.Lab, n *plan.Node) NodeSample {
	pid := l.Pid(n)
	switch {
	case pid == 0:
		return NodeSample{State: "down"}
	case supervise.Paused(pid):
		return NodeSample{State: "paused"}
	}
	ctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	db := l.Admin(n)
	defer db.Close()
	if n.Kind != "galera" {
		if db.PingContext(ctx) != nil {
			return NodeSample{State: "unresponsive"}
		}
		return NodeSample{State: "running", Primary: true, Size: 1}
	}
	st, err := mariadb.Status(ctx, db, "wsrep_%")
	if err != nil {
		return NodeSample{State: "unresponsive"}
	}
	size, _ := strconv.Atoi(st["wsrep_cluster_size"])
	return NodeSample{State: st["wsrep_local_state_comment"], Primary: st["wsrep_cluster_status"] == "Primary", Size: size}
}

// first is the first sample at or after from that satisfies ok.
func (s *sampler) first(from time.Time, ok func(Sample) bool) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, smp := range s.samples {
		if !smp.At.Before(from) && ok(smp) {
			return smp.At, true
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

func (s *sampler) finish() {
	close(s.stop)
	<-s.done
}
