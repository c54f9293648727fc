package drill

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/results"
)

// AuditResult is `drill audit`: the acknowledged writes of a stored drill
// checked again on every node of its cluster now.
type AuditResult struct {
	RunID   string             `json:"run_id"`
	Cluster string             `json:"cluster"`
	Acked   int                `json:"acked"`
	Nodes   []NodeAudit        `json:"audit"` // per node: verified, missing or unverified
	Lost    map[string][]int64 `json:"lost_acked_writes"`
	Verdict string             `json:"verdict"` // passed, lost or unverified
	Passed  bool               `json:"passed"`
}

// Audit re-checks a drill run against the lab as it is now.
func Audit(ctx context.Context, l Lab, runID string) (*AuditResult, error) {
	run, err := results.Load(l.Home(), runID)
	if err != nil {
		return nil, err
	}
	var res Result
	if run.Kind != results.Drill || json.Unmarshal(run.Results, &res) != nil {
		return nil, hderr.User("RUN_ID: run %s is a %s run, not a drill", runID, run.Kind)
	}
	if run.Lab != l.Plan().Lab {
		return nil, hderr.User("RUN_ID: run %s was drilled on lab %s, not %s (use --name %s)", runID, run.Lab, l.Plan().Lab, run.Lab)
	}
	if made := l.Created(); !made.IsZero() && made.After(run.Started) {
		return nil, hderr.User("RUN_ID: run %s was drilled at %s on an earlier lab named %s; this one was made at %s with new datadirs, "+
			"so the run's writes were never on it (audit a run of this lab)", runID, run.Started.Local().Format(time.DateTime), run.Lab, made.Local().Format(time.DateTime))
	}
	c, ok := l.Plan().Cluster(res.Cluster)
	if !ok {
		return nil, hderr.User("RUN_ID: lab %s has no cluster %s any more", l.Plan().Lab, res.Cluster)
	}
	rows := results.ReadCSV(l.Home(), runID, OpsFile)
	if len(rows) == 0 {
		return nil, fmt.Errorf("run %s: %s is missing or empty: nothing to audit", runID, OpsFile)
	}
	acked := ackedIDs(rows)
	audit := AuditNodes(ctx, l, nodes(l.Plan(), c.Nodes), runID, acked, 2*time.Second)
	v := Decide(audit, nil, 0, nil, false)
	return &AuditResult{RunID: runID, Cluster: c.Name, Acked: len(acked), Nodes: audit, Lost: lostOf(audit), Verdict: v, Passed: v == VerdictPassed}, nil
}

// ackedIDs picks the acknowledged write ids out of a drill's ops.csv rows
// (op, id, sent_ns, done_ns, code).
func ackedIDs(rows [][]string) []int64 {
	var out []int64
	for _, c := range rows {
		if len(c) == 5 && c[0] == "write" && c[3] != "" && c[4] == "" {
			if id, err := strconv.ParseInt(c[1], 10, 64); err == nil {
				out = append(out, id)
			}
		}
	}
	return out
}
