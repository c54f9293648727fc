// Package pitr holds the pure decisions of point-in-time restore: what a
// restore target means, which backup to start from, and whether the
// archived binary logs reach the target.
package pitr

import (
	"fmt"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/replication"
)

// Target is where a restore stops: just before a time (transactions
// committed at or after it are not applied), or after a GTID (inclusive).
type Target struct {
	Time time.Time
	GTID replication.Position
}

func (t Target) String() string {
	if len(t.GTID) > 0 {
		return "GTID " + t.GTID.String()
	}
	return t.Time.Format("2006-01-02 15:04:05 MST")
}

// ParseTarget reads --to: an RFC 3339 time, "YYYY-MM-DD HH:MM:SS" (local
// time), or a GTID position like 1-100-57.
func ParseTarget(s string) (Target, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return Target{Time: t}, nil
	}
	if t, err := time.ParseInLocation("2006-01-02 15:04:05", s, time.Local); err == nil {
		return Target{Time: t}, nil
	}
	if p, err := replication.ParsePosition(s); err == nil && len(p) > 0 {
		return Target{GTID: p}, nil
	}
	return Target{}, hderr.User("--to: expected a time (2026-11-22T10:04:05Z or \"2026-11-22 10:04:05\") or a GTID position (1-100-57), got %q", s)
}

// Backup is what a backup's choice needs.
type Backup struct {
	ID       string
	Cluster  string
	Finished time.Time            // the backup is consistent as of (about) this time
	GTID     replication.Position // its binary log position
}

// Choose picks the latest backup that lies before the target, and checks
// the archive reaches it: lastEvent is the time of the last archived event
// (archived the last position in the archive, for GTID targets). Restoring
// to before the oldest backup or past the archive is refused.
func Choose(backups []Backup, t Target, lastEvent time.Time, archived replication.Position) (Backup, error) {
	if len(backups) == 0 {
		return Backup{}, hderr.User("--to: there is no backup to restore from; take one with `hadrill backup NODE`")
	}
	var best *Backup
	for i := range backups {
		b := &backups[i]
		if !before(*b, t) {
			continue
		}
		if best == nil || b.Finished.After(best.Finished) {
			best = b
		}
	}
	oldest := backups[0]
	for _, b := range backups {
		if b.Finished.Before(oldest.Finished) {
			oldest = b
		}
	}
	if best == nil {
		return Backup{}, hderr.User("--to: %s is before the oldest backup (%s, consistent as of %s, at %s)",
			t, oldest.ID, oldest.Finished.Format(time.RFC3339), oldest.GTID)
	}
	if len(t.GTID) > 0 {
		if !archived.Covers(t.GTID) {
			return Backup{}, hderr.User("--to: GTID %s is past the last archived transaction (%s)", t.GTID, archived)
		}
	} else if !t.Time.Before(lastEvent.Add(time.Second)) {
		return Backup{}, hderr.User("--to: %s is after the last archived binary log event (%s); the last recoverable time is %s",
			t, lastEvent.Format(time.RFC3339), lastEvent.Format(time.RFC3339))
	}
	return *best, nil
}

func before(b Backup, t Target) bool {
	if len(t.GTID) > 0 {
		return t.GTID.Covers(b.GTID.Only(domains(t.GTID)))
	}
	return !b.Finished.After(t.Time)
}

func domains(p replication.Position) []uint32 {
	var out []uint32
	for d := range p {
		out = append(out, d)
	}
	return out
}

// Describe says what a restore will do, for the log.
func Describe(b Backup, t Target) string {
	return fmt.Sprintf("backup %s (at %s) + binary logs up to %s", b.ID, b.GTID, t)
}
