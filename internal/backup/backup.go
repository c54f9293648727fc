// Package backup is backups and point-in-time restore: mariabackup full
// backups (a Galera node desynced meanwhile), the binary log archive the
// keeper keeps, and restoring a cluster's data as of a time or a GTID
// position into a new lab (the choice of backup is pitr's, pure).
package backup

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/pitr"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/replication"
	"github.com/hadrill/hadrill/internal/server"
	"github.com/hadrill/hadrill/internal/spec"
)

// Servers is what backups need of a lab's servers.
type Servers interface {
	Admin(n *plan.Node) *sql.DB // a root-equivalent pool (close it)
	Alive(n *plan.Node) bool    // the server runs
	Host(name string) host.Host // where a node's tools run
}

// Lab is a lab whose servers are backed up.
type Lab struct {
	Plan    *plan.Plan
	Servers Servers
	Log     io.Writer
}

func (l *Lab) logf(format string, args ...any) {
	if l.Log != nil {
		fmt.Fprintf(l.Log, format+"\n", args...)
	}
}

func (l *Lab) execOn(ctx context.Context, n *plan.Node, stmts ...string) error {
	return server.Exec(ctx, l.Servers.Admin, n, stmts...)
}

// Info describes one backup (backups/<id>/backup.json).
type Info struct {
	ID       string    `json:"id"`
	Node     string    `json:"node"`
	Cluster  string    `json:"cluster"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"` // consistent as of about this time
	Seconds  float64   `json:"seconds"`
	Bytes    int64     `json:"bytes"`
	mariadb.BinlogInfo
	Dir string `json:"dir"` // the prepared backup: a datadir a server can start on
}

func (l *Lab) dir() string { return l.Plan.Backups }

// Backup takes a prepared full backup of a node with mariabackup. A Galera
// node is desynced meanwhile, so its agent answers 503 and the load
// balancer sends traffic elsewhere; it is resynced however the backup ends.
// mariabackup runs on the node's host and streams the backup here, where
// it is unpacked and prepared: a backup is kept off the machine it saves.
func (l *Lab) Backup(ctx context.Context, name string) (*Info, error) {
	if err := l.Plan.CheckNodes([]string{name}); err != nil {
		return nil, err
	}
	n, _ := l.Plan.Node(name)
	if c, ok := l.Plan.Cluster(n.Cluster); ok && c.NoBinlog {
		return nil, hderr.User("NODE: %s's cluster %s runs without a binary log (binary_log: false); a backup here is the start of a point-in-time restore, which replays the binary log", name, c.Name)
	}
	if !l.Servers.Alive(n) {
		return nil, hderr.User("NODE: %s is down; a backup needs a running server", name)
	}
	t0 := time.Now()
	b := &Info{ID: t0.UTC().Format("20060102T150405.000Z") + "-" + name, Node: name, Cluster: n.Cluster, Started: t0.UTC()}
	dir := filepath.Join(l.dir(), b.ID)
	b.Dir = filepath.Join(dir, "data")
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	err := l.backupInto(ctx, n, b, filepath.Join(dir, "mariabackup.log"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return b, writeJSON(filepath.Join(dir, "backup.json"), b)
}

// desynced runs f with Galera node n desynced (drained from load
// balancing: its agent answers 503), resynced however f ends; another
// node just runs f.
func (l *Lab) desynced(ctx context.Context, n *plan.Node, galera bool, f func() error) (err error) {
	if !galera {
		return f()
	}
	if err := l.execOn(ctx, n, "SET GLOBAL wsrep_desync=ON"); err != nil {
		return err
	}
	l.logf("%s desynced (drained from load balancing) during the backup", n.Name)
	defer func() {
		if rerr := l.execOn(context.Background(), n, "SET GLOBAL wsrep_desync=OFF"); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}()
	return f()
}

func (l *Lab) backupInto(ctx context.Context, n *plan.Node, b *Info, logFile string) error {
	galera := n.Kind == spec.KindGalera
	if err := l.desynced(ctx, n, galera, func() error { return l.stream(ctx, n, galera, b.Dir, logFile) }); err != nil {
		return fmt.Errorf("%s: backup: %w", n.Name, err)
	}
	b.Finished = time.Now().UTC()
	if err := mariadb.Prepare(ctx, b.Dir, logFile); err != nil {
		return fmt.Errorf("%s: prepare: %w", n.Name, err)
	}
	text, err := os.ReadFile(filepath.Join(b.Dir, "xtrabackup_binlog_info"))
	if err != nil {
		return fmt.Errorf("%s: the backup has no binary log position: %w", n.Name, err)
	}
	if b.BinlogInfo, err = mariadb.ParseBinlogInfo(string(text)); err != nil {
		return err
	}
	b.Bytes = dirSize(b.Dir)
	b.Seconds = time.Since(b.Started).Seconds()
	l.logf("backup %s of %s: %.1f MB in %.1fs, at GTID %s", b.ID, n.Name, float64(b.Bytes)/1e6, b.Seconds, b.GTID)
	return nil
}

// stream runs mariabackup on the node's host and unpacks what it streams
// into dir here (mbstream), both appending to logFile; a failure's error
// carries the last lines either said.
func (l *Lab) stream(ctx context.Context, n *plan.Node, galera bool, dir, logFile string) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	lf, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return err
	}
	defer lf.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var xsaid, bsaid bytes.Buffer
	xa := mariadb.ExtractArgv(dir)
	x := exec.CommandContext(ctx, xa[0], xa[1:]...)
	x.Stdout, x.Stderr = lf, io.MultiWriter(lf, &xsaid)
	// an OS pipe: a local mariabackup writes straight into mbstream
	out, in, err := os.Pipe()
	if err != nil {
		return err
	}
	x.Stdin = out
	err = x.Start()
	out.Close()
	if err != nil {
		in.Close()
		return fmt.Errorf("%s on this computer (Debian package mariadb-backup): %w", xa[0], err)
	}
	h := l.Servers.Host(n.Host)
	berr := h.Attach(ctx, mariadb.BackupArgv(n.Socket, h.RunsAs(), n.Dir, galera), nil, in, io.MultiWriter(lf, &bsaid))
	in.Close()
	if berr != nil {
		cancel() // mbstream has nothing more to unpack
	}
	xerr := x.Wait()
	switch {
	case berr != nil:
		return fmt.Errorf("mariabackup on %s: %w\n%s", n.Host, berr, mariadb.LogTail(bsaid.String(), 5))
	case xerr != nil:
		return fmt.Errorf("%s: %w\n%s", xa[0], xerr, mariadb.LogTail(xsaid.String(), 5))
	}
	return nil
}

