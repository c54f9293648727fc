package backup

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/provision"
	"github.com/hadrill/hadrill/internal/replication"
	"github.com/hadrill/hadrill/internal/server"
	"github.com/hadrill/hadrill/internal/spec"
	"github.com/hadrill/hadrill/internal/state"
)

// Starter starts servers and returns once all serve (extra: more options
// per node).
type Starter func(ctx context.Context, nodes []*plan.Node, extra map[string][]string) error

// Rebuild makes a replica of a primary cluster (a fenced former primary,
// or any replica) a fresh copy of the primary: mariabackup of the primary
// streamed straight to the node's host and prepared there (nothing kept on
// this computer) replaces its data, which is kept beside it
// (`<datadir>.replaced-<time>`, its binary logs and their archive too: what
// only it held stays readable), and it replicates from the copy's
// position. The copy is made while the node still runs and swapped in
// once whole, so a failed copy changes nothing. The roles lock is held
// throughout, so the keeper does not give the node a role half-way.
func (l *Lab) Rebuild(ctx context.Context, name string, repl *replication.Manager, start Starter) error {
	p := l.Plan
	if err := p.CheckNodes([]string{name}); err != nil {
		return err
	}
	n, _ := p.Node(name)
	c, _ := p.Cluster(n.Cluster)
	if c.Kind != spec.KindPrimary {
		return hderr.User("NODE: %s is a %s node; rebuild makes a replica of a primary cluster a fresh copy of its primary (a Galera node that rejoins gets a state transfer by itself)", name, c.Kind)
	}
	unlock, err := state.RolesOf(p.Dir).Lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	primary, _ := p.Node(repl.PrimaryOf(c))
	switch {
	case primary == n:
		return hderr.User("NODE: %s is the primary of cluster %s; rebuild one of its replicas (or promote another node first)", name, c.Name)
	case !l.Servers.Alive(primary):
		return hderr.User("NODE: the primary %s of cluster %s is down: there is nothing to copy %s from", primary.Name, c.Name, name)
	}
	if why := repl.Fenced(name); why != "" {
		l.logf("%s is fenced: it %s", name, why)
	}
	h := l.Servers.Host(n.Host)
	stamp := time.Now().UTC().Format("20060102T150405")
	staged := n.DataDir + ".rebuild-" + stamp // beside the datadir: on its file system
	logFile := filepath.Join(p.Dir, "rebuild-"+name+".log")
	lf, err := os.Create(logFile)
	if err != nil {
		return err
	}
	defer lf.Close()
	l.logf("rebuilding %s from a copy of the primary %s, streamed to %s (log: %s)", name, primary.Name, n.Host, logFile)
	t0 := time.Now()
	pos, err := l.Clone(ctx, primary, n, staged, lf)
	if err != nil {
		return errors.Join(err, h.RemoveAll(context.WithoutCancel(ctx), staged))
	}
	l.logf("%s: the copy is prepared at GTID %s (%.1fs)", name, pos.GTID, time.Since(t0).Seconds())
	if l.Servers.Alive(n) {
		if err := server.Stop(ctx, h, n, server.StopGrace); err != nil {
			return err
		}
	}
	for _, dir := range []string{n.DataDir, n.BinlogDir} { // on the node's host
		if dir == "" {
			continue
		}
		if _, err := h.Run(ctx, []string{"sh", "-c", `[ ! -e "$1" ] || mv "$1" "$2"`, "sh", dir, dir + ".replaced-" + stamp}, nil); err != nil {
			return err
		}
	}
	arch := ArchiveDir(p, name) // here
	if err := os.Rename(arch, arch+".replaced-"+stamp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	l.logf("%s: its data kept in %s on %s", name, n.DataDir+".replaced-"+stamp, n.Host)
	if _, err := h.Run(ctx, []string{"mv", staged, n.DataDir}, nil); err != nil {
		return err
	}
	if err := provision.PlaceLogs(ctx, p, h, n); err != nil {
		return err
	}
	if err := start(ctx, []*plan.Node{n}, nil); err != nil {
		return err
	}
	return repl.Seeded(ctx, c, n, pos.GTID)
}
