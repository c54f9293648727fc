package lab

import (
	"context"
	"fmt"
	"time"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
)

// PrimaryOf is a primary cluster's current primary.
func (l *Lab) PrimaryOf(c *plan.Cluster) string {
	if p := l.State.Primaries[c.Name]; p != "" {
		return p
	}
	return c.Primary
}

// source is how a replica reaches n (as the replication user).
func (l *Lab) source(n *plan.Node) (mariadb.Source, error) {
	pw, err := readSecret(l.Plan.Secrets.Repl)
	return mariadb.Source{Host: n.Address, Port: n.Port, User: plan.ReplUser, Password: pw}, err
}

// ensureReplication gives every running server its replication role; it
// is idempotent and runs after every start. A primary is writable (and
// waits for semi-sync acknowledgements once its replicas are attached);
// its replicas are read-only and follow it by GTID; each channel's
// receiver follows a node of the source cluster. Connections that exist
// are left alone: the server resumes them itself.
func (l *Lab) ensureReplication(ctx context.Context) error {
	for i := range l.Plan.Clusters {
		c := &l.Plan.Clusters[i]
		if c.Kind != spec.KindPrimary {
			continue
		}
		if err := l.ensurePrimaryCluster(ctx, c); err != nil {
			return fmt.Errorf("cluster %s: %w", c.Name, err)
		}
	}
	for _, ch := range l.Plan.Channels {
		if err := l.ensureChannel(ctx, ch); err != nil {
			return fmt.Errorf("channel %s → %s: %w", ch.From, ch.To, err)
		}
	}
	return nil
}

func (l *Lab) ensurePrimaryCluster(ctx context.Context, c *plan.Cluster) error {
	primary, _ := l.Plan.Node(l.PrimaryOf(c))
	src, err := l.source(primary)
	if err != nil {
		return err
	}
	for _, name := range c.Nodes {
		n, _ := l.Plan.Node(name)
		if n == primary || !l.alive(n) {
			continue
		}
		if err := l.follow(ctx, n, "", src, true); err != nil {
			return err
		}
	}
	if !l.alive(primary) {
		return nil
	}
	return l.execOn(ctx, primary, primaryStmts(c)...)
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
func (l *Lab) follow(ctx context.Context, n *plan.Node, conn string, src mariadb.Source, readOnly bool) error {
	db := l.Admin(n)
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
	l.logf("%s: replicating from %s:%d (GTID)", n.Name, src.Host, src.Port)
	if err := mariadb.Replicate(ctx, db, conn, src); err != nil {
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	return nil
}

func (l *Lab) ensureChannel(ctx context.Context, ch plan.Channel) error {
	recv, _ := l.Plan.Node(ch.Receiver)
	if !l.alive(recv) {
		return nil
	}
	from, _ := l.Plan.Cluster(ch.From)
	srcName := ch.Source
	if from.Kind == spec.KindPrimary {
		srcName = l.PrimaryOf(from)
	}
	srcNode, _ := l.Plan.Node(srcName)
	src, err := l.source(srcNode)
	if err != nil {
		return err
	}
	if err := l.follow(ctx, recv, ch.Name, src, false); err != nil {
		return err
	}
	if ch.Mode != spec.ModeSemiSync {
		return nil
	}
	for _, name := range from.Nodes {
		if n, _ := l.Plan.Node(name); l.alive(n) {
			if err := l.execOn(ctx, n, "SET GLOBAL rpl_semi_sync_master_enabled=ON"); err != nil {
				return err
			}
		}
	}
	return nil
}

// waitApplied waits until n has applied everything up to pos (a GTID
// position), at most timeout.
func (l *Lab) waitApplied(ctx context.Context, n *plan.Node, pos string, timeout time.Duration) error {
	db := l.Admin(n)
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

// setGTIDDomains sets each new Galera member's wsrep_gtid_domain_id again
// at run time. A member that formed its cluster without a state transfer
// (as hadrill's do) has not applied the configured value yet and would
// write domain 0; once a write set committed, the server keeps the domain
// it used across restarts.
func (l *Lab) setGTIDDomains(ctx context.Context) error {
	for _, c := range l.Plan.Clusters {
		if c.Kind != spec.KindGalera {
			continue
		}
		for _, name := range c.Nodes {
			n, _ := l.Plan.Node(name)
			if err := l.execOn(ctx, n, fmt.Sprintf("SET GLOBAL wsrep_gtid_domain_id=%d", c.GTIDDomain)); err != nil {
				return err
			}
		}
	}
	return nil
}