// Backups lists the lab's backups, oldest first.
func (l *Lab) Backups() ([]Info, error) {
	entries, err := readDir(l.dir())
	if err != nil {
		return nil, err
	}
	var out []Info
	for _, e := range entries {
		var b Info
		data, err := os.ReadFile(filepath.Join(l.dir(), e.Name(), "backup.json"))
		if err != nil || json.Unmarshal(data, &b) != nil {
			continue // a backup in progress, or not hadrill's
		}
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Finished.Before(out[j].Finished) })
	return out, nil
}

// ArchiveEnd is how far a cluster can be restored: the archived binary logs
// of the node that reaches furthest.
type ArchiveEnd struct {
	Cluster string               `json:"cluster"`
	Node    string               `json:"node"`
	Files   []string             `json:"-"`
	Last    time.Time            `json:"last_recoverable"` // time of the last archived event (RPO signal)
	GTID    replication.Position `json:"-"`
	Pos     string               `json:"gtid"`
}

// ArchiveEnd finds the furthest-reaching archive of a cluster's nodes.
func (l *Lab) ArchiveEnd(ctx context.Context, cluster string) (*ArchiveEnd, error) {
	c, ok := l.Plan.Cluster(cluster)
	if !ok {
		return nil, hderr.User("--cluster: unknown cluster %q", cluster)
	}
	var best *ArchiveEnd
	for _, name := range c.Nodes {
		dir := ArchiveDir(l.Plan, name)
		files, err := Binlogs(dir)
		if err != nil || len(files) == 0 {
			continue
		}
		for i := range files {
			files[i] = filepath.Join(dir, files[i])
		}
		end, err := mariadb.ScanBinlogs(ctx, files...)
		if err != nil {
			continue
		}
		var gtids []string
		for _, g := range end.GTIDs {
			gtids = append(gtids, g)
		}
		pos, _ := replication.ParsePosition(strings.Join(gtids, ","))
		a := &ArchiveEnd{Cluster: cluster, Node: name, Files: files, Last: end.Time, GTID: pos, Pos: pos.String()}
		if best == nil || a.Last.After(best.Last) || (a.Last.Equal(best.Last) && a.GTID.Covers(best.GTID)) {
			best = a
		}
	}
	if best == nil {
		return nil, fmt.Errorf("cluster %s: no archived binary logs yet (the lab's keeper archives them every second)", cluster)
	}
	return best, nil
}

func dirSize(dir string) int64 {
	var n int64
	_ = filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o640)
}

// pitrBackups converts a cluster's backups for the pure choice.
func pitrBackups(bs []Info, cluster string) []pitr.Backup {
	var out []pitr.Backup
	for _, b := range bs {
		if b.Cluster != cluster {
			continue
		}
		pos, err := replication.ParsePosition(b.GTID)
		if err != nil {
			continue
		}
		out = append(out, pitr.Backup{ID: b.ID, Cluster: b.Cluster, Finished: b.Finished, GTID: pos})
	}
	return out
}
