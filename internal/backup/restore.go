package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/pitr"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
)

// RestoreOptions say what to restore where.
type RestoreOptions struct {
	To      string // a time or a GTID position
	Cluster string // the source cluster (default: the one of the latest backup)
	As      string // the new lab's name
	Log     io.Writer
}

// RestoreResult reports a point-in-time restore.
type RestoreResult struct {
	Lab     string    `json:"lab"`
	Node    string    `json:"node"`
	Target  string    `json:"target"`
	Backup  string    `json:"backup"`
	Archive string    `json:"archive_node"` // whose archived binary logs were replayed
	GTID    string    `json:"gtid_binlog_pos"`
	Seconds float64   `json:"seconds"`
	At      time.Time `json:"at"`
	// Warnings: what makes the restored point less certain than asked (a
	// node's clock off the real time while the events replayed were
	// written: their times, which a time target is matched against, are
	// off by as much).
	Warnings []string `json:"warnings,omitempty"`
}

// Labs creates and removes the lab a restore builds.
type Labs interface {
	// Exists reports whether a lab of that name exists.
	Exists(name string) bool
	// Check says, as bad input, what keeps the lab of spec s from being
	// placed (an inventory that does not name its hosts).
	Check(s *spec.Spec) error
	// Up creates the lab from s, every datadir copied from the prepared
	// backup fromBackup (a directory here), and returns it.
	Up(ctx context.Context, s *spec.Spec, fromBackup string) (*Restored, error)
	// Down removes the lab.
	Down(ctx context.Context, name string) error
}

// Restored is the lab a restore built: its one node, how to administer
// it, and where its files are kept here.
type Restored struct {
	Node    *plan.Node
	Servers Servers
	Dir     string
}

// Restore builds a new lab (one standalone server) holding the cluster's
// data exactly as of the target: the latest backup before it, plus the
// archived binary log events from the backup's GTID position up to the
// target. Bad input is refused before anything is created; a failure
// removes the new lab.
func (l *Lab) Restore(ctx context.Context, labs Labs, o RestoreOptions) (*RestoreResult, error) {
	t0 := time.Now()
	target, b, info, end, err := l.restorePlan(ctx, labs, &o)
	if err != nil {
		return nil, err
	}
	l.logf("restoring %s into lab %s: %s, archive of %s", o.Cluster, o.As, pitr.Describe(b, target), end.Node)
	warnings := l.clockWarnings(o.Cluster, end.Node, b, target)
	for _, w := range warnings {
		l.logf("warning: %s", w)
	}
	r, err := labs.Up(ctx, l.restoreSpec(o.Cluster, o.As), info.Dir)
	if err != nil {
		return nil, err
	}
	n := r.Node
	if err := replay(ctx, r, info.GTID, target, end.Files); err != nil {
		l.logf("restore failed; removing lab %s", o.As)
		return nil, errors.Join(err, labs.Down(context.Background(), o.As))
	}
	var gtid string
	db := r.Servers.Admin(n)
	_ = db.QueryRowContext(ctx, "SELECT @@gtid_binlog_pos").Scan(&gtid)
	db.Close()
	return &RestoreResult{Lab: o.As, Node: n.Name, Target: target.String(), Backup: b.ID, Archive: end.Node, GTID: gtid,
		Seconds: time.Since(t0).Seconds(), At: time.Now().UTC(), Warnings: warnings}, nil
}

// clockWarnings names the clock faults of the cluster's nodes (the lab's
// fault log) that overlap the events a time target replays, from the
// backup to the target. A transaction's events carry the clock of the
// node it was written through, in every node's binary log, the archive's
// included (measured on Galera both ways: written through a node a minute
// ahead, and applied by one an hour ahead). A GTID target is exact.
func (l *Lab) clockWarnings(cluster, archive string, b pitr.Backup, t pitr.Target) []string {
	if len(t.GTID) > 0 || l.Plan.FaultLog == "" {
		return nil
	}
	c, ok := l.Plan.Cluster(cluster)
	if !ok {
		return nil
	}
	var out []string
	for _, s := range fault.ClockSpans(fault.Log(l.Plan.FaultLog).Between(time.Time{}, t.Time)) {
		if !slices.Contains(c.Nodes, s.Node) || !s.Overlaps(b.Finished, t.Time) {
			continue
		}
		until := "the target"
		if !s.To.IsZero() && s.To.Before(t.Time) {
			until = s.To.Local().Format(time.TimeOnly)
		}
		effect := "transactions written through it carry that time in every node's binary log, the archive's too, so a restore to a time may land off by as much"
		if s.Node == archive {
			effect += " (the archive replayed is its binary log)"
		}
		out = append(out, fmt.Sprintf("%s's clock was %s from %s to %s (fault log): %s; give a GTID target (--to %s) for an exact point",
			s.Node, s.Clock, s.From.Local().Format(time.TimeOnly), until, effect, gtidHint(b)))
	}
	return out
}

