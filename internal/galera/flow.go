package galera

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A Galera node whose apply queue grows past gcs.fc_limit asks the cluster
// to pause replication (flow control), and every member's commits wait
// until it asks no more. A node that cannot apply at all (its disk full,
// its volume stalled) asks once and keeps the whole cluster paused while
// staying Synced: clustercheck's contract would call it healthy. hadrill's
// agent admits a node while it can commit: it refuses one that has held
// the cluster paused for HoldLimit, committing nothing and its apply queue
// not draining (the others' commits then wait for it too, but it is where
// the cause is, and the load balancer's view says so). A busy node, however
// long it asks for pauses, commits between them: a saturated cluster's
// slowest member is not taken out (and its sessions shut) for being the
// slowest.

// HoldLimit is how long a node may keep the cluster paused, its queue not
// draining, before it is reported as holding the cluster back.
const HoldLimit = 5 * time.Second

// Flow is a node's flow control as one snapshot says it.
type Flow struct {
	Requested bool  // this node asks the cluster to pause (wsrep_flow_control_requested)
	Active    bool  // the cluster is paused (wsrep_flow_control_active)
	Queue     int   // write sets received, not yet applied (wsrep_local_recv_queue)
	Committed int64 // the last write set it committed (wsrep_last_committed; 0: not known)
}

// FlowOf reads a node's flow control from its wsrep status.
func FlowOf(st map[string]string) Flow {
	q, _ := strconv.Atoi(st["wsrep_local_recv_queue"])
	c, _ := strconv.ParseInt(st["wsrep_last_committed"], 10, 64)
	return Flow{Requested: truthy(st["wsrep_flow_control_requested"]), Active: truthy(st["wsrep_flow_control_active"]), Queue: q, Committed: c}
}

func truthy(v string) bool { return strings.EqualFold(v, "true") || on(v) }

// Hold remembers, over a node's snapshots, since when it has asked for
// flow control without committing, its apply queue not draining.
type Hold struct {
	Since     time.Time // zero: it does not hold the cluster
	Queue     int       // its queue then
	Committed int64     // its last committed write set then
}

// Observe takes a snapshot's flow control, seen at now.
func (h *Hold) Observe(f Flow, now time.Time) {
	switch {
	case !f.Requested:
		*h = Hold{}
	case h.Since.IsZero() || f.Queue < h.Queue || f.Committed > h.Committed: // it asks anew, its queue drains or it commits: a busy node, not a stuck one
		*h = Hold{Since: now, Queue: f.Queue, Committed: f.Committed}
	}
}

// For is how long the node has held the cluster at now.
func (h Hold) For(now time.Time) time.Duration {
	if h.Since.IsZero() {
		return 0
	}
	return now.Sub(h.Since)
}

// HoldsBack says why the node holds the cluster back, "" when it does not
// (yet): it has kept the cluster paused for at least HoldLimit.
func HoldsBack(f Flow, held time.Duration) string {
	if !f.Requested || held < HoldLimit {
		return ""
	}
	return fmt.Sprintf("it has kept the cluster's replication paused for %s, committing nothing (flow control: %d write sets wait to be applied here and do not drain): every member's commits wait for it",
		held.Round(time.Second), f.Queue)
}

// Holding says what a member that asks for flow control keeps waiting,
// with its disk faults (volume → what; a full volume: the server waits for
// space, and retries a write once a minute).
func (f Flow) Holding(diskFaults map[string]string) string {
	why := fmt.Sprintf("asks the cluster to pause replication (flow control: %d write sets wait to be applied there): every member's commits wait for it", f.Queue)
	var full []string
	for _, v := range slices.Sorted(maps.Keys(diskFaults)) {
		if strings.Contains(diskFaults[v], "full") {
			full = append(full, v)
		}
	}
	const waits = " (the server waits for space, and retries a write once a minute once it has some)"
	switch len(full) {
	case 0:
		return why
	case 1:
		return why + "; its " + full[0] + " volume is full" + waits
	}
	return why + fmt.Sprintf("; its %s and %s volumes are full", strings.Join(full[:len(full)-1], ", "), full[len(full)-1]) + waits
}
