package workload

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/server"
	"github.com/hadrill/hadrill/internal/spec"
)

// probeTimeout bounds one node's answer to a sample.
const probeTimeout = 400 * time.Millisecond

// Snapshot is every sampled node at one moment.
type Snapshot struct {
	At    time.Time
	Nodes map[string]server.Status
}

// Sampler reads the state and Galera status of some nodes at a fixed
// period while a benchmark or drill runs, over the nodes' unix sockets (not
// the path the load or the fault takes).
type Sampler struct {
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	snaps  []Snapshot
}

// StartSampler begins sampling nodes every period; Stop ends it.
func StartSampler(ctx context.Context, l Lab, nodes []*plan.Node, every time.Duration) *Sampler {
	ctx, cancel := context.WithCancel(ctx)
	s := &Sampler{cancel: cancel, done: make(chan struct{})}
	go s.loop(ctx, l, nodes, every)
	return s
}

func (s *Sampler) loop(ctx context.Context, l Lab, nodes []*plan.Node, every time.Duration) {
	defer close(s.done)
	conns := server.NewConns(l)
	defer conns.Close()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		snap := Snapshot{At: time.Now(), Nodes: map[string]server.Status{}}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, n := range nodes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st := conns.Probe(ctx, n, probeTimeout)
				mu.Lock()
				snap.Nodes[n.Name] = st
				mu.Unlock()
			}()
		}
		wg.Wait()
		s.mu.Lock()
		s.snaps = append(s.snaps, snap)
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Snapshots returns what was sampled so far.
func (s *Sampler) Snapshots() []Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Snapshot(nil), s.snaps...)
}

// Stop ends sampling and returns every snapshot.
func (s *Sampler) Stop() []Snapshot {
	s.cancel()
	<-s.done
	return s.Snapshots()
}

// SampleColumns are the columns of status.csv.
var SampleColumns = []string{"t_s", "node", "state", "flow_control_paused_ns", "local_recv_queue", "local_send_queue",
	"local_cert_failures", "last_committed"}

var sampled = []string{"wsrep_flow_control_paused_ns", "wsrep_local_recv_queue", "wsrep_local_send_queue",
	"wsrep_local_cert_failures", "wsrep_last_committed"}

// StatusRows turns snapshots into status.csv rows: seconds since the first
// snapshot, then each node (in nodes' order) with its state and counters.
func StatusRows(snaps []Snapshot, nodes []*plan.Node) [][]string {
	var rows [][]string
	for _, sn := range snaps {
		t := strconv.FormatFloat(sn.At.Sub(snaps[0].At).Seconds(), 'f', 1, 64)
		for _, n := range nodes {
			st := sn.Nodes[n.Name]
			row := []string{t, n.Name, string(st.State)}
			for _, k := range sampled {
				row = append(row, st.Status[k])
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// galeraNodes are the lab's Galera members (the ones with flow control).
func galeraNodes(l Lab) []*plan.Node {
	var out []*plan.Node
	for i := range l.Plan().Nodes {
		if n := &l.Plan().Nodes[i]; n.Kind == spec.KindGalera {
			out = append(out, n)
		}
	}
	return out
}
