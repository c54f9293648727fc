package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/galera"
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
		if n.Kind == spec.KindGalera && len(l.running(n.Cluster)) == 0 {
			return hderr.User("NODE: no other node of cluster %s is running, so %s would have to bootstrap a new cluster; start the whole cluster with `hadrill start --all`", n.Cluster, n.Name)
		}
		if err := l.loseDisks(ctx, false); err != nil {
			return err
		}
		if err := l.Prov.Setup(ctx); err != nil {
			return err
		}
		l.logf("starting %s", n.Name)
		st := l.knownState(ctx, n)
		if err := l.start(ctx, []*plan.Node{n}, map[string][]string{n.Name: startArgs(st)}); err != nil {
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
		if n.Kind == spec.KindGalera && len(l.running(n.Cluster)) == 0 {
			if err := l.startAll(ctx); err != nil {
				return err
			}
			continue
		}
		if err := l.start(ctx, []*plan.Node{n}, nil); err != nil {
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
		if _, err := l.restoreQuorum(ctx, c); err != nil {
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
	saved := l.knownStates(ctx, down)
	if len(down) < len(c.Nodes) { // joiners of a running cluster, from their own positions (IST)
		extra := map[string][]string{}
		for i, n := range down {
			extra[n.Name] = startArgs(saved[i])
		}
		return l.start(ctx, down, extra)
	}
	if !slices.Contains(c.Nodes, force) {
		force = "" // the override concerns another cluster
	}
	choice, err := galera.ChooseStartForced(saved, force)
	if err != nil {
		return err
	}
	l.logf("cluster %s: %s", c.Name, choice.Reason)
	if len(choice.Joiners) > 0 { // they hold no state: they join the others once those serve
		var holders, joiners []*plan.Node
		var held []galera.SavedState
		for i, n := range down {
			if slices.Contains(choice.Joiners, n.Name) {
				joiners = append(joiners, n)
			} else {
				holders, held = append(holders, n), append(held, saved[i])
			}
		}
		if err := l.startFrom(ctx, holders, held, choice); err != nil {
			return err
		}
		l.logf("cluster %s: %s joining by a full state transfer", c.Name, strings.Join(choice.Joiners, ", "))
		return l.start(ctx, joiners, nil)
	}
	return l.startFrom(ctx, down, saved, choice)
}

// startFrom starts a stopped cluster's nodes as choice says (saved: their
// states, in the same order).
func (l *Lab) startFrom(ctx context.Context, down []*plan.Node, saved []galera.SavedState, choice galera.StartChoice) error {
	extra := map[string][]string{}
	for i, n := range down {
		extra[n.Name] = startArgs(saved[i])
	}
	if choice.Mode == galera.StartTogether {
		if choice.Reseed {
			c, _ := l.p.Cluster(down[0].Cluster)
			for _, n := range down {
				if err := l.seedNode(ctx, n, saved[0].UUID, saved[0].Seqno, memberUUIDs(l.p, *c)); err != nil {
					return err
				}
			}
		}
		return l.startForming(ctx, down, extra)
	}
	first, _ := l.p.Node(choice.Bootstrap)
	h := l.Prov.Host(first.Host)
	grastate := filepath.Join(first.DataDir, mariadb.Grastate)
	b, err := h.ReadFile(ctx, grastate)
	if err != nil {
		return err
	}
	if err := h.WriteFile(ctx, grastate, []byte(mariadb.SafeToBootstrap(string(b))), 0o660); err != nil {
		return err
	}
	boot := map[string][]string{first.Name: append([]string{server.BootstrapFlag}, extra[first.Name]...)}
	if err := l.start(ctx, []*plan.Node{first}, boot); err != nil {
		return err
	}
	var rest []*plan.Node
	for _, n := range down {
		if n != first {
			rest = append(rest, n)
		}
	}
	// the joiners take their state from the node that bootstrapped: a node
	// that has just joined by IST is missing those write sets in its gcache
	// and fails as a donor ("IST didn't contain all write sets"); the
	// trailing comma lets Galera pick another when it must
	for _, n := range rest {
		extra[n.Name] = append(extra[n.Name], "--wsrep-sst-donor="+first.Name+",")
	}
	return l.start(ctx, rest, extra)
}

func memberUUIDs(p *plan.Plan, c plan.Cluster) []string {
	var out []string
	for _, name := range c.Nodes {
		n, _ := p.Node(name)
		out = append(out, n.UUID)
	}
	return out
}

// knownStates reads the saved states of nodes, recovering in parallel the
// positions their grastate.dat no longer holds.
func (l *Lab) knownStates(ctx context.Context, nodes []*plan.Node) []galera.SavedState {
	out := make([]galera.SavedState, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() { defer wg.Done(); out[i] = l.knownState(ctx, n) }()
	}
	wg.Wait()
	return out
}

// knownState is a node's saved state; after a crash (seqno -1) the position
// is recovered from InnoDB, as production start scripts do.
func (l *Lab) knownState(ctx context.Context, n *plan.Node) galera.SavedState {
	h := l.Prov.Host(n.Host)
	s := savedState(ctx, h, n)
	if !s.Present || s.Seqno >= 0 || s.Empty() || n.Kind != spec.KindGalera {
		return s
	}
	if err := h.WriteFile(ctx, n.ConfigFile, []byte(n.Config), 0o644); err != nil {
		return s
	}
	uuid, seqno, err := mariadb.RecoverPosition(ctx, h, server.Daemon(n).Argv, filepath.Join(n.Dir, "recover.log"))
	if why := mariadb.IOError(errString(err)); why != "" { // the disk failed, not the data: nothing may be concluded
		s.Unreadable = "recovering its position met an IO error: " + why
		return s
	}
	if err != nil || seqno < 0 || uuid != s.UUID {
		l.logf("%s: position not recovered (%v)", n.Name, orNone(err, uuid, s.UUID))
		return s
	}
	s.Seqno, s.Recovered = seqno, true
	l.logf("%s: recovered position %s:%d", n.Name, uuid, seqno)
	return s
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func orNone(err error, got, want string) string {
	if err != nil {
		return err.Error()
	}
	return "recovered state " + got + ", saved state " + want
}

// startArgs hands a recovered position to the server, which otherwise would
// start from grastate.dat's unknown one and lose the cluster's history.
func startArgs(s galera.SavedState) []string {
	if !s.Recovered {
		return nil
	}
	return []string{fmt.Sprintf("--wsrep-start-position=%s:%d", s.UUID, s.Seqno)}
}

func savedState(ctx context.Context, h host.Host, n *plan.Node) galera.SavedState {
	s := galera.SavedState{Node: n.Name}
	b, err := h.ReadFile(ctx, filepath.Join(n.DataDir, mariadb.Grastate))
	if errors.Is(err, os.ErrNotExist) {
		return s
	}
	if err != nil { // an IO error says nothing of the node's state
		s.Unreadable = err.Error()
		return s
	}
	if parsed, err := galera.ParseGrastate(string(b)); err == nil {
		s = parsed
		s.Node = n.Name
	}
	_, err = h.ReadFile(ctx, filepath.Join(n.DataDir, mariadb.Gvwstate))
	s.HasView = err == nil
	return s
}

// seedNode writes a Galera node's state files (see mariadb.SeedGalera).
func (l *Lab) seedNode(ctx context.Context, n *plan.Node, stateUUID string, seqno int64, members []string) error {
	files, err := mariadb.SeedGalera(stateUUID, seqno, n.UUID, members)
	if err != nil {
		return err
	}
	h := l.Prov.Host(n.Host)
	for name, text := range files {
		if err := h.WriteFile(ctx, filepath.Join(n.DataDir, name), []byte(text), 0o660); err != nil {
			return err
		}
	}
	return nil
}

// running lists the running nodes of a cluster.
func (l *Lab) running(cluster string) []*plan.Node {
	var out []*plan.Node
	for _, n := range l.Nodes(nil) {
		if n.Cluster == cluster && l.alive(n) {
			out = append(out, n)
		}
	}
	return out
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

// restoreQuorum gives a Galera cluster a primary component again when its
// running members are all connected and none is in one (a quorum lost to a
// crash during a partition, which Galera does not always give back by
// itself once the nodes meet again): the most advanced bootstraps one
// (pc.bootstrap), as Galera's documentation prescribes. It returns that
// node ("" when nothing was done).
func (l *Lab) restoreQuorum(ctx context.Context, c plan.Cluster) (string, error) {
	if c.Kind != spec.KindGalera {
		return "", nil
	}
	var members []galera.Member
	var alive []*plan.Node
	for _, name := range c.Nodes {
		n, _ := l.p.Node(name)
		if !l.alive(n) {
			continue
		}
		alive = append(alive, n)
		db := l.Admin(n)
		qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		st, err := mariadb.Status(qctx, db, "wsrep_%")
		cancel()
		db.Close()
		if err != nil {
			members = append(members, galera.Member{Name: n.Name})
			continue
		}
		members = append(members, galera.MemberOf(n.Name, st))
	}
	if len(alive) == 0 {
		return "", nil
	}
	size := len(alive)
	if a := c.Arbitrator; a != nil && l.garbdPid(ctx, a) != 0 {
		size++
	}
	name, why := galera.ChooseQuorum(members, size)
	if name == "" {
		return "", nil
	}
	n, _ := l.p.Node(name)
	db := l.Admin(n)
	defer db.Close()
	if _, err := db.ExecContext(ctx, "SET GLOBAL wsrep_provider_options='pc.bootstrap=YES'"); err != nil {
		return "", fmt.Errorf("cluster %s: pc.bootstrap on %s: %w", c.Name, name, err)
	}
	l.logf("cluster %s: %s", c.Name, why)
	return name, nil
}
