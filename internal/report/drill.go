package report

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/hadrill/hadrill/internal/chart"
	"github.com/hadrill/hadrill/internal/drill"
	"github.com/hadrill/hadrill/internal/lb/proxy"
	"github.com/hadrill/hadrill/internal/results"
)

// drillPart is a drill: its verdict and figures, and the operations per
// second around its fault.
type drillPart struct {
	Result   *drill.Result
	Timeline map[string][][2]float64
}

func readDrill(home string, r *results.Run) part {
	p := &drillPart{Result: &drill.Result{}}
	_ = json.Unmarshal(r.Results, p.Result)
	p.Timeline = readTimeline(results.ReadCSV(home, r.ID, drill.TimelineFile))
	return p
}

func (p *drillPart) title(r *Run) string {
	return fmt.Sprintf("drill %s, lab %s", p.Result.Scenario, r.Lab)
}

// markers are the drill's faults, its history's first anomaly, and the
// load balancer's first changes to where writes go (a writer marked down,
// taken back, none left).
func (p *drillPart) markers(r *Run) []chart.Marker {
	out := markers(r.Run)
	if a := p.Result.FirstAnomaly; a != nil {
		out = append(out, chart.Marker{X: a.At.Sub(r.Started).Seconds(), Label: "first " + a.Type})
	}
	if b := p.Result.Balancer; b != nil {
		n := 0
		for _, e := range b.Events {
			if e.Proxy != "writes" || n == maxBalancerMarks {
				continue
			}
			n++
			label := map[string]string{proxy.Down: "lb: " + e.Server + " down", proxy.Up: "lb: " + e.Server + " back"}[e.What]
			if label == "" {
				label = "lb: no writer"
			}
			out = append(out, chart.Marker{X: e.At.Sub(r.Started).Seconds(), Label: label})
		}
	}
	return out
}

// maxBalancerMarks is how many of the load balancer's changes a drill's
// chart marks (a chaos drill's hours would hide the faults).
const maxBalancerMarks = 6

func (p *drillPart) charts(r *Run, label string) []chart.Chart {
	if len(p.Timeline) == 0 {
		return nil
	}
	c := chart.Chart{ID: "dr-" + r.ID, Title: fmt.Sprintf("Operations per second, %s (the fault marked)", label),
		X: "seconds", Y: "operations/s", Markers: r.Markers}
	for _, k := range timelineSeries {
		c.Series = append(c.Series, chart.Series{Name: k, Points: p.Timeline[k]})
	}
	return []chart.Chart{c}
}

func (p *drillPart) finding(r *Run, _ *Run) string {
	d := p.Result
	verdict := "passed"
	if !d.Passed {
		verdict = "failed (" + strings.Join(d.Problems, "; ") + ")"
	}
	gap := fmt.Sprintf("writes stopped for %.2f s (the client-visible gap)", d.Gap.Seconds)
	if d.Gap.Open {
		gap = fmt.Sprintf("writes never resumed (%.2f s to the end of the traffic)", d.Gap.Seconds)
	}
	if from, later := d.LaterPause(); later && d.Gap.Open {
		gap = fmt.Sprintf("writes were back %.2f s after the fault, then stopped %.2f s after it and never resumed (%.2f s to the end of the traffic)", *d.WritesBackS, from, d.Gap.Seconds)
	} else if later {
		gap = fmt.Sprintf("writes were back %.2f s after the fault, then stopped for %.2f s from %.2f s after it (the longest client-visible gap)", *d.WritesBackS, d.Gap.Seconds, from)
	}
	s := fmt.Sprintf("Drill %s on cluster %s (lab %s, profile %s): %s. Under %d writes/s, %s; %d of %d acknowledged writes lost",
		d.Scenario, d.Cluster, r.Lab, d.Profile, verdict, d.WritesPerS, gap, d.LostCount, d.WritesAcked)
	if d.ChecksumsAgree {
		s += "; every node's tables agree"
	}
	if d.SyncedS != nil {
		s += fmt.Sprintf("; the cluster was whole again %.1f s after the fault", *d.SyncedS)
	}
	if c := d.Consistency; c != nil {
		s += "; its transactions' history: " + c.Verdict()
	}
	if t := d.TPCC; t != nil {
		s += fmt.Sprintf("; TPC-C beside it: %.0f tpmC over the drill", t.TpmC)
		if c := t.Check; c != nil && c.Passed {
			s += ", its consistency conditions hold after it"
		} else if c != nil {
			s += ", a consistency condition does not hold after it: " + strings.Join(c.Failures, "; ")
		}
	}
	return s + "."
}

// timelineSeries are a drill's timeline's series, as charted.
var timelineSeries = []string{"writes acknowledged", "writes failed", "reads", "reads failed"}

// readTimeline reads a drill's timeline.csv into its four series.
func readTimeline(rows [][]string) map[string][][2]float64 {
	out := map[string][][2]float64{}
	for _, row := range rows {
		if len(row) < 5 {
			continue
		}
		t, _ := strconv.ParseFloat(row[0], 64)
		for j, n := range timelineSeries {
			v, _ := strconv.ParseFloat(row[j+1], 64)
			out[n] = append(out[n], [2]float64{t, v})
		}
	}
	return out
}

// drillPage is its section of the page (the drill's figures and verdict).
const drillPage = `{{with .Part.Result}}
<table>
<tr><th class="l">drill</th><td class="l">{{.Scenario}} on cluster {{.Cluster}} (profile {{.Profile}}), targets {{range .Targets}}{{.}} {{end}}</td></tr>
<tr><th class="l">writes</th><td class="l">{{.Writes}} issued ({{.WritesPerS}}/s), {{.WritesAcked}} acknowledged, {{.WritesFailed}} failed; reads {{.Reads}}, {{.ReadsFailed}} failed</td></tr>
<tr><th class="l">client-visible gap</th><td class="l">{{f2 .Gap.Seconds}} s</td></tr>
<tr><th class="l">writes back / re-formed / whole again</th><td class="l">{{opt .WritesBackS}} / {{opt .ReformedS}} / {{opt .SyncedS}} after the fault</td></tr>
{{range .Codes}}<tr><th class="l">error {{.Code}}</th><td class="l">{{.Writes}} writes, {{.Reads}} reads, {{f2 .First}} s to {{f2 .Last}} s</td></tr>
{{end}}<tr><th class="l">acknowledged writes missing</th><td class="l">{{.LostCount}}</td></tr>
<tr><th class="l">table checksums agree</th><td class="l">{{.ChecksumsAgree}}</td></tr>
<tr><th class="l">verdict</th><td class="l">{{if .Passed}}passed{{else}}<span class="warn">failed: {{range .Problems}}{{.}}; {{end}}</span>{{end}}</td></tr>
</table>
{{end}}`
