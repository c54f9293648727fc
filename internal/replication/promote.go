package replication

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/server"
	"github.com/hadrill/hadrill/internal/spec"
)

// catchUp bounds how long a switchover waits for the candidate to apply
// everything the old primary committed.
const catchUp = 30 * time.Second

// replicaStmts make a node read-only and stop it waiting for semi-sync
// acknowledgements (a former primary's would make its SQL thread wait for
// acknowledgements no one sends).
var replicaStmts = []string{"SET GLOBAL read_only=ON", "SET GLOBAL rpl_semi_sync_master_enabled=OFF"}

// followWait bounds how long a promotion waits for each other node to
// turn read-only and follow the new primary.
const followWait = 3 * time.Second

// Promote makes a replica of a primary cluster its primary. With the old
// primary running it is a switchover: the old primary turns read-only, the
// candidate applies everything it committed, takes over, and every other
// node (the old primary too) follows it by GTID. It refuses, unless force,
// when the candidate holds transactions the others lack (errant GTIDs) or
// lacks some another server has, or when the old primary is down (what
// only it had would be lost).
func (m *Manager) Promote(ctx context.Context, name string, force bool) error {
	if err := m.Plan.CheckNodes([]string{name}); err != nil {
		return err
	}
	n, _ := m.Plan.Node(name)
	if n.Kind != spec.KindPrimary {
		return hderr.User("NODE: %s is a %s node; promote makes a replica of a primary cluster its primary", name, n.Kind)
	}
	c, _ := m.Plan.Cluster(n.Cluster)
	unlock, err := m.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	oldName := m.PrimaryOf(c)
	if oldName == name {
		return hderr.User("NODE: %s is already the primary of cluster %s", name, c.Name)
	}
	if !m.Servers.Alive(n) {
		return hderr.User("NODE: %s is down; start it first", name)
	}
	old, _ := m.Plan.Node(oldName)
	oldUp := m.Servers.Alive(old)
	if oldUp {
		m.logf("switchover: %s read-only, waiting for %s to catch up", oldName, name)
		if err := m.execOn(ctx, old, "SET GLOBAL read_only=ON"); err != nil {
			return err
		}
		pos, err := m.gtidPos(ctx, old)
		if err != nil {
			return err
		}
		if err := m.waitApplied(ctx, n, pos, catchUp); err != nil {
			_ = m.execOn(ctx, old, "SET GLOBAL read_only=OFF")
			return fmt.Errorf("switchover abandoned, %s is writable again: %w", oldName, err)
		}
	}
	if err := m.checkCandidate(ctx, c, n, old, oldUp, force); err != nil {
		if oldUp {
			_ = m.execOn(ctx, old, "SET GLOBAL read_only=OFF")
		}
		return err
	}
	if err := m.takeOver(ctx, c, n, old, oldUp); err != nil {
		return err
	}
	m.depose(ctx, old)
	return nil
}

// depose marks old, its cluster's primary until now, deposed on its host
// (within followWait): its agent then refuses it writes even while it is
// writable, which a former primary cut off from everyone stays until its
// commits in progress end (a semi-sync commit waits out its ack_timeout),
// and a load balancer would otherwise send it writes again once it is
// reachable. A host that cannot be reached is logged: the node's
// read_only alone then keeps it out of writes.
func (m *Manager) depose(ctx context.Context, old *plan.Node) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), followWait)
	defer cancel()
	if err := m.Servers.Depose(dctx, old, true); err != nil {
		m.logf("%s could not be marked deposed on its host (%v): its read_only alone keeps it out of writes", old.Name, err)
	}
}

