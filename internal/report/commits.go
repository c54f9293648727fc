package report

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/workload"
)

// commitsPart is a commit-latency run: each target's commit latencies.
type commitsPart struct {
	plain
	Commits []workload.Latency
}

func readCommits(_ string, r *results.Run) part {
	p := &commitsPart{}
	_ = json.Unmarshal(r.Results, &p.Commits)
	return p
}

func (p *commitsPart) finding(r *Run, _ *Run) string {
	var parts []string
	for _, c := range p.Commits {
		parts = append(parts, fmt.Sprintf("%s p50 %.2f ms, p99 %.2f ms (%d commits%s)", c.Target, c.P50, c.P99, c.Count, errorsNote(c.Errors)))
	}
	if len(parts) == 0 {
		return fmt.Sprintf("Commit latency, lab %s (run %s): no commit measured.", r.Lab, r.ID)
	}
	return fmt.Sprintf("Commit latency, lab %s: %s.", r.Lab, strings.Join(parts, "; "))
}

// commitsPage is its section of the page (each target's commit latencies).
const commitsPage = `{{if .Part.Commits}}
<table>
<tr><th class="l">target</th><th>commits</th><th>p50 ms</th><th>p95 ms</th><th>p99 ms</th><th>avg ms</th><th>max ms</th><th>errors</th></tr>
{{range .Part.Commits}}<tr><td class="l">{{.Target}}</td><td>{{.Count}}</td><td>{{f2 .P50}}</td><td>{{f2 .P95}}</td><td>{{f2 .P99}}</td><td>{{f2 .Avg}}</td><td>{{f2 .Max}}</td><td>{{.Errors}}</td></tr>
{{end}}
</table>
{{end}}`
