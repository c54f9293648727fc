// Package replication holds pure decisions about asynchronous and
// semi-synchronous replication: may a node take writes as a primary, may
// it serve reads as a replica.
package replication

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hadrill/hadrill/internal/galera"
)

// Channel is one row of SHOW ALL SLAVES STATUS (lowercase column names).
type Channel map[string]string

// Snapshot is what the agent reads for these endpoints.
type Snapshot struct {
	ReadOnly bool
	Channels []Channel
	Drained  bool // the operator drained the node: it takes no traffic in any role
	// Deposed: the keeper made another node the primary; a former primary
	// that could not be made read-only yet (cut off, its commits in
	// progress waiting) takes no writes all the same.
	Deposed bool
}

// Codes of the primary/replica verdicts.
const (
	CodePrimary     galera.Code = "Primary"
	CodeNotPrimary  galera.Code = "NotPrimary" // read-only, or replicating from another server
	CodeReplica     galera.Code = "Replica"    // replicating, both threads running, within the lag limit
	CodeNotReplica  galera.Code = "NotReplica" // no replication channel configured
	CodeStopped     galera.Code = "Stopped"    // an IO or SQL thread is not running
	CodeLagging     galera.Code = "Lagging"    // behind by more than max_lag, or the lag is unknown
	CodeUnreachable             = galera.CodeUnreachable
)

// JudgePrimary passes a primary that is not drained or deposed, writable (read_only=OFF) and not replicating from anyone.
func JudgePrimary(s Snapshot) galera.Verdict {
	switch {
	case s.Drained:
		return galera.Drained("drained")
	case s.Deposed:
		return galera.Verdict{Code: CodeNotPrimary, State: "deposed", Reason: "another node was made the primary"}
	case s.ReadOnly:
		return galera.Verdict{Code: CodeNotPrimary, State: "read-only", Reason: "read_only=ON"}
	case len(s.Channels) > 0:
		return galera.Verdict{Code: CodeNotPrimary, State: "replica", Reason: fmt.Sprintf("replicates from %s", s.Channels[0]["master_host"])}
	}
	return galera.Verdict{OK: true, Code: CodePrimary, State: "primary", Reason: "writable and not replicating"}
}

// JudgeReplica passes a replica that is not drained and whose every channel's IO and SQL threads run and each is at most
// maxLag seconds behind (maxLag < 0: any lag).
func JudgeReplica(s Snapshot, maxLag int) galera.Verdict {
	if s.Drained {
		return galera.Drained("drained")
	}
	if len(s.Channels) == 0 {
		return galera.Verdict{Code: CodeNotReplica, State: "primary", Reason: "no replication channel configured"}
	}
	worst := 0
	for _, c := range s.Channels {
		name := c["connection_name"]
		if name == "" {
			name = "default"
		}
		if c["slave_io_running"] != "Yes" || c["slave_sql_running"] != "Yes" {
			reason := fmt.Sprintf("channel %s: IO thread %s, SQL thread %s", name, c["slave_io_running"], c["slave_sql_running"])
			if e := c.LastError(); e != "" {
				reason += ": " + e
			}
			return galera.Verdict{Code: CodeStopped, State: "replica", Reason: reason}
		}
		lag, err := strconv.Atoi(strings.TrimSpace(c["seconds_behind_master"]))
		if err != nil {
			return galera.Verdict{Code: CodeLagging, State: "replica", Reason: fmt.Sprintf("channel %s: lag unknown", name)}
		}
		if maxLag >= 0 && lag > maxLag {
			return galera.Verdict{Code: CodeLagging, State: "replica", Reason: fmt.Sprintf("channel %s: %d s behind (max_lag %d)", name, lag, maxLag)}
		}
		worst = max(worst, lag)
	}
	return galera.Verdict{OK: true, Code: CodeReplica, State: "replica", Reason: fmt.Sprintf("replicating, %d s behind", worst)}
}

// LastError is the channel's last IO error, else its last SQL error.
func (c Channel) LastError() string { return firstNonEmpty(c["last_io_error"], c["last_sql_error"]) }

func firstNonEmpty(v ...string) string {
	for _, s := range v {
		if s != "" {
			return s
		}
	}
	return ""
}