// checkCandidate refuses a promotion that would lose or invent transactions.
func (m *Manager) checkCandidate(ctx context.Context, c *plan.Cluster, n, old *plan.Node, oldUp, force bool) error {
	mine, err := m.gtidPos(ctx, n)
	if err != nil {
		return err
	}
	cand, _ := ParsePosition(mine)
	var problems []string
	for _, name := range c.Nodes {
		o, _ := m.Plan.Node(name)
		if o == n || !m.Servers.Alive(o) {
			continue
		}
		p, err := m.gtidPos(ctx, o)
		if err != nil {
			return err
		}
		other, _ := ParsePosition(p)
		if missing := cand.Missing(other); len(missing) > 0 {
			problems = append(problems, fmt.Sprintf("%s has transactions %s lacks (up to %s)", name, n.Name, gtids(missing)))
		}
		if o == old {
			mineState, err := m.gtidState(ctx, n)
			if err != nil {
				return err
			}
			oldState, err := m.gtidState(ctx, o)
			if err != nil {
				return err
			}
			if errant := Errant(mineState, oldState, nil); len(errant) > 0 {
				problems = append(problems, fmt.Sprintf("%s has errant transactions the primary %s never had: %s", n.Name, old.Name, gtids(errant)))
			}
		}
	}
	if !oldUp {
		problems = append(problems, fmt.Sprintf("the primary %s is down: what it committed that no replica received would be lost (%s is at %s)", old.Name, n.Name, mine))
	}
	if len(problems) == 0 {
		return nil
	}
	if force {
		m.logf("--force: promoting %s although %s", n.Name, strings.Join(problems, "; "))
		return nil
	}
	return hderr.User("NODE: promoting %s would lose or invent transactions: %s; nothing was changed (--force promotes anyway)", n.Name, strings.Join(problems, "; "))
}

func gtids(g []GTID) string {
	var s []string
	for _, x := range g {
		s = append(s, x.String())
	}
	return strings.Join(s, ",")
}

