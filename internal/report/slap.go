package report

import (
	"encoding/json"
	"fmt"

	"github.com/hadrill/hadrill/internal/chart"
	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/words"
	"github.com/hadrill/hadrill/internal/workload/slap"
)

// slapPart is a mariadb-slap sweep: the seconds its clients took for
// their queries at each concurrency, and the queries a second that makes.
type slapPart struct {
	plain
	Points []slap.Point
	Doubt  string // mariadb-slap's first error line: its timings are not to be trusted
}

func readSlap(_ string, r *results.Run) part {
	p := &slapPart{}
	_ = json.Unmarshal(r.Results, &p.Points)
	if len(r.Warnings) > 0 {
		p.Doubt = r.Warnings[0]
	}
	return p
}

// finding says the most queries a second and at which concurrency, the
// lowest concurrency's figures beside them, and a doubt first.
func (p *slapPart) finding(r *Run, _ *Run) string {
	if len(p.Points) == 0 {
		return fmt.Sprintf("mariadb-slap, lab %s (run %s): no concurrency finished.", r.Lab, r.ID)
	}
	s := fmt.Sprintf("mariadb-slap, lab %s (run %s)", r.Lab, r.ID)
	if p.Doubt != "" {
		s += fmt.Sprintf(": its timings are not to be trusted, mariadb-slap reported errors (%s);", p.Doubt)
	} else {
		s += ":"
	}
	best, first := p.Points[0], p.Points[0]
	for _, pt := range p.Points {
		if pt.QPS > best.QPS {
			best = pt
		}
		if pt.Concurrency < first.Concurrency {
			first = pt
		}
	}
	s += fmt.Sprintf(" %s queries a second at most, with %s (each client's %s in %.3f s on average)",
		words.Thousands(int64(best.QPS+0.5)), words.Count(best.Concurrency, "client"), words.Count(best.QueriesPerClient, "query"), best.AvgS)
	if first.Concurrency != best.Concurrency {
		s += fmt.Sprintf("; %s with %s (%.3f s)", words.Thousands(int64(first.QPS+0.5)), words.Count(first.Concurrency, "client"), first.AvgS)
	}
	return s + "."
}

// slapCharts draws every slap run's queries a second against its clients.
func slapCharts(runs []Run, label map[string]string) []chart.Chart {
	c := chart.Chart{ID: "slap-qps", Title: "mariadb-slap: queries a second vs clients", X: "clients", Y: "queries/s", LogX: true, PointTicks: true}
	for _, r := range runs {
		p, ok := r.Part.(*slapPart)
		if !ok || len(p.Points) == 0 {
			continue
		}
		var pts [][2]float64
		for _, pt := range p.Points {
			pts = append(pts, [2]float64{float64(pt.Concurrency), pt.QPS})
		}
		c.Series = append(c.Series, chart.Series{Name: label[r.ID], Points: pts})
	}
	if len(c.Series) == 0 {
		return nil
	}
	return []chart.Chart{c}
}

// slapPage is its section of the page (each concurrency's seconds and
// queries a second).
const slapPage = `{{if .Part.Doubt}}<p class="warn">mariadb-slap reported errors: {{.Part.Doubt}}</p>{{end}}
{{with .Part.Points}}
<table>
<tr><th>clients</th><th>queries a client</th><th>avg s</th><th>min s</th><th>max s</th><th>queries/s</th></tr>
{{range .}}<tr><td>{{.Concurrency}}</td><td>{{.QueriesPerClient}}</td><td>{{printf "%.3f" .AvgS}}</td><td>{{printf "%.3f" .MinS}}</td><td>{{printf "%.3f" .MaxS}}</td><td>{{printf "%.0f" .QPS}}</td></tr>
{{end}}
</table>
{{end}}`

// title names the run by its program and lab.
func (p *slapPart) title(r *Run) string { return "mariadb-slap, lab " + r.Lab }
