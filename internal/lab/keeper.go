package lab

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/replication"
	"github.com/hadrill/hadrill/internal/spec"
	"github.com/hadrill/hadrill/internal/state"
	"github.com/hadrill/hadrill/internal/supervise"
)

// The keeper's rhythm: channels are checked every tick, heartbeats written
// every other tick (the lag it measures has this resolution), binlogs
// archived every fourth.
const keeperTick = 250 * time.Millisecond

// HeartbeatTable holds one row per source cluster, rewritten by the keeper
// on the cluster's writer; a replica's lag is how old its copy of the row is.
const HeartbeatTable = "hd_meta.heartbeat"

// Keep is the lab's keeper (`hadrill keeper`, one per lab): it writes
// heartbeats on every replicated cluster, re-points a DR channel whose
// source node is no longer a healthy member of its cluster, and archives
// every node's binary logs. It runs until ctx is cancelled.
func (l *Lab) Keep(ctx context.Context) error {
	k := &keeper{l: l, Conns: l.NewConns(), tables: map[string]bool{}}
	defer k.Close()
	t := time.NewTicker(keeperTick)
	defer t.Stop()
	for i := 0; ; i++ {
		k.reload()
		for _, ch := range l.Plan.Channels {
			k.watch(ctx, ch)
		}
		if i%2 == 0 {
			k.heartbeats(ctx)
		}
		if i%4 == 0 {
			for j := range l.Plan.Nodes {
				if err := ArchiveBinlogs(&l.Plan.Nodes[j], l.ArchiveDir(l.Plan.Nodes[j].Name)); err != nil {
					k.logOnce("archive "+l.Plan.Nodes[j].Name, err)
				}
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

type keeper struct {
	l *Lab
	*Conns
	last   map[string]string // last error per subject, logged once
	tables map[string]bool   // heartbeat table created on this node
}

func (k *keeper) logOnce(subject string, err error) {
	if k.last == nil {
		k.last = map[string]string{}
	}
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	if k.last[subject] != msg {
		k.last[subject] = msg
		if err != nil {
			k.l.logf("%s %s: %v", time.Now().Format(time.RFC3339Nano), subject, err)
		}
	}
}

// reload picks up promotions recorded in lab.json.
func (k *keeper) reload() {
	if st, err := state.Load(k.l.Home, k.l.Plan.Lab); err == nil {
		k.l.State.Primaries = st.Primaries
	}
}

// heartbeats writes the heartbeat row on each source cluster's writer.
func (k *keeper) heartbeats(ctx context.Context) {
	for i := range k.l.Plan.Clusters {
		c := &k.l.Plan.Clusters[i]
		if !k.l.replicated(c) {
			continue
		}
		w := k.writer(ctx, c)
		if w == nil {
			continue
		}
		db := k.DB(w)
		qctx, cancel := context.WithTimeout(ctx, time.Second)
		var err error
		if !k.tables[w.Name] {
			err = mariadb.Exec(qctx, db, "CREATE DATABASE IF NOT EXISTS hd_meta",
				"CREATE TABLE IF NOT EXISTS "+HeartbeatTable+" (cluster VARCHAR(16) PRIMARY KEY, ts DATETIME(6) NOT NULL, node VARCHAR(16) NOT NULL)")
			k.tables[w.Name] = err == nil
		}
		if err == nil {
			_, err = db.ExecContext(qctx, "REPLACE INTO "+HeartbeatTable+" VALUES (?, NOW(6), ?)", c.Name, w.Name)
		}
		cancel()
		k.logOnce("heartbeat "+c.Name, err)
	}
}

// replicated: the cluster has replicas (a primary cluster) or feeds a channel.
func (l *Lab) replicated(c *plan.Cluster) bool {
	if c.Kind == spec.KindPrimary {
		return true
	}
	for _, ch := range l.Plan.Channels {
		if ch.From == c.Name {
			return true
		}
	}
	return false
}

// writer is where a cluster's heartbeat is written: its primary, or a
// healthy Galera member.
func (k *keeper) writer(ctx context.Context, c *plan.Cluster) *plan.Node {
	if c.Kind != spec.KindGalera {
		n, _ := k.l.Plan.Node(k.l.PrimaryOf(c))
		if k.l.alive(n) {
			return n
		}
		return nil
	}
	for _, cand := range k.candidates(ctx, c) {
		if cand.Healthy {
			n, _ := k.l.Plan.Node(cand.Node)
			return n
		}
	}
	return nil
}

// candidates reads each member of a Galera cluster: Synced in the primary
// component, and its binary log position.
func (c *Conns) candidates(ctx context.Context, cl *plan.Cluster) []replication.Candidate {
	var out []replication.Candidate
	for _, name := range cl.Nodes {
		n, _ := c.l.Plan.Node(name)
		cand := replication.Candidate{Node: name}
		if c.l.alive(n) {
			qctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
			st, err := mariadb.Status(qctx, c.DB(n), "wsrep_%")
			var pos string
			if err == nil {
				err = c.DB(n).QueryRowContext(qctx, "SELECT @@gtid_binlog_pos").Scan(&pos)
			}
			cancel()
			if err == nil {
				cand.Healthy = st["wsrep_local_state_comment"] == "Synced" && st["wsrep_cluster_status"] == "Primary"
				cand.Pos, _ = replication.ParsePosition(pos)
			}
		}
		out = append(out, cand)
	}
	return out
}

// watch re-points a channel from a Galera cluster when its source node is
// no longer a healthy member.
func (k *keeper) watch(ctx context.Context, ch plan.Channel) {
	from, _ := k.l.Plan.Cluster(ch.From)
	recv, _ := k.l.Plan.Node(ch.Receiver)
	if from.Kind != spec.KindGalera || !k.l.alive(recv) {
		return
	}
	choice, err := k.l.chooseSource(ctx, k.DB(recv), ch, k.candidates(ctx, from), nil)
	if err != nil || !choice.Repoint {
		k.logOnce("channel "+ch.Name, err)
		return
	}
	err = k.l.repoint(ctx, k.DB(recv), ch, choice)
	k.logOnce("channel "+ch.Name, err)
}

// chooseSource reads a channel's receiver and decides its source.
// adjust (optional) may change the candidates once the current source is known.
func (l *Lab) chooseSource(ctx context.Context, recv *sql.DB, ch plan.Channel, cands []replication.Candidate,
	adjust func(current string, c []replication.Candidate) []replication.Candidate) (replication.SourceChoice, error) {
	qctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	chans, err := mariadb.Replicas(qctx, recv)
	if err != nil {
		return replication.SourceChoice{}, err
	}
	var cur map[string]string
	for _, c := range chans {
		if c["connection_name"] == ch.Name {
			cur = c
		}
	}
	if cur == nil {
		return replication.SourceChoice{}, nil // not configured (yet)
	}
	applied, err := replication.ParsePosition(cur["gtid_io_pos"])
	if err != nil {
		return replication.SourceChoice{}, err
	}
	var slavePos string
	if err := recv.QueryRowContext(qctx, "SELECT @@gtid_slave_pos").Scan(&slavePos); err == nil {
		if p, err := replication.ParsePosition(slavePos); err == nil && len(p) > 0 {
			applied = p
		}
	}
	current := l.nodeAt(cur["master_host"])
	if adjust != nil {
		cands = adjust(current, cands)
	}
	return replication.ChooseSource(current, applied, cands), nil
}

// repoint moves a channel to choice.Node by GTID.
func (l *Lab) repoint(ctx context.Context, recv *sql.DB, ch plan.Channel, choice replication.SourceChoice) error {
	n, _ := l.Plan.Node(choice.Node)
	src, err := l.source(n)
	if err != nil {
		return err
	}
	l.logf("%s channel %s → %s: re-pointing to %s (%s)", time.Now().Format(time.RFC3339Nano), ch.From, ch.To, n.Name, choice.Reason)
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return mariadb.Replicate(qctx, recv, ch.Name, src)
}

// nodeAt names the node with that address ("" if none).
func (l *Lab) nodeAt(addr string) string {
	for _, n := range l.Plan.Nodes {
		if n.Address == addr {
			return n.Name
		}
	}
	return ""
}

// ArchiveDir is where a node's binary logs are archived.
func (l *Lab) ArchiveDir(node string) string { return filepath.Join(l.Plan.Dir, "archive", node) }

// startKeeper starts the lab's keeper unless it runs.
func (l *Lab) startKeeper(ctx context.Context) error {
	pidFile, logFile := filepath.Join(l.Plan.Dir, "keeper.pid"), filepath.Join(l.Plan.Dir, "keeper.log")
	if pid := supervise.ReadPid(pidFile); supervise.Owned(pid, l.Plan.Dir) {
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	_, err = supervise.Start(supervise.Spec{Name: "keeper", Argv: []string{exe, "keeper", "--home", l.Home, "--name", l.Plan.Lab, "--lab-dir", l.Plan.Dir},
		LogFile: logFile, PidFile: pidFile, Dir: filepath.Join(l.Plan.Dir, "keeper")})
	if err != nil {
		return fmt.Errorf("keeper: %w", err)
	}
	return nil
}

func (l *Lab) keeperPid() int {
	pid := supervise.ReadPid(filepath.Join(l.Plan.Dir, "keeper.pid"))
	if supervise.Owned(pid, l.Plan.Dir) {
		return pid
	}
	return 0
}
