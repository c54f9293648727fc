package report

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/workload"
)

// receiptPart is a semi-sync receipt probe: what the replica acknowledged
// with its applier stopped, beside its results' table.
type receiptPart struct {
	tablePart
	Receipts []workload.Receipt
}

func readReceipt(_ string, r *results.Run) part {
	p := &receiptPart{tablePart: tablePart{Table: table(r.Results)}}
	_ = json.Unmarshal(r.Results, &p.Receipts)
	return p
}

// finding: the share of commits acknowledged with nothing applied on the
// replica — semi-sync's promise of receipt, not of commit — and a
// commit's time.
func (p *receiptPart) finding(r *Run, _ *Run) string {
	var parts []string
	for _, x := range p.Receipts {
		parts = append(parts, fmt.Sprintf("%s acknowledged %d of %d commits from %s (%d returned without it) with %d of them applied there: %.2f acknowledged unapplied; a commit %.1f ms (p99 %.1f ms); every row on it %.2f s after its applier started again",
			x.Replica, x.AckedSemiSync, x.Commits, x.Primary, x.Async, x.OnReplicaAtAck, x.AckedUnapplied(), x.AvgMs, x.P99Ms, x.AppliedS))
	}
	if len(parts) == 0 {
		return p.tablePart.finding(r, nil)
	}
	return fmt.Sprintf("Semi-sync receipt, lab %s (run %s): %s.", r.Lab, r.ID, strings.Join(parts, "; "))
}

// donorPart is a donor probe: the share of new connections a member took
// through the load balancer while Synced, while a donor and once Synced
// again, and what its check answered.
type donorPart struct {
	tablePart
	Donors []workload.Donor
}

func readDonor(_ string, r *results.Run) part {
	p := &donorPart{tablePart: tablePart{Table: table(r.Results)}}
	_ = json.Unmarshal(r.Results, &p.Donors)
	return p
}

func (p *donorPart) finding(r *Run, _ *Run) string {
	var parts []string
	for _, d := range p.Donors {
		parts = append(parts, fmt.Sprintf("%s took %.3f of %d new connections through %s while %s (its check answered %d), %.3f while Synced (%d), %.3f once Synced again (%d); %s",
			d.Node, d.DonorShare, d.Connections, d.LB, d.DonorState, d.DonorProbe, d.SyncedShare, d.SyncedProbe, d.BackShare, d.BackProbe, donorTimes(d)))
	}
	if len(parts) == 0 {
		return p.tablePart.finding(r, nil)
	}
	return fmt.Sprintf("Donor probe, lab %s (run %s): %s.", r.Lab, r.ID, strings.Join(parts, "; "))
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
