package drill

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/replication"
)

// What the audit could say of one node. A node that could not be read is
// unverified, never "missing everything": a verdict only claims what it saw.
const (
	NodeVerified   = "verified"   // every acknowledged id was read back
	NodeMissing    = "missing"    // read, and some acknowledged ids are not there
	NodeUnverified = "unverified" // could not be read (Reason says why)
	// NodeFenced: a primary cluster's node kept out of replication (a
	// former primary holding what the new one never received): not read,
	// since what it lacks from after the failover it lacks by design
	// (Reason: what it holds instead).
	NodeFenced = "fenced"
	// NodeLagging: read, lacking acknowledged ids, while its replication
	// had still not reached the most advanced node's position when the
	// audit gave up waiting: late, not shown lost.
	NodeLagging = "lagging"
)

// NodeAudit is the acknowledged-write audit of one node.
type NodeAudit struct {
	Node    string  `json:"node"`
	State   string  `json:"state"` // verified, missing or unverified
	Checked int     `json:"checked"`
	Missing []int64 `json:"missing,omitempty"`
	Reason  string  `json:"reason,omitempty"`
}

// Read is what reading one node gave: the ids it holds, or why it could
// not be read. Gone says the server answered that the audited table (or
// its schema) does not exist: it was read, and it holds none of them.
type Read struct {
	IDs  map[int64]bool
	Err  error
	Gone string
}

// AuditOf judges every node's read against the acknowledged ids, sorted by
// node name.
func AuditOf(acked []int64, reads map[string]Read) []NodeAudit {
	var out []NodeAudit
	for _, node := range slices.Sorted(maps.Keys(reads)) {
		r := reads[node]
		a := NodeAudit{Node: node, Checked: len(acked)}
		switch {
		case r.Err != nil:
			a.State, a.Checked, a.Reason = NodeUnverified, 0, r.Err.Error()
		default:
			for _, id := range acked {
				if !r.IDs[id] {
					a.Missing = append(a.Missing, id)
				}
			}
			slices.Sort(a.Missing)
			a.State = NodeVerified
			if len(a.Missing) > 0 {
				a.State, a.Reason = NodeMissing, r.Gone
			}
		}
		out = append(out, a)
	}
	return out
}

// Late are the nodes of an audit that lack acknowledged writes while their
// GTID position is behind the most advanced node's in some domain.
func Late(audit []NodeAudit, pos map[string]string) []string {
	most := map[uint32]uint64{}
	on := map[uint32]int{} // a domain of one node alone is its own writes' (a Galera member's local domain)
	for _, p := range pos {
		parsed, _ := replication.ParsePosition(p)
		for d, g := range parsed {
			most[d] = max(most[d], g.Seq)
			on[d]++
		}
	}
	for d := range most {
		if on[d] < 2 {
			delete(most, d)
		}
	}
	var out []string
	for _, a := range audit {
		if a.State != NodeMissing || pos[a.Node] == "" {
			continue
		}
		have, _ := replication.ParsePosition(pos[a.Node])
		for d, seq := range most {
			if have[d].Seq < seq {
				out = append(out, a.Node)
				break
			}
		}
	}
	return out
}

// Lagging marks the late nodes of an audit as lagging (not lost), with
// where they stood.
func Lagging(audit []NodeAudit, late []string, pos map[string]string, waited time.Duration) []NodeAudit {
	out := slices.Clone(audit)
	var most []string
	for _, n := range slices.Sorted(maps.Keys(pos)) {
		most = append(most, n+" at "+pos[n])
	}
	for i, a := range out {
		if slices.Contains(late, a.Node) {
			out[i].State = NodeLagging
			out[i].Reason = fmt.Sprintf("its replication had not caught up after %v (%s)", waited, strings.Join(most, ", "))
		}
	}
	return out
}

// settled reports whether an audit needs no second look: every node read
// and holding everything. (Missing or unreadable nodes are read again until
// the audit's wait runs out: a lagging or restarting node may catch up.)
func settled(audit []NodeAudit) bool {
	for _, a := range audit {
		if a.State != NodeVerified && a.State != NodeFenced {
			return false
		}
	}
	return true
}

