package galera

import (
	"fmt"
	"strings"
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
	Reason    string
}

// ChooseStartForced is ChooseStart with the operator's override: force names
// the node to bootstrap from when hadrill will not choose (its data wins;
// what only the others committed is lost).
func ChooseStartForced(nodes []SavedState, force string) (StartChoice, error) {
	if force == "" {
		return ChooseStart(nodes)
	}
	for _, n := range nodes {
		if n.Node == force {
			if !n.Present {
				return StartChoice{}, fmt.Errorf("--force %s: it has no saved Galera state", force)
			}
			return StartChoice{Mode: StartBootstrap, Bootstrap: force,
				Reason: fmt.Sprintf("%s bootstraps because the operator forced it (seqno %d); transactions only other nodes had are lost", force, n.Seqno)}, nil
		}
	}
	return StartChoice{}, fmt.Errorf("--force %s: not a node of this cluster", force)
}

// ChooseStart decides how a cluster whose nodes are all down starts again.
// It never picks a node merely for being first: only the most advanced
// node may bootstrap, and when that cannot be known it refuses.
func ChooseStart(nodes []SavedState) (StartChoice, error) {
	if len(nodes) == 0 {
		return StartChoice{}, fmt.Errorf("no nodes")
	}
	if len(nodes) == 1 { // no peer to re-form a view with; it holds the only copy
		if !nodes[0].Present {
			return StartChoice{}, fmt.Errorf("no saved Galera state on %s: the datadir was removed or never initialised", nodes[0].Node)
		}
		return StartChoice{Mode: StartBootstrap, Bootstrap: nodes[0].Node,
			Reason: fmt.Sprintf("%s is the cluster's only node: it bootstraps", nodes[0].Node)}, nil
	}
	var missing, unknown []string
	uuids := map[string]bool{}
	allViews, sameSeqno := true, true
	for _, n := range nodes {
		if !n.Present {
			missing = append(missing, n.Node)
			continue
		}
		uuids[n.UUID] = true
		allViews = allViews && n.HasView
		if n.Seqno < 0 {
			unknown = append(unknown, n.Node)
		}
		sameSeqno = sameSeqno && n.Seqno == nodes[0].Seqno
	}
	if len(missing) > 0 {
		return StartChoice{}, fmt.Errorf("no saved Galera state on %s: the datadir was removed or never initialised", strings.Join(missing, ", "))
	}
	if len(uuids) > 1 {
		return StartChoice{}, fmt.Errorf("nodes hold different cluster histories (%d state UUIDs): refusing to merge them; choose a node to keep with --force", len(uuids))
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
	best := nodes[0]
	for _, n := range nodes[1:] {
		if n.Seqno > best.Seqno || (n.Seqno == best.Seqno && n.SafeToBootstrap && !best.SafeToBootstrap) {
			best = n
		}
	}
	return StartChoice{Mode: StartBootstrap, Bootstrap: best.Node,
		Reason: fmt.Sprintf("%s has the highest seqno (%d): it bootstraps, the others join it", best.Node, best.Seqno)}, nil
}
