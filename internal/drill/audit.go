package drill

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/lab"
	"github.com/hadrill/hadrill/internal/results"
)

// AuditResult is `drill audit`: the acknowledged writes of a stored drill
// checked again on every node of its cluster now.
type AuditResult struct {
	RunID   string             `json:"run_id"`
	Cluster string             `json:"cluster"`
	Acked   int                `json:"acked"`
	Lost    map[string][]int64 `json:"lost_acked_writes"`
	Passed  bool               `json:"passed"`
}

// Audit re-checks a drill run against the lab as it is now.
func Audit(ctx context.Context, l *lab.Lab, runID string) (*AuditResult, error) {
	run, err := results.Load(l.Home, runID)
	if err != nil {
		return nil, err
	}
	var res Result
	if run.Kind != "drill" || json.Unmarshal(run.Results, &res) != nil {
		return nil, hderr.User("RUN_ID: run %s is a %s run, not a drill", runID, run.Kind)
	}
	if run.Lab != l.Plan.Lab {
		return nil, hderr.User("RUN_ID: run %s was drilled on lab %s, not %s (use --name %s)", runID, run.Lab, l.Plan.Lab, run.Lab)
	}
	c, ok := l.Plan.Cluster(res.Cluster)
	if !ok {
		return nil, hderr.User("RUN_ID: lab %s has no cluster %s any more", l.Plan.Lab, res.Cluster)
	}
	acked, err := ackedIDs(filepath.Join(results.RunDir(l.Home, runID), OpsFile))
	if err != nil {
		return nil, err
	}
	lost := AuditNodes(ctx, l, l.Nodes(c.Nodes), runID, acked, 2*time.Second)
	return &AuditResult{RunID: runID, Cluster: c.Name, Acked: len(acked), Lost: lost, Passed: len(lost) == 0}, nil
}

// ackedIDs reads the acknowledged write ids from a drill's ops.csv.
func ackedIDs(path string) ([]int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		c := strings.Split(sc.Text(), ",")
		if len(c) == 5 && c[0] == "write" && c[3] != "" && c[4] == "" {
			if id, err := strconv.ParseInt(c[1], 10, 64); err == nil {
				out = append(out, id)
			}
		}
	}
	return out, sc.Err()
}