// takeOver makes n the primary and points everyone else at it.
func (m *Manager) takeOver(ctx context.Context, c *plan.Cluster, n, old *plan.Node, oldUp bool) error {
	if err := m.Servers.Depose(ctx, n, false); err != nil { // a former primary promoted again
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	db := m.Servers.Admin(n)
	err := mariadb.StopReplicating(ctx, db, "")
	db.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	fenced := m.roles().Fenced
	followers := 0
	for _, name := range c.Nodes {
		// the old primary, even running, follows only once Reconcile checked it
		if o, _ := m.Plan.Node(name); o != n && o != old && fenced[name] == "" && m.Servers.Alive(o) {
			followers++
		}
	}
	if err := m.execOn(ctx, n, primaryStmts(c, followers)...); err != nil {
		return err
	}
	if err := m.setPrimary(c.Name, n.Name); err != nil {
		return err
	}
	m.logf("%s is the primary of cluster %s", n.Name, c.Name)
	if c.Mode == spec.ModeSemiSync && followers == 0 {
		m.logf("%s: no replica left to acknowledge its commits: it writes without waiting until one rejoins", n.Name)
	}
	src, err := m.source(n)
	if err != nil {
		return err
	}
	if oldUp {
		if err := m.execOn(ctx, old, "SET GLOBAL rpl_semi_sync_master_enabled=OFF", "SET GLOBAL gtid_slave_pos=@@gtid_binlog_pos"); err != nil {
			return err
		}
	}
	// every other node at once: one whose old source vanished with its
	// host may take seconds to stop its IO thread, and a semi-sync primary
	// waits for the first that attaches; a node that does not answer
	// (paused, overloaded) is left to the keeper, which gives it its role
	// once it answers
	var wg sync.WaitGroup
	for _, name := range c.Nodes {
		o, _ := m.Plan.Node(name)
		if o == n || !m.Servers.Alive(o) || fenced[name] != "" { // a fenced node stays out until it is rebuilt
			continue
		}
		if o == old && !oldUp { // a primary that failed (paused, cut off) may hold what no replica received: Reconcile checks it before it follows
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			octx, cancel := context.WithTimeout(ctx, followWait)
			defer cancel()
			err := m.execOn(octx, o, replicaStmts...)
			if err == nil {
				err = m.pointAt(octx, o, "", src)
			}
			if err != nil {
				m.logf("%s does not follow %s yet (%v); the keeper points it there once it answers", name, n.Name, err)
				return
			}
			m.logf("%s follows %s", name, n.Name)
		}()
	}
	wg.Wait()
	for _, ch := range m.Plan.Channels {
		if ch.From != c.Name {
			continue
		}
		recv, _ := m.Plan.Node(ch.Receiver)
		if !m.Servers.Alive(recv) {
			continue
		}
		if err := m.pointAt(ctx, recv, ch.Name, src); err != nil {
			return fmt.Errorf("channel %s → %s: %w", ch.From, ch.To, err)
		}
	}
	return nil
}

// pointAt (re)points a node's replication connection at src by GTID.
func (m *Manager) pointAt(ctx context.Context, n *plan.Node, conn string, src mariadb.Source) error {
	db := m.Servers.Admin(n)
	defer db.Close()
	if err := mariadb.Replicate(ctx, db, conn, src); err != nil {
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	return nil
}

func (m *Manager) execOn(ctx context.Context, n *plan.Node, stmts ...string) error {
	return server.Exec(ctx, m.Servers.Admin, n, stmts...)
}

// gtidState reads a server's gtid_binlog_state.
func (m *Manager) gtidState(ctx context.Context, n *plan.Node) (State, error) {
	db := m.Servers.Admin(n)
	defer db.Close()
	var s string
	if err := db.QueryRowContext(ctx, "SELECT @@gtid_binlog_state").Scan(&s); err != nil {
		return nil, fmt.Errorf("%s: %w", n.Name, err)
	}
	return ParseState(s)
}

func (m *Manager) gtidPos(ctx context.Context, n *plan.Node) (string, error) {
	db := m.Servers.Admin(n)
	defer db.Close()
	var pos string
	if err := db.QueryRowContext(ctx, "SELECT @@gtid_binlog_pos").Scan(&pos); err != nil {
		return "", fmt.Errorf("%s: %w", n.Name, err)
	}
	return pos, nil
}

// repointWait bounds how long an on-demand repoint waits for a healthy
// member to log what the receiver has applied.
const repointWait = 10 * time.Second

// Repoint moves a DR channel (all when channel is "") to another healthy
// node of its source cluster now: to, or the first healthy node other
// than the current source whose binary log holds the receiver's position
// (waiting up to repointWait for one that is behind it).
func (m *Manager) Repoint(ctx context.Context, channel, to string) error {
	var chans []plan.Channel
	var names []string
	for _, ch := range m.Plan.Channels {
		names = append(names, ch.Name)
		if channel == "" || ch.Name == channel {
			chans = append(chans, ch)
		}
	}
	if len(chans) == 0 {
		if channel == "" {
			return hderr.User("lab %s has no replication channels", m.Plan.Lab)
		}
		return hderr.User("CHANNEL: unknown channel %q (channels: %s)", channel, strings.Join(names, ", "))
	}
	for _, ch := range chans {
		from, _ := m.Plan.Cluster(ch.From)
		if to != "" && !slices.Contains(from.Nodes, to) {
			return hderr.User("--to: %s is not a node of cluster %s (nodes: %s)", to, from.Name, strings.Join(from.Nodes, ", "))
		}
		if from.Kind != spec.KindGalera {
			return hderr.User("CHANNEL: channel %s reads from %s cluster %s; it follows that cluster's primary (see `hadrill promote`)", ch.Name, from.Kind, from.Name)
		}
		recv, _ := m.Plan.Node(ch.Receiver)
		if !m.Servers.Alive(recv) {
			return fmt.Errorf("channel %s: the receiver %s is down", ch.Name, recv.Name)
		}
		ps := server.NewConns(m.Servers)
		rdb := ps.DB(recv)
		// On demand: the current source counts as unhealthy, and with --to so does every node but that one.
		adjust := func(current string, cs []Candidate) []Candidate {
			for i := range cs {
				if cs[i].Node == current || (to != "" && cs[i].Node != to) {
					cs[i].Healthy = false
				}
			}
			return cs
		}
		// A healthy member behind the receiver is a moment behind the
		// member the receiver reads from (its positions are read first,
		// and the keeper's heartbeat writes every 0.5 s): read again.
		var choice SourceChoice
		var err error
		for end := time.Now().Add(repointWait); ; {
			choice, err = m.ChooseSource(ctx, rdb, ch, m.Candidates(ctx, ps, from), adjust)
			if err != nil || choice.Repoint || len(choice.Behind) == 0 || time.Now().After(end) || ctx.Err() != nil {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if err == nil && !choice.Repoint {
			err = fmt.Errorf("channel %s: no other healthy node can take over (%s)", ch.Name, choice.Reason)
		}
		if err == nil {
			err = m.Move(ctx, rdb, ch, choice)
		}
		ps.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