// gtidHint is a GTID target's form, from the backup's own position.
func gtidHint(b pitr.Backup) string {
	if len(b.GTID) == 0 {
		return "DOMAIN-SERVER-SEQ"
	}
	return b.GTID.String()
}

// restorePlan checks everything before anything is created.
func (l *Lab) restorePlan(ctx context.Context, labs Labs, o *RestoreOptions) (t pitr.Target, b pitr.Backup, info Info, end *ArchiveEnd, err error) {
	var problems []error
	t, err = pitr.ParseTarget(o.To)
	problems = append(problems, err)
	if o.As == "" {
		o.As = l.Plan.Lab + "r"
	}
	nameOK := false
	if err := plan.CheckLabName(o.As); err != nil {
		problems = append(problems, hderr.User("--as: %q is not a valid lab name", o.As))
	} else if labs.Exists(o.As) {
		problems = append(problems, hderr.User("--as: lab %q exists; choose another name or remove it with `hadrill down --name %s`", o.As, o.As))
	} else {
		nameOK = true
	}
	backups, err := l.Backups()
	if err != nil {
		return
	}
	if o.Cluster == "" && len(backups) > 0 {
		o.Cluster = backups[len(backups)-1].Cluster
	}
	if c, ok := l.Plan.Cluster(o.Cluster); o.Cluster != "" && !ok {
		problems = append(problems, hderr.User("--cluster: unknown cluster %q", o.Cluster))
	} else if ok && c.NoBinlog {
		problems = append(problems, hderr.User("--cluster: cluster %q runs without a binary log (binary_log: false): there is nothing to replay to a point in time", c.Name))
	} else if ok {
		o.Cluster = c.Name
		if nameOK { // where the new lab goes
			problems = append(problems, labs.Check(l.restoreSpec(o.Cluster, o.As)))
		}
	}
	if err = hderr.Join(problems); err != nil {
		return
	}
	bs := pitrBackups(backups, o.Cluster)
	if len(bs) == 0 {
		err = hderr.User("--to: cluster %q has no backup to restore from; take one with `hadrill backup NODE`", o.Cluster)
		return
	}
	if end, err = l.ArchiveEnd(ctx, o.Cluster); err != nil {
		return
	}
	if b, err = pitr.Choose(bs, t, end.Last, end.GTID); err != nil {
		return
	}
	for _, x := range backups {
		if x.ID == b.ID {
			info = x
		}
	}
	return t, b, info, end, nil
}

// restoreSpec is the new lab: one standalone server with the cluster's profile.
func (l *Lab) restoreSpec(cluster, name string) *spec.Spec {
	profile := "default"
	for _, n := range l.Plan.Nodes {
		if n.Cluster == cluster {
			profile = n.Profile
			break
		}
	}
	s := &spec.Spec{Name: name, Description: fmt.Sprintf("point-in-time restore of %s/%s", l.Plan.Lab, cluster),
		Clusters: []spec.Cluster{{Name: cluster, Kind: spec.KindStandalone, Profile: profile}}}
	spec.Defaults(s)
	return s
}

// replay applies the archived events after the backup's position up to the
// target: mariadb-binlog here | mariadb on the restored node's host, over
// the server's socket. What either says goes to replay.log in the lab's
// directory here.
func replay(ctx context.Context, r *Restored, from string, t pitr.Target, files []string) error {
	n := r.Node
	argv := []string{"mariadb-binlog", "--start-position=" + from}
	if len(t.GTID) > 0 {
		argv = append(argv, "--stop-position="+t.GTID.String())
	} else {
		argv = append(argv, "--stop-datetime="+t.Time.In(time.Local).Format("2006-01-02 15:04:05"))
	}
	argv = append(argv, files...)
	logFile := filepath.Join(r.Dir, "replay.log")
	lf, err := os.Create(logFile)
	if err != nil {
		return err
	}
	defer lf.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	dump := exec.CommandContext(ctx, argv[0], argv[1:]...)
	dump.Stderr = lf
	pipe, err := dump.StdoutPipe()
	if err != nil {
		return err
	}
	if err := dump.Start(); err != nil {
		return fmt.Errorf("mariadb-binlog on this computer (Debian package mariadb-client): %w", err)
	}
	h := r.Servers.Host(n.Host)
	apply := []string{"mariadb", "--socket=" + n.Socket, "--user=" + h.RunsAs(), "--batch"}
	aerr := h.Attach(ctx, apply, pipe, lf, lf)
	if aerr != nil {
		cancel() // nobody reads what mariadb-binlog prints any more
	}
	derr := dump.Wait()
	switch {
	case aerr != nil:
		return fmt.Errorf("replaying binary logs into %s: %w (see %s)\n%s", n.Name, aerr, logFile, logTail(logFile))
	case derr != nil:
		return fmt.Errorf("mariadb-binlog: %w (see %s)\n%s", derr, logFile, logTail(logFile))
	}
	return nil
}

// logTail is the first error lines of a log on this computer.
func logTail(path string) string {
	b, _ := os.ReadFile(path)
	return mariadb.LogTail(string(b), 4)
}
