// Package replication is asynchronous and semi-synchronous replication
// between servers: pure verdicts and choices over GTID positions and
// replica status (gtid.go, health.go, source.go), and the Manager that
// gives running servers their roles, promotes a replica, re-points DR
// channels and reads replication state, through a narrow Servers interface.
package replication

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/galera"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/server"
	"github.com/hadrill/hadrill/internal/spec"
	"github.com/hadrill/hadrill/internal/state"
)

// Servers is what replication needs of a lab's servers.
type Servers interface {
	// Admin opens a root-equivalent pool to a node (close it); Process is
	// its server's process as its host reports it.
	server.Servers
	// Alive reports whether the node's server runs.
	Alive(n *plan.Node) bool
	// Depose marks on the node's own host that another node is its
	// cluster's primary (deposed), or clears the mark: while it is there
	// the node's agent refuses it writes, whatever its read_only says.
	Depose(ctx context.Context, n *plan.Node, deposed bool) error
}

// RoleStore is where a lab records its primary clusters' roles (the
// lab's roles.json: state.RoleFile), read fresh at every decision because
// the keeper may change them while a command runs.
type RoleStore interface {
	Read() (state.Roles, error)
	Update(change func(*state.Roles)) error
	// Lock serializes changes of roles: every start's Ensure, a
	// promotion, an automatic failover.
	Lock(ctx context.Context) (unlock func(), err error)
}

// Manager gives a lab's servers their replication roles and changes them.
type Manager struct {
	Plan    *plan.Plan
	Servers Servers
	// Roles records the current primaries and the fenced nodes (nil: the
	// plan's first nodes, nothing recorded).
	Roles RoleStore
	Log   io.Writer
}

func (m *Manager) logf(format string, args ...any) {
	if m.Log != nil {
		fmt.Fprintf(m.Log, format+"\n", args...)
	}
}

// roles reads the record (an unreadable one counts as empty, and says so).
func (m *Manager) roles() state.Roles {
	if m.Roles == nil {
		return state.Roles{}
	}
	r, err := m.Roles.Read()
	if err != nil {
		m.logf("roles: %v", err)
	}
	return r
}

// lock takes the roles lock (no store: nothing to serialize).
func (m *Manager) lock(ctx context.Context) (func(), error) {
	if m.Roles == nil {
		return func() {}, nil
	}
	return m.Roles.Lock(ctx)
}

// PrimaryOf is a primary cluster's current primary.
func (m *Manager) PrimaryOf(c *plan.Cluster) string {
	if p := m.roles().Primaries[c.Name]; p != "" && slices.Contains(c.Nodes, p) {
		return p
	}
	return c.Primary
}

// Fenced says why a node is fenced ("" when it is not).
func (m *Manager) Fenced(node string) string { return m.roles().Fenced[node] }

// setPrimary records a cluster's new primary (no longer fenced, if it was).
func (m *Manager) setPrimary(cluster, node string) error {
	if m.Roles == nil {
		return nil
	}
	return m.Roles.Update(func(r *state.Roles) {
		if r.Primaries == nil {
			r.Primaries = map[string]string{}
		}
		r.Primaries[cluster] = node
		delete(r.Fenced, node)
	})
}

// setFenced records why a node is fenced, or that it no longer is (why "").
func (m *Manager) setFenced(node, why string) error {
	if m.Roles == nil || m.roles().Fenced[node] == why {
		return nil
	}
	return m.Roles.Update(func(r *state.Roles) {
		if why == "" {
			delete(r.Fenced, node)
			return
		}
		if r.Fenced == nil {
			r.Fenced = map[string]string{}
		}
		r.Fenced[node] = why
	})
}

// source is how a replica reaches n (as the replication user).
func (m *Manager) source(n *plan.Node) (mariadb.Source, error) {
	pw, err := mariadb.ReadSecret(m.Plan.Secrets.Repl)
	return mariadb.Source{Host: n.PeerAddress(), Port: n.Port, User: plan.ReplUser, Password: pw}, err
}

