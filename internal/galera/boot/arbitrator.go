package boot

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/plan"
)

// Garbd is a cluster's arbitrator as its host runs it.
func Garbd(a *plan.Arbitrator) host.Daemon {
	return a.Garbd.Named(a.Name+" garbd", a.Argv)
}

// ArbitratorPid is the arbitrator's pid while it runs, else 0.
func ArbitratorPid(ctx context.Context, l Lab, a *plan.Arbitrator) int {
	p, _ := l.Host(a.Name).Process(ctx, Garbd(a))
	return p.Pid
}

// ArbitratorJoin bounds how long garbd may take to be counted by its
// cluster once started.
const ArbitratorJoin = 30 * time.Second

// StartArbitrator starts a cluster's garbd when it does not run and the
// cluster has a running node to join, and waits until the cluster counts
// it.
func StartArbitrator(ctx context.Context, l Lab, c *plan.Cluster) error {
	a := c.Arbitrator
	if a == nil || ArbitratorPid(ctx, l, a) != 0 {
		return nil
	}
	running := Running(l, c.Name)
	if len(running) == 0 {
		return nil
	}
	n := running[0]
	err := host.EnsureReady(ctx, l.Host(a.Name), Garbd(a), ArbitratorJoin, 100*time.Millisecond, func(ctx context.Context) error {
		db := l.Admin(n)
		defer db.Close()
		st, err := mariadb.Status(ctx, db, "wsrep_cluster_size")
		if err != nil {
			return err
		}
		if size, _ := strconv.Atoi(st["wsrep_cluster_size"]); size != c.Members() {
			return fmt.Errorf("cluster %s has %d members, want %d with arbitrator %s (see %s)", c.Name, size, c.Members(), a.Name, a.LogFile)
		}
		return nil
	})
	if err != nil {
		return err
	}
	l.Logf("arbitrator %s joined cluster %s", a.Name, c.Name)
	return nil
}
