// Package boot starts and recovers Galera clusters from their nodes'
// saved states: which node bootstraps, which join, the positions recovered
// from InnoDB after a crash, a primary component given back to a cluster
// that lost its quorum. The decisions are package galera's (pure); boot
// reads the states off the hosts and starts the servers through the
// narrow Lab it is given.
package boot

import (
	"context"
	"database/sql"
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
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/server"
	"github.com/hadrill/hadrill/internal/spec"
)

// Lab is what starting a Galera cluster needs of a lab.
type Lab interface {
	Plan() *plan.Plan
	Host(name string) host.Host
	Alive(n *plan.Node) bool
	// Admin is an admin connection pool to a node's server (closed by the
	// caller).
	Admin(n *plan.Node) *sql.DB
	// Start starts servers and returns once all serve (extra: more
	// options per node); StartForming starts the members of a cluster
	// that form it together.
	Start(ctx context.Context, nodes []*plan.Node, extra map[string][]string) error
	StartForming(ctx context.Context, nodes []*plan.Node, extra map[string][]string) error
	// State is a node's server's state now; Stop stops its server.
	State(ctx context.Context, n *plan.Node) server.State
	// Members is how many members a running node's view of its cluster
	// counts (wsrep_cluster_size; 0: unknown).
	Members(ctx context.Context, n *plan.Node) int
	Stop(ctx context.Context, n *plan.Node) error
	Logf(format string, a ...any)
}

// Rejoin is the server options of a node joining its running cluster: its
// recovered position, after a crash (none when its saved state holds it);
// none when its last run held write sets its cluster did not, its Galera
// state removed (forgetReversed).
func Rejoin(ctx context.Context, l Lab, n *plan.Node) []string {
	forgetReversed(ctx, l, []*plan.Node{n})
	return startArgs(knownState(ctx, l, n))
}

// forgetReversed removes the Galera state of the stopped nodes that join a
// running cluster and whose last run held write sets their cluster did not
// (ForgetIfReversed): from their own positions they would hide them.
func forgetReversed(ctx context.Context, l Lab, joiners []*plan.Node) {
	for _, n := range joiners {
		if _, err := ForgetIfReversed(ctx, l, n); err != nil {
			l.Logf("%s: %v", n.Name, err)
		}
	}
}

// Start starts the stopped nodes (down) of a Galera cluster: nodes of a
// cluster that still runs join it from their own positions (IST); a
// cluster whose every node is down starts from its most advanced node, or
// from force when the operator overrides a refusal (galera.ChooseStart).
// It returns once no member is still finishing a state transfer
// (settled): each node serves as it starts, but a donor goes on donating
// after its joiner serves.
func Start(ctx context.Context, l Lab, c plan.Cluster, down []*plan.Node, force string) error {
	if err := start(ctx, l, c, down, force); err != nil {
		return err
	}
	settled(ctx, l, c)
	return nil
}

// SettleWithin bounds how long a start waits for its cluster's members to
// end their state transfers.
const SettleWithin = 30 * time.Second

