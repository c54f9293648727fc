package galera

import (
	"fmt"
	"strings"
	"time"
)

// Snapshot is what a health probe reads from a node: global status
// (wsrep_*) and the variables that decide whether it may take traffic.
// Names are lowercase.
type Snapshot struct {
	Status    map[string]string `json:"status"`
	Variables map[string]string `json:"variables"`
}

// SnapshotVariables are the variables a probe reads besides wsrep status.
var SnapshotVariables = []string{"read_only", "wsrep_on", "wsrep_reject_queries", "wsrep_sst_donor_rejects_queries", "wsrep_desync"}

// HealthOptions are the agent's switches.
type HealthOptions struct {
	AvailableWhenDonor  bool // a Donor/Desynced node still takes traffic (clustercheck's option)
	ReadOnlyUnavailable bool // read_only=ON makes a node unavailable
	Drained             bool // the operator drained the node (maintenance)
	// Held is how long the node has kept the cluster paused by flow
	// control, its queue not draining (Hold, kept by the agent).
	Held time.Duration
}

// Code is one of the closed vocabulary of health verdicts (the Galera ones
// here, the primary/replica ones in replication).
type Code string

// Codes: the closed vocabulary of verdicts.
const (
	CodeSynced      Code = "Synced"       // healthy
	CodeDonor       Code = "DonorServing" // Donor/Desynced, admitted because available_when_donor is on
	CodeDrained     Code = "Drained"
	CodeNonPrimary  Code = "NonPrimary" // not in the primary component: partitioned or lost quorum
	CodeDesynced    Code = "Desynced"   // Donor/Desynced: serving a state transfer or wsrep_desync=ON
	CodeJoining     Code = "Joining"    // Joining / Joined: catching up
	CodeNotReady    Code = "NotReady"   // wsrep_ready=OFF
	CodeRejecting   Code = "RejectingQueries"
	CodeReadOnly    Code = "ReadOnly"
	CodeNotGalera   Code = "WsrepOff"
	CodeUnreachable Code = "Unreachable" // the probe could not read the node at all
	CodeHoldsBack   Code = "HoldsBack"   // Synced, but it keeps the cluster paused (flow control) and cannot apply
)

// Verdict is the answer to "may this node take traffic?".
type Verdict struct {
	OK     bool   `json:"ok"`
	Code   Code   `json:"code"`
	State  string `json:"state"` // wsrep_local_state_comment
	Reason string `json:"reason"`
}

// Drained is the verdict on a node the operator drained, in any role.
func Drained(state string) Verdict {
	return Verdict{Code: CodeDrained, State: state, Reason: "drained for maintenance (hadrill undrain to admit it again)"}
}

// Judge decides a node's health from a snapshot: 200 only in the primary
// component and Synced (or Donor/Desynced with AvailableWhenDonor), and not
// drained, rejecting queries, or read-only when that is asked to count.
func Judge(s Snapshot, o HealthOptions) Verdict {
	st, v := s.Status, s.Variables
	state := st["wsrep_local_state_comment"]
	no := func(code Code, format string, a ...any) Verdict {
		return Verdict{Code: code, State: state, Reason: fmt.Sprintf(format, a...)}
	}
	switch {
	case o.Drained:
		return Drained(state)
	case !on(v["wsrep_on"]) || st["wsrep_cluster_status"] == "":
		return no(CodeNotGalera, "wsrep is off: not a Galera cluster member")
	case st["wsrep_cluster_status"] != "Primary":
		return no(CodeNonPrimary, "cluster status %s: not in the primary component (partitioned or quorum lost)", st["wsrep_cluster_status"])
	case v["wsrep_reject_queries"] != "" && !strings.EqualFold(v["wsrep_reject_queries"], "NONE"):
		return no(CodeRejecting, "wsrep_reject_queries=%s", v["wsrep_reject_queries"])
	}
	switch st["wsrep_local_state"] {
	case "4":
	case "2":
		if !o.AvailableWhenDonor {
			return no(CodeDesynced, "%s (state transfer donor or wsrep_desync=%s)", state, v["wsrep_desync"])
		}
		if on(v["wsrep_sst_donor_rejects_queries"]) {
			return no(CodeDesynced, "%s and wsrep_sst_donor_rejects_queries=ON", state)
		}
	case "1", "3":
		return no(CodeJoining, "%s: still catching up with the cluster", state)
	default:
		return no(CodeJoining, "local state %q (%s)", st["wsrep_local_state"], state)
	}
	if !on(st["wsrep_ready"]) {
		return no(CodeNotReady, "wsrep_ready=%s", st["wsrep_ready"])
	}
	if o.ReadOnlyUnavailable && on(v["read_only"]) {
		return no(CodeReadOnly, "read_only=ON")
	}
	if why := HoldsBack(FlowOf(st), o.Held); why != "" {
		return no(CodeHoldsBack, "%s, though %s", state, why)
	}
	if st["wsrep_local_state"] == "2" {
		return Verdict{OK: true, Code: CodeDonor, State: state, Reason: state + ", admitted: available_when_donor is on"}
	}
	return Verdict{OK: true, Code: CodeSynced, State: state, Reason: "Synced and in the primary component"}
}

// Unreachable is the verdict when the probe failed to read the node.
func Unreachable(err error) Verdict {
	reason := "cannot read the node"
	if err != nil {
		reason += ": " + err.Error()
	}
	return Verdict{Code: CodeUnreachable, State: "unknown", Reason: reason}
}

func on(v string) bool { return strings.EqualFold(v, "ON") || v == "1" }

// SyncedPrimary reports whether a member's wsrep_% status says it serves:
// Synced, in the primary component.
func SyncedPrimary(st map[string]string) bool {
	return Code(st["wsrep_local_state_comment"]) == CodeSynced && strings.EqualFold(st["wsrep_cluster_status"], "Primary")
}