// Ensure gives every running server its replication role; it
// is idempotent and runs after every start. A primary is writable (and
// waits for semi-sync acknowledgements once its replicas are attached);
// its replicas are read-only and follow it by GTID; each channel's
// receiver follows a node of the source cluster. Connections that exist
// are left alone: the server resumes them itself.
func (m *Manager) Ensure(ctx context.Context) error {
	unlock, err := m.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	for i := range m.Plan.Clusters {
		c := &m.Plan.Clusters[i]
		if c.Kind != spec.KindPrimary {
			continue
		}
		if err := m.ensurePrimaryCluster(ctx, c); err != nil {
			return fmt.Errorf("cluster %s: %w", c.Name, err)
		}
	}
	for _, ch := range m.Plan.Channels {
		if err := m.ensureChannel(ctx, ch); err != nil {
			return fmt.Errorf("channel %s → %s: %w", ch.From, ch.To, err)
		}
	}
	return nil
}

// ensurePrimaryCluster makes the recorded primary writable and every other
// running node its replica, except a node holding transactions the primary
// never received (a former primary that committed what no replica got):
// that one is fenced, read-only and outside replication, until it is
// rebuilt. While the primary is down the others only stay read-only (a
// failover, automatic or `promote --force`, decides what comes next).
func (m *Manager) ensurePrimaryCluster(ctx context.Context, c *plan.Cluster) error {
	primary, _ := m.Plan.Node(m.PrimaryOf(c))
	up := m.Servers.Alive(primary)
	followers := 0
	for _, name := range c.Nodes {
		n, _ := m.Plan.Node(name)
		if n == primary || !m.Servers.Alive(n) {
			continue
		}
		if !up {
			if err := m.execOn(ctx, n, "SET GLOBAL read_only=ON"); err != nil {
				return err
			}
			continue
		}
		if err := m.rejoin(ctx, n, primary); err != nil {
			return err
		}
		if m.Fenced(name) == "" {
			followers++
		}
	}
	if !up {
		return nil
	}
	if err := m.Servers.Depose(ctx, primary, false); err != nil { // the primary recorded is never deposed
		return fmt.Errorf("%s: %w", primary.Name, err)
	}
	return m.execOn(ctx, primary, primaryStmts(c, followers)...)
}

