package galera

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hadrill/hadrill/internal/hderr"
)

// How a stopped cluster starts.
const (
	// StartTogether: start every node at once; they re-form the primary
	// component from their saved views (Reseed: write those views first).
	StartTogether = "together"
	// StartBootstrap: bootstrap one node, then join the others to it.
	StartBootstrap = "bootstrap"
)

// StartChoice is the decision and why it was taken.
type StartChoice struct {
	Mode      string
	Reseed    bool   // write identical gvwstate.dat files before starting together
	Bootstrap string // the node to bootstrap (StartBootstrap)
	// Joiners hold no state (the zero state UUID): they start once the
	// others serve, and join by a full state transfer.
	Joiners []string
	Reason  string
}

// ChooseStartForced is ChooseStart with the operator's override: force names
// the node to bootstrap from when hadrill will not choose (its data wins;
// what only the others committed is lost). A node whose state could not be
// read or that holds none (the zero state UUID) is never bootstrapped.
func ChooseStartForced(nodes []SavedState, force string) (StartChoice, error) {
	if force == "" {
		return ChooseStart(nodes)
	}
	for _, n := range nodes {
		if n.Node != force {
			continue
		}
		switch {
		case n.Unreadable != "":
			return StartChoice{}, hderr.User("--force %s: its saved state could not be read (%s): hadrill bootstraps nothing from a file it could not read", force, n.Unreadable)
		case !n.Present:
			return StartChoice{}, hderr.User("--force %s: it has no saved Galera state", force)
		case n.Empty():
			return StartChoice{}, hderr.User("--force %s: it holds no cluster state (zero state UUID: its last state transfer never completed); "+
				"bootstrapping it would throw away every other node's data", force)
		}
		var joiners []string
		for _, o := range nodes {
			if o.Empty() {
				joiners = append(joiners, o.Node)
			}
		}
		return StartChoice{Mode: StartBootstrap, Bootstrap: force, Joiners: joiners,
			Reason: fmt.Sprintf("%s bootstraps because the operator forced it (seqno %d); transactions only other nodes had are lost", force, n.Seqno)}, nil
	}
	return StartChoice{}, hderr.User("--force %s: not a node of this cluster", force)
}

// ChooseStart decides how a cluster whose nodes are all down starts again.
// It never picks a node merely for being first: only the most advanced
// node may bootstrap, and when that cannot be known it refuses. Nothing is
// decided from a saved state that could not be read. A node holding no
// state (the zero state UUID: a crash during its state transfer) is never
// a candidate: the others decide, and it joins them after.
func ChooseStart(nodes []SavedState) (StartChoice, error) {
	if len(nodes) == 0 {
		return StartChoice{}, fmt.Errorf("no nodes")
	}
	var unreadable, empty []string
	var holders []SavedState
	for _, n := range nodes {
		switch {
		case n.Unreadable != "":
			unreadable = append(unreadable, fmt.Sprintf("%s (%s)", n.Node, n.Unreadable))
		case n.Empty():
			empty = append(empty, n.Node)
		default:
			holders = append(holders, n)
		}
	}
	if len(unreadable) > 0 {
		return StartChoice{}, fmt.Errorf("the saved state of %s could not be read: hadrill decides nothing from a file it could not read; "+
			"find why (its disk: `hadrill status`) and start again", strings.Join(unreadable, ", "))
	}
	if len(empty) == 0 {
		return choose(nodes)
	}
	if len(holders) == 0 {
		return StartChoice{}, fmt.Errorf("no node holds cluster state (%s: the zero state UUID, a state transfer that never completed): "+
			"there is nothing to start from; restore a backup (`hadrill restore`)", strings.Join(empty, ", "))
	}
	which := fmt.Sprintf("%s hold%s no state (the zero state UUID: a state transfer that never completed)", strings.Join(empty, ", "), map[bool]string{true: "s", false: ""}[len(empty) == 1])
	c, err := bootstrapOf(holders)
	if err != nil {
		return StartChoice{}, fmt.Errorf("%s; of the others: %w", which, err)
	}
	c.Joiners = empty
	c.Reason = fmt.Sprintf("%s; %s, then %s join%s by a full state transfer", which, c.Reason, strings.Join(empty, ", "), map[bool]string{true: "s", false: ""}[len(empty) == 1])
	return c, nil
}

