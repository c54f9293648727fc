package report

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hadrill/hadrill/internal/consistency"
	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/workload"
)

// checkPart is a consistency run: the checker's verdict on its history.
type checkPart struct {
	plain
	Check *consistency.Result
}

func readCheck(_ string, r *results.Run) part {
	var out workload.ConsistencyOutcome
	_ = json.Unmarshal(r.Results, &out)
	return &checkPart{Check: out.Check}
}

func (p *checkPart) finding(r *Run, _ *Run) string {
	c := p.Check
	if c == nil {
		return fmt.Sprintf("Consistency, lab %s (run %s): its history was not checked.", r.Lab, r.ID)
	}
	s := fmt.Sprintf("Consistency, lab %s (run %s): %d transactions committed, %d failed, %d of unknown outcome; ", r.Lab, r.ID, c.OK, c.Fail, c.Info)
	if c.Escaped > 0 {
		s += fmt.Sprintf("%d ended by the server before their commit without an error; ", c.Escaped)
	}
	s += c.Verdict()
	var found []string
	for _, a := range c.Anomalies {
		found = append(found, fmt.Sprintf("%s: %s", a.Type, a.Counted()))
	}
	if len(found) > 0 {
		s += " (found: " + strings.Join(found, ", ") + ")"
	}
	if c.Own != nil {
		s += "; " + c.Own.Of + ": " + c.Own.Text
	}
	var reads []string
	for _, f := range c.Reads {
		reads = append(reads, f.Text())
	}
	if len(reads) > 0 {
		s += "; reads: " + strings.Join(reads, "; ")
	}
	return s + "."
}

// checkPage is its section of the page (the checker's verdict, the anomalies it found with an example each).
const checkPage = `{{with .Part.Check}}
<table>
<tr><th class="l">checked as</th><td class="l">{{.Model}}: {{if .Valid}}valid{{else}}<span class="warn">not {{.Model}}</span>{{end}} ({{.OK}} committed, {{.Fail}} failed, {{.Info}} unknown)</td></tr>
{{with .Own}}<tr><th class="l">{{.Of}}</th><td class="l">{{.Text}}</td></tr>
{{end}}{{range .Reads}}<tr><th class="l">reads{{if .Node}} on {{.Node}}{{end}}</th><td class="l">{{.Text}} (stale: missed a write acknowledged before they began; behind: at least the time since)</td></tr>
{{end}}{{range .Anomalies}}<tr><th class="l">{{.Type}} ×{{.Count}}{{if .Forbidden}} <span class="warn">forbidden</span>{{end}}</th><td class="l">{{.Example}}</td></tr>
{{end}}</table>
{{end}}`
