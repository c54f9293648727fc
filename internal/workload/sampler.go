package workload

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/lab"
)

// SampleColumns are the columns of status.csv.
var SampleColumns = []string{"t_s", "node", "state", "flow_control_paused_ns", "local_recv_queue", "local_send_queue",
	"local_cert_failures", "last_committed"}

var sampled = []string{"wsrep_local_state_comment", "wsrep_flow_control_paused_ns", "wsrep_local_recv_queue",
	"wsrep_local_send_queue", "wsrep_local_cert_failures", "wsrep_last_committed"}

// Sampler reads every node's Galera status once a second while a
// benchmark runs (over the nodes' unix sockets, not the benchmark's path).
type Sampler struct {
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	rows   [][]string
}

// StartSampler begins sampling; Stop returns the rows.
func StartSampler(ctx context.Context, l *lab.Lab) *Sampler {
	ctx, cancel := context.WithCancel(ctx)
	s := &Sampler{cancel: cancel, done: make(chan struct{})}
	go s.loop(ctx, l)
	return s
}

func (s *Sampler) loop(ctx context.Context, l *lab.Lab) {
	defer close(s.done)
	t0 := time.Now()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		t := strconv.FormatFloat(time.Since(t0).Seconds(), 'f', 1, 64)
		var wg sync.WaitGroup
		for i := range l.Plan.Nodes {
			n := &l.Plan.Nodes[i]
			if n.Kind != "galera" {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				row := []string{t, n.Name, "down", "", "", "", "", ""}
				if l.Pid(n) != 0 {
					qctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
					db := mariadb.Admin(n.Socket, l.Facts.User)
					st, err := mariadb.Status(qctx, db, "wsrep_%")
					db.Close()
					cancel()
					row[2] = "unresponsive"
					if err == nil {
						for j, k := range sampled {
							row[2+j] = st[k]
						}
					}
				}
				s.mu.Lock()
				s.rows = append(s.rows, row)
				s.mu.Unlock()
			}()
		}
		wg.Wait()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Stop ends sampling and returns the rows (time, node, values).
func (s *Sampler) Stop() [][]string {
	s.cancel()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rows
}
