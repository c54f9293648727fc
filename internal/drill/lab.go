package drill

import (
	"context"
	"database/sql"
	"time"

	"github.com/hadrill/hadrill/internal/chaos"
	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/lb"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/workload"
)

// Lab is what a drill needs of a lab (lab.Lab is one): what any load needs,
// the application's connections, the load balancers, and the faults and
// repairs the scenarios apply.
type Lab interface {
	workload.Lab
	// AppDB connects to addr as the application user, from the client host.
	AppDB(addr string) (*sql.DB, error)
	// LB resolves a load balancer by name ("lb": the first).
	LB(name string) (*plan.LB, error)
	// Inject applies a fault (see package chaos).
	Inject(ctx context.Context, f chaos.Fault) error
	// Heal undoes every fault; Recover starts a cluster whose nodes all
	// crashed; Restart restarts nodes one at a time.
	Heal(ctx context.Context) error
	Recover(ctx context.Context, force string) error
	Restart(ctx context.Context, names []string) error
	RecordFault(r fault.Record) error
	// Drain takes nodes out of load balancing (or back in); Resync makes a
	// Galera node join by a full state transfer.
	Drain(ctx context.Context, names []string, drain bool) error
	Resync(ctx context.Context, name string) error
	// LBWriter is the node a load balancer sends writes to now.
	LBWriter(ctx context.Context, lb *plan.LB) (string, error)
	// LBHolder is the host holding a load balancer's address.
	LBHolder(ctx context.Context, lb *plan.LB) (string, error)
	LBInstances(ctx context.Context, b *plan.LB) []lb.Instance
	// Fenced are the primary clusters' nodes kept read-only and outside
	// replication (node → why), as recorded now.
	Fenced() map[string]string
	// Created is when the lab was made (`up`): a run older than that was
	// drilled on an earlier lab of the same name.
	Created() time.Time
}

// nodes resolves names to the plan's nodes, in the plan's order.
func nodes(p *plan.Plan, names []string) []*plan.Node {
	var out []*plan.Node
	for i := range p.Nodes {
		for _, name := range names {
			if p.Nodes[i].Name == name {
				out = append(out, &p.Nodes[i])
			}
		}
	}
	return out
}
