package lab

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/galera/boot"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/infra/machine"
	"github.com/hadrill/hadrill/internal/keeper"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/server"
	"github.com/hadrill/hadrill/internal/spec"
	"github.com/hadrill/hadrill/internal/state"
)

// start starts servers and waits until all serve (extra: more options per node).
func (l *Lab) start(ctx context.Context, nodes []*plan.Node, extra map[string][]string) error {
	kills := l.Kills()
	return l.ExplainKills(kills, server.StartAll(ctx, l.Prov.Host, nodes, extra))
}

// rejoin starts one node (a start, a restart) with first as its options.
// A Galera joiner whose join broke off in a way a new start may get past
// (its donor left, or reported the transfer failed; its IST broke off; it
// left its cluster as it joined) is started again, as a DBA would, the way
// boot.Start does for the joiners it starts (boot.StartAgain).
func (l *Lab) rejoin(ctx context.Context, n *plan.Node, first []string) error {
	err := l.start(ctx, []*plan.Node{n}, map[string][]string{n.Name: first})
	c, ok := l.p.Cluster(n.Cluster)
	if err == nil || !ok || n.Kind != spec.KindGalera {
		return err
	}
	return boot.StartAgain(ctx, bootLab{l}, *c, []*plan.Node{n}, err, l.start)
}

// startForming starts the members of a Galera cluster that form it together.
func (l *Lab) startForming(ctx context.Context, nodes []*plan.Node, extra map[string][]string) error {
	kills := l.Kills()
	return l.ExplainKills(kills, server.StartForming(ctx, l.Prov.Host, nodes, extra))
}

// Kills counts the memory-limit kills on each measured host so far.
func (l *Lab) Kills() map[string]int {
	out := map[string]int{}
	for _, h := range l.p.Hosts {
		if u, ok := machine.Read(l.p, h.Name); ok {
			out[h.Name] = u.OOMKills
		}
	}
	return out
}

// ExplainKills says so when a command failed after a host's memory limit
// killed one of its processes (counted against before): the failure is the
// machine's size, not a hang or a refused connection.
func (l *Lab) ExplainKills(before map[string]int, err error) error {
	if err == nil {
		return nil
	}
	var why []string
	for _, h := range l.p.Hosts {
		u, ok := machine.Read(l.p, h.Name)
		if !ok || u.OOMKills <= before[h.Name] {
			continue
		}
		what := "the kernel's out-of-memory killer"
		if h.Machine != nil {
			what = "the memory limit of its machine " + h.Machine.String()
		}
		why = append(why, fmt.Sprintf("host %s: %d process(es) killed by %s; give the host a larger machine or its cluster a "+
			"smaller memory share (memory:, the buffer pool is half of it)", h.Name, u.OOMKills-before[h.Name], what))
	}
	if len(why) == 0 {
		return err
	}
	return fmt.Errorf("%s\n%w", strings.Join(why, "\n"), err)
}

// Stop stops nodes cleanly (all when names is empty).
func (l *Lab) Stop(ctx context.Context, names []string) error {
	if err := l.p.CheckNodes(names); err != nil {
		return err
	}
	l.warnPrimaryStop(names)
	if len(names) == 0 {
		// the whole lab: the keeper first, or it would fail a primary
		// cluster over to a replica that is about to stop too
		if err := keeper.Daemon(l.p, l.home, exe()).Kill(); err != nil {
			return err
		}
	}
	if err := server.StopAll(ctx, l.Prov.Host, l.Nodes(names), server.StopGrace); err != nil {
		return err
	}
	return l.saveDerived()
}

// warnPrimaryStop says so when named nodes include the primary of a
// cluster that fails over by itself: the keeper will promote a replica
// (a planned stop is a switchover: `promote` first).
func (l *Lab) warnPrimaryStop(names []string) {
	if len(names) == 0 {
		return
	}
	repl := l.Replication()
	for _, c := range l.p.Clusters {
		if p := repl.PrimaryOf(&c); c.AutoFailover && slices.Contains(names, p) {
			l.logf("note: %s is the primary of cluster %s (failover: auto): the keeper fails over to a replica once it stops; `hadrill promote` another node first for a switchover", p, c.Name)
		}
	}
}

// Start starts stopped nodes. A node of a Galera cluster that still has a
// running member joins it; it never bootstraps a second cluster.
func (l *Lab) Start(ctx context.Context, names []string) error {
	if err := l.p.CheckNodes(names); err != nil {
		return err
	}
	if len(names) == 0 {
		return l.startAll(ctx)
	}
	for _, n := range l.Nodes(names) {
		if l.alive(n) {
			continue
		}
		if n.Kind == spec.KindGalera && len(boot.Running(bootLab{l}, n.Cluster)) == 0 {
			return hderr.User("NODE: no other node of cluster %s is running, so %s would have to bootstrap a new cluster; start the whole cluster with `hadrill start --all`", n.Cluster, n.Name)
		}
		if err := l.loseDisks(ctx, false); err != nil {
			return err
		}
		if err := l.Prov.Setup(ctx); err != nil {
			return err
		}
		l.logf("starting %s", n.Name)
		if err := l.rejoin(ctx, n, boot.Rejoin(ctx, bootLab{l}, n)); err != nil {
			return err
		}
	}
	if err := l.Replication().Ensure(ctx); err != nil {
		return err
	}
	if err := l.ensureDaemons(ctx); err != nil {
		return err
	}
	return l.saveDerived()
}