// rejoin makes n (running, not the primary) a read-only replica of
// primary, unless n holds transactions the primary lacks: then n is
// fenced. n's state is read before the primary's: the primary writes on,
// and what n received from it must be found in the primary's.
func (m *Manager) rejoin(ctx context.Context, n, primary *plan.Node) error {
	if err := m.execOn(ctx, n, replicaStmts...); err != nil {
		return err
	}
	mine, err := m.gtidState(ctx, n)
	if err != nil {
		return err
	}
	ref, err := m.gtidState(ctx, primary)
	if err != nil {
		return err
	}
	if errant := Errant(mine, ref, nil); len(errant) > 0 {
		why := fmt.Sprintf("holds transactions the primary %s never received (%s); it stays read-only and outside replication until it is rebuilt",
			primary.Name, gtids(errant))
		if m.Fenced(n.Name) != why {
			m.logf("%s %s", n.Name, why)
		}
		db := m.Servers.Admin(n)
		err := mariadb.StopSlave(ctx, db, "")
		db.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", n.Name, err)
		}
		return m.setFenced(n.Name, why)
	}
	if err := m.setFenced(n.Name, ""); err != nil {
		return err
	}
	src, err := m.source(primary)
	if err != nil {
		return err
	}
	db := m.Servers.Admin(n)
	defer db.Close()
	chans, err := mariadb.Replicas(ctx, db)
	if err != nil {
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	for _, ch := range chans {
		if ch["connection_name"] == "" && m.nodeAt(ch["master_host"]) == primary.Name {
			if ch["slave_io_running"] == "No" && ch["slave_sql_running"] == "No" { // stopped while it was fenced
				m.logf("%s: replicating from %s again", n.Name, primary.Name)
				return mariadb.Exec(ctx, db, "START SLAVE ''")
			}
			return nil // follows the primary already (the server resumes the connection itself)
		}
	}
	// A new node, a former primary or a replica of one: everything it has,
	// the primary has too, so it continues from its own binary log.
	m.logf("%s: replicating from %s (GTID, from its own position)", n.Name, primary.Name)
	if err := mariadb.StopReplicating(ctx, db, ""); err != nil {
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	if err := mariadb.Exec(ctx, db, "SET GLOBAL gtid_slave_pos=@@gtid_binlog_pos"); err != nil {
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	if err := mariadb.Replicate(ctx, db, "", src); err != nil {
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	return nil
}

// primaryStmts make a node its cluster's writable primary. In a semi-sync
// cluster its commits then wait for a replica's acknowledgement, when one
// will give it (followers: the other nodes that follow it). With none (the
// others down or fenced) every commit would wait the cluster's ack_timeout
// and then go on unacknowledged: a stall that makes nothing more durable.
// The primary then writes without waiting, and semi-sync is switched on
// when a replica rejoins (ensurePrimaryCluster, Seeded).
func primaryStmts(c *plan.Cluster, followers int) []string {
	stmts := []string{"SET GLOBAL read_only=OFF"}
	switch {
	case c.Mode != spec.ModeSemiSync:
	case followers > 0:
		stmts = append(stmts, "SET GLOBAL rpl_semi_sync_master_enabled=ON")
	default:
		stmts = append(stmts, "SET GLOBAL rpl_semi_sync_master_enabled=OFF")
	}
	return stmts
}

// follow makes n replicate from src on connection conn unless that
// connection exists already.
func (m *Manager) follow(ctx context.Context, n *plan.Node, conn string, src mariadb.Source, readOnly bool) error {
	db := m.Servers.Admin(n)
	defer db.Close()
	if readOnly {
		if err := mariadb.Exec(ctx, db, "SET GLOBAL read_only=ON"); err != nil {
			return fmt.Errorf("%s: %w", n.Name, err)
		}
	}
	chans, err := mariadb.Replicas(ctx, db)
	if err != nil {
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	for _, c := range chans {
		if c["connection_name"] == conn {
			return nil
		}
	}
	m.logf("%s: replicating from %s:%d (GTID)", n.Name, src.Host, src.Port)
	if err := mariadb.Replicate(ctx, db, conn, src); err != nil {
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	return nil
}

func (m *Manager) ensureChannel(ctx context.Context, ch plan.Channel) error {
	recv, _ := m.Plan.Node(ch.Receiver)
	if !m.Servers.Alive(recv) {
		return nil
	}
	from, _ := m.Plan.Cluster(ch.From)
	srcName := ch.Source
	if from.Kind == spec.KindPrimary {
		srcName = m.PrimaryOf(from)
	}
	srcNode, _ := m.Plan.Node(srcName)
	src, err := m.source(srcNode)
	if err != nil {
		return err
	}
	if err := m.follow(ctx, recv, ch.Name, src, false); err != nil {
		return err
	}
	if ch.Mode != spec.ModeSemiSync {
		return nil
	}
	for _, name := range from.Nodes {
		if n, _ := m.Plan.Node(name); m.Servers.Alive(n) {
			if err := m.execOn(ctx, n, "SET GLOBAL rpl_semi_sync_master_enabled=ON"); err != nil {
				return err
			}
		}
	}
	return nil
}

// waitApplied waits until n has applied everything up to pos (a GTID
// position), at most timeout.
func (m *Manager) waitApplied(ctx context.Context, n *plan.Node, pos string, timeout time.Duration) error {
	db := m.Servers.Admin(n)
	defer db.Close()
	var r int
	if err := db.QueryRowContext(ctx, "SELECT MASTER_GTID_WAIT(?, ?)", pos, timeout.Seconds()).Scan(&r); err != nil {
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	if r != 0 {
		return fmt.Errorf("%s has not applied %s after %v", n.Name, pos, timeout)
	}
	return nil
}

// SetGTIDDomains sets each new Galera member's wsrep_gtid_domain_id again
// at run time. A member that formed its cluster without a state transfer
// (as hadrill's do) has not applied the configured value yet and would
// write domain 0; once a write set committed, the server keeps the domain
// it used across restarts.
func (m *Manager) SetGTIDDomains(ctx context.Context) error {
	for _, c := range m.Plan.Clusters {
		if c.Kind != spec.KindGalera {
			continue
		}
		for _, name := range c.Nodes {
			n, _ := m.Plan.Node(name)
			if err := m.execOn(ctx, n, fmt.Sprintf("SET GLOBAL wsrep_gtid_domain_id=%d", c.GTIDDomain)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Candidates reads each member of a Galera cluster: Synced in the primary
// component, and its binary log position.
func (m *Manager) Candidates(ctx context.Context, c *server.Conns, cl *plan.Cluster) []Candidate {
	var out []Candidate
	for _, name := range cl.Nodes {
		n, _ := m.Plan.Node(name)
		cand := Candidate{Node: name}
		if m.Servers.Alive(n) {
			qctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
			st, err := mariadb.Status(qctx, c.DB(n), "wsrep_%")
			var pos string
			if err == nil {
				err = c.DB(n).QueryRowContext(qctx, "SELECT @@gtid_binlog_pos").Scan(&pos)
			}
			cancel()
			if err == nil {
				cand.Healthy = galera.SyncedPrimary(st)
				cand.Pos, _ = ParsePosition(pos)
			}
		}
		out = append(out, cand)
	}
	return out
}

// ChooseSource reads a channel's receiver and decides its source.
// adjust (optional) may change the candidates once the current source is known.
func (m *Manager) ChooseSource(ctx context.Context, recv *sql.DB, ch plan.Channel, cands []Candidate,
	adjust func(current string, c []Candidate) []Candidate) (SourceChoice, error) {
	qctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	chans, err := mariadb.Replicas(qctx, recv)
	if err != nil {
		return SourceChoice{}, err
	}
	var cur map[string]string
	for _, c := range chans {
		if c["connection_name"] == ch.Name {
			cur = c
		}
	}
	if cur == nil {
		return SourceChoice{}, nil // not configured (yet)
	}
	applied, err := ParsePosition(cur["gtid_io_pos"])
	if err != nil {
		return SourceChoice{}, err
	}
	var slavePos string
	if err := recv.QueryRowContext(qctx, "SELECT @@gtid_slave_pos").Scan(&slavePos); err == nil {
		if p, err := ParsePosition(slavePos); err == nil && len(p) > 0 {
			applied = p
		}
	}
	current := m.nodeAt(cur["master_host"])
	if adjust != nil {
		cands = adjust(current, cands)
	}
	return ChooseSource(current, applied, cands), nil
}

// Move moves a channel to choice.Node by GTID.
func (m *Manager) Move(ctx context.Context, recv *sql.DB, ch plan.Channel, choice SourceChoice) error {
	n, _ := m.Plan.Node(choice.Node)
	src, err := m.source(n)
	if err != nil {
		return err
	}
	m.logf("channel %s → %s: re-pointing to %s (%s)", ch.From, ch.To, n.Name, choice.Reason)
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return mariadb.Replicate(qctx, recv, ch.Name, src)
}

// nodeAt names the node with that address ("" if none).
func (m *Manager) nodeAt(addr string) string {
	for _, n := range m.Plan.Nodes {
		if n.Address == addr || n.PeerAddress() == addr {
			return n.Name
		}
	}
	return ""
}

// Seeded makes n, whose datadir was just replaced by a copy of its
// cluster's primary as of the GTID position pos (a backup), that primary's
// replica from there: its binary log starts at pos, it replicates from
// pos, and it is no longer fenced. Callers hold the roles lock.
func (m *Manager) Seeded(ctx context.Context, c *plan.Cluster, n *plan.Node, pos string) error {
	p, err := ParsePosition(pos)
	if err != nil {
		return fmt.Errorf("the backup's position: %w", err)
	}
	primary, _ := m.Plan.Node(m.PrimaryOf(c))
	src, err := m.source(primary)
	if err != nil {
		return err
	}
	db := m.Servers.Admin(n)
	defer db.Close()
	if err := mariadb.StopReplicating(ctx, db, ""); err != nil {
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	stmts := append(slices.Clone(replicaStmts), "RESET MASTER",
		fmt.Sprintf("SET GLOBAL gtid_binlog_state='%s'", p), fmt.Sprintf("SET GLOBAL gtid_slave_pos='%s'", p))
	if err := mariadb.Exec(ctx, db, stmts...); err != nil {
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	if err := mariadb.Replicate(ctx, db, "", src); err != nil {
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	m.logf("%s replicates from %s from %s", n.Name, primary.Name, p)
	if err := m.execOn(ctx, primary, primaryStmts(c, 1)...); err != nil { // a semi-sync primary has a replica to wait for again
		return err
	}
	return m.setFenced(n.Name, "")
}
