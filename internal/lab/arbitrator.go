package lab

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/supervise"
)

// arbitratorJoin bounds the wait for garbd to be counted in its cluster.
const arbitratorJoin = 30 * time.Second

// startArbitrators starts each cluster's garbd that is not running, once
// the cluster has a running node, and waits until the cluster counts it.
func (l *Lab) startArbitrators(ctx context.Context) error {
	for i := range l.Plan.Clusters {
		c := &l.Plan.Clusters[i]
		a := c.Arbitrator
		if a == nil || l.arbitratorPid(a) != 0 || len(l.running(c.Name)) == 0 {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(a.PidFile), 0o755); err != nil {
			return err
		}
		p, err := supervise.Start(supervise.Spec{Name: a.Name + " garbd", Argv: l.Prov.Wrap(a.Name, a.Argv), LogFile: a.LogFile, PidFile: a.PidFile, Dir: filepath.Dir(a.LogFile)})
		if err != nil {
			return err
		}
		n := l.running(c.Name)[0]
		err = p.WaitReady(ctx, arbitratorJoin, 100*time.Millisecond, func(ctx context.Context) error {
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
		l.logf("arbitrator %s joined cluster %s", a.Name, c.Name)
	}
	return nil
}

// arbitratorPid is garbd's pid when it runs, else 0.
func (l *Lab) arbitratorPid(a *plan.Arbitrator) int {
	pid := supervise.ReadPid(a.PidFile)
	if supervise.Owned(pid, a.Group) {
		return pid
	}
	return 0
}

func (l *Lab) stopArbitrators() error {
	for _, c := range l.Plan.Clusters {
		if a := c.Arbitrator; a != nil {
			if pid := l.arbitratorPid(a); pid != 0 {
				if err := supervise.Kill(pid); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