// lostOf is the audit's observed losses: node → acknowledged ids it lacks.
func lostOf(audit []NodeAudit) map[string][]int64 {
	out := map[string][]int64{}
	for _, a := range audit {
		if a.State == NodeMissing {
			out[a.Node] = a.Missing
		}
	}
	return out
}

// lostWrites counts the acknowledged writes some node lacks, each once
// however many nodes lack it: a write a Galera cluster lost is missing
// from every member, and is one write lost, not one a member.
func lostWrites(lost map[string][]int64) int {
	ids := map[int64]bool{}
	for _, missing := range lost {
		for _, id := range missing {
			ids[id] = true
		}
	}
	return len(ids)
}

// Sums is one node's CHECKSUM TABLE of every app table, or why it could not
// be read in full.
type Sums struct {
	Tables map[string]string
	Err    error
}

// Checksums is what the nodes' checksums say together.
type Checksums struct {
	Read   map[string]map[string]string // node → table → checksum, for the nodes that were read
	Unread map[string]string            // node → why its checksums could not be read
	Differ []string                     // tables that differ between the nodes that were read
	Agree  bool                         // every node read, and all the same
}

// ChecksumVerdict judges the nodes' checksums: they agree only when every
// node's were read and are the same.
func ChecksumVerdict(sums map[string]Sums) Checksums {
	c := Checksums{Read: map[string]map[string]string{}, Unread: map[string]string{}}
	for node, s := range sums {
		if s.Err != nil {
			c.Unread[node] = s.Err.Error()
			continue
		}
		c.Read[node] = s.Tables
	}
	ok, differ := Agree(c.Read)
	c.Differ, c.Agree = differ, ok && len(c.Unread) == 0 && len(c.Read) > 0
	return c
}

// Verdicts of a drill or an audit, in the order they take precedence.
const (
	VerdictLost        = "lost"        // an acknowledged write is missing on a node that was read
	VerdictFailed      = "failed"      // nodes disagree, or the drill found another problem
	VerdictUnverified  = "unverified"  // some node could not be read: nothing can be claimed of it
	VerdictInterrupted = "interrupted" // stopped early; what it saw holds, but the drill did not finish
	VerdictPassed      = "passed"      // every node read, every acknowledged write on every node, nodes agree
)

// Decide is the overall verdict: an observed loss first, then any other
// observed problem, then what could not be verified, then an interruption.
func Decide(audit []NodeAudit, differ []string, unreadSums int, problems []string, interrupted bool) string {
	unverified := unreadSums > 0
	for _, a := range audit {
		switch a.State {
		case NodeMissing:
			return VerdictLost
		case NodeUnverified, NodeLagging:
			unverified = true
		}
	}
	switch {
	case len(problems) > 0 || len(differ) > 0:
		return VerdictFailed
	case unverified || len(audit) == 0:
		return VerdictUnverified
	case interrupted:
		return VerdictInterrupted
	}
	return VerdictPassed
}

// auditProblems words what the audit observed, one line a node.
func auditProblems(audit []NodeAudit) []string {
	var out []string
	for _, a := range audit {
		switch a.State {
		case NodeMissing:
			line := fmt.Sprintf("%s lacks %d acknowledged writes (ids %s)", a.Node, len(a.Missing), ids(a.Missing))
			if a.Reason != "" {
				line += ": " + a.Reason
			}
			out = append(out, line)
		case NodeUnverified:
			out = append(out, fmt.Sprintf("%s could not be audited: %s", a.Node, a.Reason))
		case NodeLagging:
			out = append(out, fmt.Sprintf("%s lacks %d acknowledged writes, and %s: late, not shown lost", a.Node, len(a.Missing), a.Reason))
		}
	}
	return out
}

func joinSorted(m map[string]string) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, k+": "+m[k])
	}
	return strings.Join(out, "; ")
}
