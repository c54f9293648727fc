package replication

import "fmt"

// Candidate is a node of a channel's source cluster as the keeper sees it.
type Candidate struct {
	Node    string
	Healthy bool     // serving: a Synced member of the primary component (or a writable primary)
	Pos     Position // its gtid_binlog_pos
}

// SourceChoice is what to do with a channel.
type SourceChoice struct {
	Repoint bool
	Node    string // the source to use (the current one when Repoint is false)
	Reason  string
	// Behind are the healthy nodes that could take over but have not yet
	// logged everything the receiver applied (a Galera member a moment
	// behind the one the receiver read from).
	Behind []string
}

// ChooseSource keeps a channel on its current source while that node is
// healthy; otherwise it picks the first healthy node whose binary log holds
// everything the receiver has applied (so re-pointing by GTID neither skips
// nor repeats a transaction). No healthy candidate: keep waiting.
func ChooseSource(current string, applied Position, cands []Candidate) SourceChoice {
	for _, c := range cands {
		if c.Node == current && c.Healthy {
			return SourceChoice{Node: current, Reason: fmt.Sprintf("source %s is healthy", current)}
		}
	}
	var behind []string
	for _, c := range cands {
		if !c.Healthy || c.Node == current {
			continue
		}
		if !c.Pos.Covers(applied) {
			behind = append(behind, c.Node)
			continue
		}
		return SourceChoice{Repoint: true, Node: c.Node,
			Reason: fmt.Sprintf("source %s is not healthy; %s is Synced and its binary log holds position %s", current, c.Node, applied)}
	}
	reason := fmt.Sprintf("source %s is not healthy and no other node is", current)
	if len(behind) > 0 {
		reason = fmt.Sprintf("source %s is not healthy; %v are behind the receiver's position %s", current, behind, applied)
	}
	return SourceChoice{Node: current, Reason: reason, Behind: behind}
}