// settled waits, at most SettleWithin, until no running member of cluster
// c is between states (Donor/Desynced, Joining, Joined: a state transfer
// still ending); one that stays so is said, not waited for
// longer (desynced by hand, a transfer of a large dataset to a joiner of
// another start).
func settled(ctx context.Context, l Lab, c plan.Cluster) {
	for end := time.Now().Add(SettleWithin); ; {
		var between []string
		for _, n := range Running(l, c.Name) {
			if st := l.State(ctx, n); transient(st) {
				between = append(between, fmt.Sprintf("%s %s", n.Name, st))
			}
		}
		if len(between) == 0 || ctx.Err() != nil {
			return
		}
		if time.Now().After(end) {
			l.Logf("cluster %s: %s still, %v after its start", c.Name, strings.Join(between, ", "), SettleWithin)
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// transient says whether a Galera member's state is one it passes
// through as a state transfer ends.
func transient(st server.State) bool {
	switch st {
	case server.DonorDesynced, "Joining", "Joined":
		return true
	}
	return false
}

func start(ctx context.Context, l Lab, c plan.Cluster, down []*plan.Node, force string) error {
	if len(down) < len(c.Nodes) { // joiners of a running cluster, from their own positions (IST)
		forgetReversed(ctx, l, down)
		saved := knownStates(ctx, l, down)
		extra := map[string][]string{}
		for i, n := range down {
			extra[n.Name] = startArgs(saved[i])
		}
		return StartAgain(ctx, l, c, down, l.Start(ctx, down, extra), l.Start)
	}
	saved := knownStates(ctx, l, down)
	if !slices.Contains(c.Nodes, force) {
		force = "" // the override concerns another cluster
	}
	choice, err := galera.ChooseStartForced(saved, force)
	if err != nil {
		return err
	}
	l.Logf("cluster %s: %s", c.Name, choice.Reason)
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
		if err := startFrom(ctx, l, holders, held, choice); err != nil {
			return err
		}
		l.Logf("cluster %s: %s joining by a full state transfer", c.Name, strings.Join(choice.Joiners, ", "))
		return StartAgain(ctx, l, c, joiners, l.Start(ctx, joiners, nil), l.Start)
	}
	start := l.Start
	if choice.Mode == galera.StartTogether {
		start = l.StartForming // once more, it sets every member back on Galera's stock timing
	}
	return StartAgain(ctx, l, c, down, startFrom(ctx, l, down, saved, choice), start)
}

// StartAgain starts once more, at most JoinTries times, the nodes of down
// whose start (its error: err) broke off in a way a new start may get past
// (JoinAborted) or that left their cluster as they joined (outOfCluster),
// as a DBA would, while another member of their cluster runs for them to
// join: whichever way the cluster was started (joiners of a running one, a
// bootstrap and its joiners, members re-forming it together), a member
// that falls out of it as it forms is a joiner of what the others formed.
// start then waits for them and for the nodes of down that run (not
// started again); a node of down that failed otherwise stays down. The
// lab's single-node starts (a start, a restart) retry through it too.
func StartAgain(ctx context.Context, l Lab, c plan.Cluster, down []*plan.Node, err error,
	start func(context.Context, []*plan.Node, map[string][]string) error) error {
	for try := 0; err != nil && try < JoinTries && ctx.Err() == nil; try++ {
		again := slices.Concat(JoinAborted(ctx, l, down), outOfCluster(ctx, l, down, err))
		if len(again) == 0 || !othersRun(l, c, down, again) {
			break
		}
		forgotten(ctx, l, c)
		wait := slices.Clone(again) // and those that run, waited for: a node that failed otherwise is not started again
		for _, n := range down {
			if !slices.Contains(again, n) && l.Alive(n) {
				wait = append(wait, n)
			}
		}
		err = start(ctx, wait, joinArgs(ctx, l, again))
	}
	return err
}

// ForgetWithin bounds how long a start waits for a cluster to forget the
// joiners that failed before it starts them again.
const ForgetWithin = 20 * time.Second

// forgotten waits, at most ForgetWithin, until a running member's view of
// cluster c counts only what runs (its running servers and arbitrator): a
// joiner that failed is a member until the others evict it, and one
// started again before that joins beside its dead self. Once the view has
// counted both, the joiner failing again leaves the others without a
// majority of that view, and they lose their primary component (two of
// four, seen on a busy computer as a state transfer failed twice).
func forgotten(ctx context.Context, l Lab, c plan.Cluster) {
	running := Running(l, c.Name)
	if len(running) == 0 {
		return
	}
	want := len(running)
	if a := c.Arbitrator; a != nil && ArbitratorPid(ctx, l, a) != 0 {
		want++
	}
	for end := time.Now().Add(ForgetWithin); ; {
		size := l.Members(ctx, running[0])
		if size <= want || ctx.Err() != nil {
			return
		}
		if time.Now().After(end) {
			l.Logf("cluster %s: %s still counts %d members, %d run, %v after a start failed; starting again", c.Name, running[0].Name, size, want, ForgetWithin)
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// othersRun says whether a member of cluster c other than again runs:
// one alive, or one not among down (the cluster they join).
func othersRun(l Lab, c plan.Cluster, down, again []*plan.Node) bool {
	for _, name := range c.Nodes {
		inAgain := slices.ContainsFunc(again, func(n *plan.Node) bool { return n.Name == name })
		inDown := slices.ContainsFunc(down, func(n *plan.Node) bool { return n.Name == name })
		if n, ok := l.Plan().Node(name); ok && !inAgain && (!inDown || l.Alive(n)) {
			return true
		}
	}
	return false
}

// JoinTries is how many more times a joiner whose start broke off in the
// middle of its state transfer is started.
const JoinTries = 2

// JoinAborted are the nodes of down that are not running because their
// join broke off in a way a new start may get past (their donor left the
// group during their state transfer, their incremental transfer failed:
// Galera abandons it; a DBA starts them again), said; and those that
// exited because the primary component they joined had applied fewer
// write sets than they had, their Galera state removed (ForgetIfReversed).
func JoinAborted(ctx context.Context, l Lab, down []*plan.Node) []*plan.Node {
	var out []*plan.Node
	for _, n := range down {
		if l.Alive(n) {
			continue
		}
		b, err := l.Host(n.Host).ReadFile(ctx, n.LogFile)
		if err != nil {
			continue
		}
		if why := mariadb.JoinAborted(string(b)); why != "" {
			l.Logf("%s: %s: started again", n.Name, why)
			out = append(out, n)
			continue
		}
		if forgot, ferr := ForgetIfReversed(ctx, l, n); ferr != nil {
			l.Logf("%s: %v", n.Name, ferr)
		} else if forgot {
			out = append(out, n)
		}
	}
	return out
}

// outOfCluster are the nodes of down whose start failed because they left
// their cluster as they joined (state Inconsistent: the primary component
// they joined had applied fewer write sets than they had, or voted them
// out), stopped so that they start again: Galera keeps such a server out
// until it restarts. A node is known out from the error that names it, or
// from its state (a start of several ends at the first failure); a node
// the error names is stopped even when it is too busy to answer a probe.
// One that left because the others had applied fewer write sets has its
// Galera state removed first (ForgetIfReversed).
func outOfCluster(ctx context.Context, l Lab, down []*plan.Node, err error) []*plan.Node {
	if !errors.Is(err, server.ErrOutOfCluster) {
		return nil
	}
	named := server.OutOfClusterNodes(err)
	var out []*plan.Node
	for _, n := range down {
		if !l.Alive(n) || !slices.Contains(named, n.Name) && !IsOut(ctx, l, n) {
			continue
		}
		l.Logf("%s: it left its cluster as it joined (%s): stopped, and started again", n.Name, strings.SplitN(err.Error(), "\n", 2)[0])
		if serr := l.Stop(ctx, n); serr != nil {
			l.Logf("%s: stopping it: %v", n.Name, serr)
			continue
		}
		if _, ferr := ForgetIfReversed(ctx, l, n); ferr != nil {
			l.Logf("%s: %v", n.Name, ferr)
			continue
		}
		out = append(out, n)
	}
	return out
}

// IsOut says whether a running Galera member is out of its cluster, from
// its state and, when it is too busy to answer, its log (server.Out).
func IsOut(ctx context.Context, l Lab, n *plan.Node) bool {
	st, voted, reversed := l.State(ctx, n), "", ""
	if st == server.Unresponsive {
		voted, reversed = server.VotedOut(ctx, l.Host(n.Host), n)
	}
	return server.Out(st, voted, reversed)
}

// ForgetIfReversed removes the Galera state (grastate.dat, gvwstate.dat)
// of a stopped member whose last run left its cluster because the primary
// component it rejoined had applied fewer write sets than it had (Galera:
// "Reversing history … Data loss is possible"), so that it joins again by
// a full state transfer, as a DBA makes it: from its own position it would
// take the cluster's write sets after that position by IST and keep its
// own in place of the cluster's at the positions they share, a copy that
// differs with nothing to say so. What only it had applied is gone (the
// drill's audit says whether any of it was acknowledged). Its state is
// kept while no other member of its cluster runs: none could give it a
// copy, and its data may be the most advanced there is. It says whether
// it removed it (false when it had none left: removed already). A start
// of a stopped member that joins a running cluster asks first: from its
// own position it would take an IST once the cluster passed that
// position, Galera would see nothing to reverse, and the difference would
// stay.
func ForgetIfReversed(ctx context.Context, l Lab, n *plan.Node) (bool, error) {
	if n.Kind != spec.KindGalera || !slices.ContainsFunc(Running(l, n.Cluster), func(o *plan.Node) bool { return o.Name != n.Name }) {
		return false, nil
	}
	h := l.Host(n.Host)
	if !hasState(ctx, h, n) {
		return false, nil
	}
	b, err := h.ReadFile(ctx, n.LogFile)
	if err != nil {
		return false, nil // no log read: nothing known of a reversal
	}
	why := mariadb.Reversed(string(b))
	if why == "" {
		return false, nil
	}
	if err := forgetState(ctx, h, n); err != nil {
		return false, fmt.Errorf("removing its Galera state after it left its cluster (%s): %w", why, err)
	}
	l.Logf("%s: it held write sets its cluster did not (%s): its Galera state removed, it joins by a full state transfer", n.Name, why)
	return true, nil
}

// joinArgs are joiners' options from their positions as known now.
func joinArgs(ctx context.Context, l Lab, nodes []*plan.Node) map[string][]string {
	extra := map[string][]string{}
	for i, st := range knownStates(ctx, l, nodes) {
		extra[nodes[i].Name] = startArgs(st)
	}
	return extra
}

// startFrom starts a stopped cluster's nodes as choice says (saved: their
// states, in the same order).
func startFrom(ctx context.Context, l Lab, down []*plan.Node, saved []galera.SavedState, choice galera.StartChoice) error {
	extra := map[string][]string{}
	for i, n := range down {
		extra[n.Name] = startArgs(saved[i])
	}
	if choice.Mode == galera.StartTogether {
		if choice.Reseed {
			for _, n := range down {
				if err := Seed(ctx, l.Host(n.Host), l.Plan(), n, saved[0].UUID, saved[0].Seqno); err != nil {
					return err
				}
			}
		}
		return l.StartForming(ctx, down, extra)
	}
	first, _ := l.Plan().Node(choice.Bootstrap)
	h := l.Host(first.Host)
	grastate := filepath.Join(first.DataDir, mariadb.Grastate)
	b, err := h.ReadFile(ctx, grastate)
	if err != nil {
		return err
	}
	if err := h.WriteFile(ctx, grastate, []byte(mariadb.SafeToBootstrap(string(b))), 0o660); err != nil {
		return err
	}
	boot := map[string][]string{first.Name: append([]string{server.BootstrapFlag}, extra[first.Name]...)}
	if err := l.Start(ctx, []*plan.Node{first}, boot); err != nil {
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
	return l.Start(ctx, rest, extra)
}

// knownStates reads the saved states of nodes, recovering in parallel the
// positions their grastate.dat no longer holds.
func knownStates(ctx context.Context, l Lab, nodes []*plan.Node) []galera.SavedState {
	out := make([]galera.SavedState, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() { defer wg.Done(); out[i] = knownState(ctx, l, n) }()
	}
	wg.Wait()
	return out
}

// knownState is a node's saved state; after a crash (seqno -1) the position
// is recovered from InnoDB, as production start scripts do.
func knownState(ctx context.Context, l Lab, n *plan.Node) galera.SavedState {
	h := l.Host(n.Host)
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
		l.Logf("%s: position not recovered (%v)", n.Name, orNone(err, uuid, s.UUID))
		return s
	}
	s.Seqno, s.Recovered = seqno, true
	l.Logf("%s: recovered position %s:%d", n.Name, uuid, seqno)
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

// Seed writes a Galera node's state files on its host (see
// mariadb.SeedGalera): the cluster's state at seqno and its last primary
// view, every member of n's cluster in it; a node of a new cluster, or of
// one re-formed from a known state.
func Seed(ctx context.Context, h host.Host, p *plan.Plan, n *plan.Node, stateUUID string, seqno int64) error {
	c, ok := p.Cluster(n.Cluster)
	if !ok {
		return fmt.Errorf("%s: cluster %s not in plan", n.Name, n.Cluster)
	}
	var members []string
	for _, name := range c.Nodes {
		m, _ := p.Node(name)
		members = append(members, m.UUID)
	}
	files, err := mariadb.SeedGalera(stateUUID, seqno, n.UUID, members)
	if err != nil {
		return err
	}
	for name, text := range files {
		if err := h.WriteFile(ctx, filepath.Join(n.DataDir, name), []byte(text), 0o660); err != nil {
			return err
		}
	}
	return nil
}

// RestoreQuorum gives a Galera cluster a primary component again when its
// running members are all connected and none is in one (a quorum lost to a
// crash during a partition, which Galera does not always give back by
// itself once the nodes meet again): the most advanced bootstraps one
// (pc.bootstrap), as Galera's documentation prescribes. It returns that
// node ("" when nothing was done).
func RestoreQuorum(ctx context.Context, l Lab, c plan.Cluster) (string, error) {
	if c.Kind != spec.KindGalera {
		return "", nil
	}
	var members []galera.Member
	var alive []*plan.Node
	for _, name := range c.Nodes {
		n, _ := l.Plan().Node(name)
		if !l.Alive(n) {
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
	if a := c.Arbitrator; a != nil && ArbitratorPid(ctx, l, a) != 0 {
		size++
	}
	name, why := galera.ChooseQuorum(members, size)
	if name == "" {
		return "", nil
	}
	n, _ := l.Plan().Node(name)
	db := l.Admin(n)
	defer db.Close()
	if _, err := db.ExecContext(ctx, "SET GLOBAL wsrep_provider_options='pc.bootstrap=YES'"); err != nil {
		return "", fmt.Errorf("cluster %s: pc.bootstrap on %s: %w", c.Name, name, err)
	}
	l.Logf("cluster %s: %s", c.Name, why)
	return name, nil
}

// Resync makes a Galera node join by a full state transfer, as a node
// whose data was lost does: stopped cleanly, its Galera state removed
// (grastate.dat, gvwstate.dat: its position unknown), then started without
// a position, so it takes a full copy (SST) from a donor the cluster
// picks while the others go on. It returns once the node is Synced.
func Resync(ctx context.Context, l Lab, name string) error {
	p := l.Plan()
	if err := p.CheckNodes([]string{name}); err != nil {
		return err
	}
	n, _ := p.Node(name)
	c, _ := p.Cluster(n.Cluster)
	if c.Kind != spec.KindGalera {
		return hderr.User("NODE: %s is a %s node; a full state transfer is a Galera node's (rebuild makes a replica a fresh copy)", name, c.Kind)
	}
	if !slices.ContainsFunc(Running(l, n.Cluster), func(o *plan.Node) bool { return o != n }) {
		return hderr.User("NODE: no other node of cluster %s runs: there is no donor for %s", c.Name, name)
	}
	h := l.Host(n.Host)
	if err := server.Stop(ctx, h, n, server.StopGrace); err != nil {
		return err
	}
	if err := forgetState(ctx, h, n); err != nil {
		return err
	}
	l.Logf("%s: stopped, its Galera state removed: it joins by a full state transfer", name)
	return l.Start(ctx, []*plan.Node{n}, nil)
}

// hasState says whether a node's data directory holds Galera state.
func hasState(ctx context.Context, h host.Host, n *plan.Node) bool {
	for _, f := range []string{mariadb.Grastate, mariadb.Gvwstate} {
		if _, err := h.ReadFile(ctx, filepath.Join(n.DataDir, f)); err == nil {
			return true
		}
	}
	return false
}

// forgetState removes a stopped Galera node's state (grastate.dat,
// gvwstate.dat): its position unknown, it joins by a full state transfer.
func forgetState(ctx context.Context, h host.Host, n *plan.Node) error {
	for _, f := range []string{mariadb.Grastate, mariadb.Gvwstate} {
		if err := h.RemoveAll(ctx, filepath.Join(n.DataDir, f)); err != nil {
			return err
		}
	}
	return nil
}

// Running lists the running nodes of a cluster.
func Running(l Lab, cluster string) []*plan.Node {
	p := l.Plan()
	var out []*plan.Node
	for i := range p.Nodes {
		if n := &p.Nodes[i]; n.Cluster == cluster && l.Alive(n) {
			out = append(out, n)
		}
	}
	return out
}
