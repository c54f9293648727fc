package lab

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/supervise"
)

// Deadlines. Galera needs evs/pc timeouts (5-30 s) to give up on peers, and
// a state transfer of a small lab takes seconds; these leave room for both.
const (
	readyDeadline = 90 * time.Second
	stopGrace     = 60 * time.Second
)

func readPid(path string) int { return supervise.ReadPid(path) }

func ownedBy(pid int, n *plan.Node) bool { return supervise.Owned(pid, n.ConfigFile) }

// startServer launches one mariadbd on its host. extra are additional
// server options (e.g. --wsrep-new-cluster for a bootstrap).
func (l *Lab) startServer(n *plan.Node, extra ...string) (*supervise.Proc, error) {
	// A previous server killed a moment ago may still hold the node's ports.
	if old := readPid(n.PidFile); supervise.Present(old) && !supervise.WaitGone(old, 30*time.Second) {
		return nil, fmt.Errorf("%s: the previous server (pid %d) has not exited", n.Name, old)
	}
	if err := os.WriteFile(n.ConfigFile, []byte(n.Config), 0o644); err != nil {
		return nil, err
	}
	argv := append([]string{"mariadbd", "--defaults-file=" + n.ConfigFile}, extra...)
	return supervise.Start(supervise.Spec{Name: n.Name + " mariadbd", Argv: l.Prov.Wrap(n.Host, argv),
		LogFile: filepath.Join(n.Dir, "mariadbd.out"), PidFile: n.PidFile, Dir: n.Dir})
}

// waitReady waits until the node serves: Synced and ready for Galera
// members, answering queries otherwise. It reports the server's own error
// lines when it exits instead.
func (l *Lab) waitReady(ctx context.Context, n *plan.Node, p *supervise.Proc) error {
	db := l.Admin(n)
	defer db.Close()
	err := p.WaitReady(ctx, readyDeadline, 50*time.Millisecond, func(ctx context.Context) error {
		qctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		if n.Kind != "galera" {
			return db.PingContext(qctx)
		}
		st, err := mariadb.Status(qctx, db, "wsrep_%")
		if err != nil {
			return err
		}
		if st["wsrep_local_state_comment"] != "Synced" || st["wsrep_ready"] != "ON" {
			return fmt.Errorf("state %s, cluster %s, ready %s", st["wsrep_local_state_comment"], st["wsrep_cluster_status"], st["wsrep_ready"])
		}
		return nil
	})
	if err != nil {
		if t := mariadb.LogTail(n.LogFile, 4); t != "" {
			err = fmt.Errorf("%w\n%s's error log (%s) says:\n%s", err, n.Name, n.LogFile, t)
		}
	}
	return err
}

// startAndWait starts several servers at once and waits for all of them.
// The first failure cancels the other waits: a cluster member that died
// dooms its peers' start, and its own error is the one that names the cause.
func (l *Lab) startAndWait(ctx context.Context, nodes []*plan.Node, extra map[string][]string) error {
	procs := make([]*supervise.Proc, len(nodes))
	for i, n := range nodes {
		p, err := l.startServer(n, extra[n.Name]...)
		if err != nil {
			return err
		}
		procs[i] = p
	}
	g, gctx := errgroup.WithContext(ctx)
	for i := range nodes {
		g.Go(func() error { return l.waitReady(gctx, nodes[i], procs[i]) })
	}
	return g.Wait()
}

// stopServer stops one node: TERM (a clean Galera leave) then KILL after grace.
func (l *Lab) stopServer(n *plan.Node, grace time.Duration) error {
	pid := l.Pid(n)
	if pid == 0 {
		return nil
	}
	if err := supervise.Stop(pid, grace); err != nil {
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	return nil
}

// stopServers stops nodes in parallel.
func (l *Lab) stopServers(nodes []*plan.Node, grace time.Duration) error {
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func(i int, n *plan.Node) { defer wg.Done(); errs[i] = l.stopServer(n, grace) }(i, n)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Nodes resolves node names (all when empty) to plan nodes.
func (l *Lab) Nodes(names []string) []*plan.Node {
	var out []*plan.Node
	for i := range l.Plan.Nodes {
		n := &l.Plan.Nodes[i]
		if len(names) == 0 || contains(names, n.Name) {
			out = append(out, n)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
