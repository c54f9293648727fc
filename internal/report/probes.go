package report

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/workload"
)

// probePart is a probe's run: its rows (of type T) as a table, and a
// finding that says each row in words.
type probePart[T any] struct {
	tablePart
	rows []T
	what string         // the probe, as the finding opens
	says func(T) string // a row in words
}

// readProbe reads a probe's rows for its part.
func readProbe[T any](what string, says func(T) string) func(string, *results.Run) part {
	return func(_ string, r *results.Run) part {
		p := &probePart[T]{tablePart: tablePart{Table: table(r.Results)}, what: what, says: says}
		_ = json.Unmarshal(r.Results, &p.rows)
		return p
	}
}

func (p *probePart[T]) finding(r *Run, _ *Run) string {
	var parts []string
	for _, x := range p.rows {
		parts = append(parts, p.says(x))
	}
	if len(parts) == 0 {
		return p.tablePart.finding(r, nil)
	}
	return fmt.Sprintf("%s, lab %s (run %s): %s.", p.what, r.Lab, r.ID, strings.Join(parts, "; "))
}

// receiptSays is a semi-sync receipt probe's row: the share of commits
// acknowledged with nothing applied on the replica — semi-sync's promise of
// receipt, not of commit — and a commit's time.
func receiptSays(x workload.Receipt) string {
	return fmt.Sprintf("%s acknowledged %d of %d commits from %s (%d returned without it) with %d of them applied there: %.2f acknowledged unapplied; a commit %.1f ms (p99 %.1f ms); every row on it %.2f s after its applier started again",
		x.Replica, x.AckedSemiSync, x.Commits, x.Primary, x.Async, x.OnReplicaAtAck, x.AckedUnapplied(), x.AvgMs, x.P99Ms, x.AppliedS)
}

// donorSays is a donor probe's row: the share of new connections the
// member took through the load balancer while a donor, while Synced and
// once Synced again, what its check answered, and when it stopped and
// started taking them.
func donorSays(d workload.Donor) string {
	return fmt.Sprintf("%s took %.3f of %d new connections through %s while %s (its check answered %d), %.3f while Synced (%d), %.3f once Synced again (%d); %s",
		d.Node, d.DonorShare, d.Connections, d.LB, d.DonorState, d.DonorProbe, d.SyncedShare, d.SyncedProbe, d.BackShare, d.BackProbe, donorTimes(d))
}

// donorTimes says when the member stopped and started taking connections.
func donorTimes(d workload.Donor) string {
	out := "none landed on it after the desync"
	if d.OutS > 0 {
		out = fmt.Sprintf("the last landed %.2f s after the desync", d.OutS)
	}
	if d.BackS > 0 {
		return out + fmt.Sprintf(", the first %.2f s after it was Synced again", d.BackS)
	}
	return out + ", none once Synced again"
}