// bootstrapOf is how the nodes holding state start when others join them
// afterwards by a full state transfer: one of them bootstraps (starting
// together would restore a view that names the joiners too).
func bootstrapOf(nodes []SavedState) (StartChoice, error) {
	c, err := choose(nodes)
	if err != nil || c.Mode == StartBootstrap {
		return c, err
	}
	var unknown []string
	for _, n := range nodes {
		if n.Seqno < 0 {
			unknown = append(unknown, n.Node)
		}
	}
	if len(unknown) > 0 {
		return StartChoice{}, fmt.Errorf("seqno unknown on %s (not shut down cleanly): the most advanced node cannot be chosen safely; "+
			"recover positions first or choose one with --force", strings.Join(unknown, ", "))
	}
	best := mostAdvanced(nodes)
	return StartChoice{Mode: StartBootstrap, Bootstrap: best.Node,
		Reason: fmt.Sprintf("%s has the highest seqno (%d): it bootstraps, the others join it", best.Node, best.Seqno)}, nil
}

// choose decides among nodes that were all read and all hold state (or
// none was ever made: missing).
func choose(nodes []SavedState) (StartChoice, error) {
	if len(nodes) == 1 { // no peer to re-form a view with; it holds the only copy
		if !nodes[0].Present {
			return StartChoice{}, fmt.Errorf("no saved Galera state on %s: the datadir was removed or never initialised", nodes[0].Node)
		}
		return StartChoice{Mode: StartBootstrap, Bootstrap: nodes[0].Node,
			Reason: fmt.Sprintf("%s is the only node holding the cluster's state: it bootstraps", nodes[0].Node)}, nil
	}
	var missing, unknown []string
	byUUID := map[string][]string{}
	allViews, sameSeqno := true, true
	for _, n := range nodes {
		if !n.Present {
			missing = append(missing, n.Node)
			continue
		}
		byUUID[n.UUID] = append(byUUID[n.UUID], n.Node)
		allViews = allViews && n.HasView
		if n.Seqno < 0 {
			unknown = append(unknown, n.Node)
		}
		sameSeqno = sameSeqno && n.Seqno == nodes[0].Seqno
	}
	if len(missing) > 0 {
		return StartChoice{}, fmt.Errorf("no saved Galera state on %s: the datadir was removed or never initialised", strings.Join(missing, ", "))
	}
	if len(byUUID) > 1 {
		var who []string
		for _, uuid := range slices.Sorted(maps.Keys(byUUID)) {
			who = append(who, fmt.Sprintf("%s hold%s state %s", strings.Join(byUUID[uuid], ", "), map[bool]string{true: "s", false: ""}[len(byUUID[uuid]) == 1], uuid))
		}
		return StartChoice{}, fmt.Errorf("nodes hold different cluster histories (%s): refusing to merge them; choose the node whose data to keep with --force "+
			"(what only the others hold is lost)", strings.Join(who, "; "))
	}
	if allViews {
		return StartChoice{Mode: StartTogether, Reason: "every node kept its last primary view (pc.recovery): they re-form the cluster together"}, nil
	}
	if len(unknown) == 0 && sameSeqno {
		return StartChoice{Mode: StartTogether, Reseed: true,
			Reason: fmt.Sprintf("every node stopped cleanly at seqno %d: identical state, no bootstrap or state transfer needed", nodes[0].Seqno)}, nil
	}
	if len(unknown) > 0 {
		return StartChoice{}, fmt.Errorf("seqno unknown on %s (not shut down cleanly): the most advanced node cannot be chosen safely; recover positions first or choose one with --force",
			strings.Join(unknown, ", "))
	}
	best := mostAdvanced(nodes)
	return StartChoice{Mode: StartBootstrap, Bootstrap: best.Node,
		Reason: fmt.Sprintf("%s has the highest seqno (%d): it bootstraps, the others join it", best.Node, best.Seqno)}, nil
}

// mostAdvanced is the node with the highest seqno, ties broken by
// safe_to_bootstrap (never by order).
func mostAdvanced(nodes []SavedState) SavedState {
	best := nodes[0]
	for _, n := range nodes[1:] {
		if n.Seqno > best.Seqno || (n.Seqno == best.Seqno && n.SafeToBootstrap && !best.SafeToBootstrap) {
			best = n
		}
	}
	return best
}
