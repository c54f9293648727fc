package lab

import (
	"context"
	"database/sql"
	"strings"
	"sync"
	"time"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/supervise"
)

// Conns keeps one administrative connection pool per node for a series of
// queries (the keeper's loop, a sampler's); safe for concurrent use.
type Conns struct {
	l  *Lab
	mu sync.Mutex
	m  map[string]*sql.DB
}

// NewConns starts an empty set of pools; Close them when done.
func (l *Lab) NewConns() *Conns { return &Conns{l: l, m: map[string]*sql.DB{}} }

// DB is the node's pool, opened on first use.
func (c *Conns) DB(n *plan.Node) *sql.DB {
	c.mu.Lock()
	defer c.mu.Unlock()
	if db := c.m[n.Name]; db != nil {
		return db
	}
	db := c.l.Admin(n)
	c.m[n.Name] = db
	return db
}

// Close closes every pool.
func (c *Conns) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, db := range c.m {
		db.Close()
	}
	c.m = map[string]*sql.DB{}
}

// NodeStatus is what a node says of itself: its state (see NodeState) and,
// for a Galera member that answered, its wsrep_% status variables.
type NodeStatus struct {
	State  string
	Status map[string]string
}

// Probe reads a node's state over db (its admin pool) within timeout:
// Galera's wsrep_local_state_comment for cluster members, "running"
// otherwise; "down" when the server is not there, "paused" when stopped by
// a fault, "unresponsive" when it runs but does not answer in time.
func (l *Lab) Probe(ctx context.Context, db *sql.DB, n *plan.Node, timeout time.Duration) NodeStatus {
	pid := l.Pid(n)
	switch {
	case pid == 0:
		return NodeStatus{State: "down"}
	case supervise.Paused(pid):
		return NodeStatus{State: "paused"}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if n.Kind != "galera" {
		if err := db.PingContext(ctx); err != nil {
			return NodeStatus{State: "unresponsive"}
		}
		return NodeStatus{State: "running"}
	}
	st, err := mariadb.Status(ctx, db, "wsrep_%")
	if err != nil {
		return NodeStatus{State: "unresponsive"}
	}
	return NodeStatus{State: st["wsrep_local_state_comment"], Status: st}
}

// Primary reports whether a Galera node is in a primary component.
func (s NodeStatus) Primary() bool {
	return strings.EqualFold(s.Status["wsrep_cluster_status"], "Primary")
}