// Restart restarts nodes one at a time (a rolling restart).
func (l *Lab) Restart(ctx context.Context, names []string) error {
	if err := l.p.CheckNodes(names); err != nil {
		return err
	}
	l.warnPrimaryStop(names)
	for _, n := range l.Nodes(names) {
		l.logf("restarting %s", n.Name)
		if err := server.Stop(ctx, l.Prov.Host(n.Host), n, server.StopGrace); err != nil {
			return err
		}
		if n.Kind == spec.KindGalera && len(boot.Running(bootLab{l}, n.Cluster)) == 0 {
			if err := l.startAll(ctx); err != nil {
				return err
			}
			continue
		}
		if err := l.rejoin(ctx, n, boot.Rejoin(ctx, bootLab{l}, n)); err != nil {
			return err
		}
		if err := l.Replication().Ensure(ctx); err != nil {
			return err
		}
	}
	return l.saveDerived()
}

// Recover starts a lab whose nodes crashed: each Galera cluster restarts
// from its most advanced node (positions recovered where unknown), or from
// force when the operator overrides a refusal. A cluster whose running
// nodes lost their quorum and are connected again without forming a
// primary component first gets one back (restoreQuorum).
func (l *Lab) Recover(ctx context.Context, force string) error {
	if force != "" {
		if err := l.p.CheckNodes([]string{force}); err != nil {
			return err
		}
		if n, _ := l.p.Node(force); n.Kind != spec.KindGalera {
			return hderr.User("--force: %s is not a Galera node", force)
		}
	}
	for _, c := range l.p.Clusters {
		if _, err := boot.RestoreQuorum(ctx, bootLab{l}, c); err != nil {
			return err
		}
	}
	return l.startAllForced(ctx, force)
}

// startAll starts every stopped node, cluster by cluster.
func (l *Lab) startAll(ctx context.Context) error { return l.startAllForced(ctx, "") }

func (l *Lab) startAllForced(ctx context.Context, force string) error {
	if err := l.loseDisks(ctx, true); err != nil {
		return err
	}
	if err := l.Prov.Setup(ctx); err != nil {
		return err
	}
	if err := l.wan.Ensure(ctx); err != nil {
		return err
	}
	for _, c := range l.p.Clusters {
		if err := l.startCluster(ctx, c, force); err != nil {
			return fmt.Errorf("cluster %s: %w", c.Name, err)
		}
	}
	if err := l.Replication().Ensure(ctx); err != nil {
		return err
	}
	if err := l.ensureDaemons(ctx); err != nil {
		return err
	}
	return l.saveDerived()
}

func (l *Lab) startCluster(ctx context.Context, c plan.Cluster, force string) error {
	var down []*plan.Node
	for _, name := range c.Nodes {
		if n, _ := l.p.Node(name); !l.alive(n) {
			down = append(down, n)
		}
	}
	if len(down) == 0 {
		return nil
	}
	if c.Kind != spec.KindGalera {
		return l.start(ctx, down, nil)
	}
	return boot.Start(ctx, bootLab{l}, c, down, force)
}

// saveDerived records running/stopped from what actually runs.
func (l *Lab) saveDerived() error {
	for _, n := range l.Nodes(nil) {
		if l.alive(n) {
			return l.save(state.Running)
		}
	}
	return l.save(state.Stopped)
}

// bootLab is the lab as starting a Galera cluster sees it (boot.Lab).
type bootLab struct{ l *Lab }

func (b bootLab) Plan() *plan.Plan             { return b.l.p }
func (b bootLab) Host(name string) host.Host   { return b.l.Prov.Host(name) }
func (b bootLab) Alive(n *plan.Node) bool      { return b.l.alive(n) }
func (b bootLab) Admin(n *plan.Node) *sql.DB   { return b.l.Admin(n) }
func (b bootLab) Logf(format string, a ...any) { b.l.logf(format, a...) }
func (b bootLab) State(ctx context.Context, n *plan.Node) server.State {
	return b.l.Probe(ctx, n).State
}
func (b bootLab) Stop(_ context.Context, n *plan.Node) error { return b.l.servers.Stop(n) }
func (b bootLab) Members(ctx context.Context, n *plan.Node) int {
	db := b.l.Admin(n)
	defer db.Close()
	qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	st, err := mariadb.Status(qctx, db, "wsrep_cluster_size")
	if err != nil {
		return 0
	}
	size, _ := strconv.Atoi(st["wsrep_cluster_size"])
	return size
}
func (b bootLab) Start(ctx context.Context, nodes []*plan.Node, extra map[string][]string) error {
	return b.l.start(ctx, nodes, extra)
}
func (b bootLab) StartForming(ctx context.Context, nodes []*plan.Node, extra map[string][]string) error {
	return b.l.startForming(ctx, nodes, extra)
}
