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
	"time"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/galera"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/server"
	"github.com/hadrill/hadrill/internal/spec"
)

// Servers is what replication needs of a lab's servers.
type Servers interface {
	// Admin opens a root-equivalent pool to a node (close it).
	Admin(n *plan.Node) *sql.DB
	// Alive reports whether the node's server runs.
	Alive(n *plan.Node) bool
}

// Manager gives a lab's servers their replication roles and changes them.
type Manager struct {
	Plan    *plan.Plan
	Servers Servers
	// Primaries are the primary clusters' current primaries (lab.json);
	// SetPrimary records a promotion there.
	Primaries  map[string]string
	SetPrimary func(cluster, node string) error
	Log        io.Writer
}

func (m *Manager) logf(format string, args ...any) {
	if m.Log != nil {
		fmt.Fprintf(m.Log, format+"\n", args...)
	}
}

// PrimaryOf is a primary cluster's current primary.
func (m *Manager) PrimaryOf(c *plan.Cluster) string {
	if p := m.Primaries[c.Name]; p != "" {
		return p
	}
	return c.Primary
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

func (m *Manager) ensurePrimaryCluster(ctx context.Context, c *plan.Cluster) error {
	primary, _ := m.Plan.Node(m.PrimaryOf(c))
	src, err := m.source(primary)
	if err != nil {
		return err
	}
	for _, name := range c.Nodes {
		n, _ := m.Plan.Node(name)
		if n == primary || !m.Servers.Alive(n) {
			continue
		}
		if err := m.follow(ctx, n, "", src, true); err != nil {
			return err
		}
	}
	if !m.Servers.Alive(primary) {
		return nil
	}
	return m.execOn(ctx, primary, primaryStmts(c)...)
}

// primaryStmts make a node its cluster's writable primary, waiting for
// semi-sync acknowledgements when the cluster is semi-sync.
func primaryStmts(c *plan.Cluster) []string {
	stmts := []string{"SET GLOBAL read_only=OFF"}
	if c.Mode == spec.ModeSemiSync {
		stmts = append(stmts, "SET GLOBAL rpl_semi_sync_master_enabled=ON")
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
	m.logf("%s channel %s → %s: re-pointing to %s (%s)", time.Now().Format(time.RFC3339Nano), ch.From, ch.To, n.Name, choice.Reason)
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
