package report

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hadrill/hadrill/internal/chart"
	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/stats"
	"github.com/hadrill/hadrill/internal/workload"
	"github.com/hadrill/hadrill/internal/workload/tpcc"
)

// tpccPart is a TPC-C run: tpmC at each client count with its interval,
// each transaction type's latencies, the consistency check, and its
// change against the report's first TPC-C run.
type tpccPart struct {
	plain
	Outcome *workload.TPCCOutcome
	Versus  *tpcc.Compared // nil for the first TPC-C run
}

func readTPCC(_ string, r *results.Run) part {
	p := &tpccPart{Outcome: &workload.TPCCOutcome{}}
	_ = json.Unmarshal(r.Results, p.Outcome)
	return p
}

// against sets the run against the first TPC-C run.
func (p *tpccPart) against(first part) {
	if f, ok := first.(*tpccPart); ok {
		c := tpcc.Compare([][]tpcc.Point{f.Outcome.Results, p.Outcome.Results})[1]
		p.Versus = &c
	}
}

// Cost is what a transaction cost at a client count (nil: not measured).
func (p *tpccPart) Cost(clients int) *workload.Cost {
	if c, ok := p.Outcome.Costs[clients]; ok {
		return &c
	}
	return nil
}

// Change is the run's change against the first at a client count.
func (p *tpccPart) Change(clients int) string {
	if p.Versus == nil {
		return "-"
	}
	for _, pt := range p.Versus.Points {
		if pt.Threads == clients {
			return stats.ChangeText(pt.DeltaPct, pt.WithinNoise)
		}
	}
	return "-"
}

// tpccFinding says a TPC-C run's answer: its best tpmC with the interval,
// New-Order's p99 there, its errors by code, the consistency check, and
// the change against the first TPC-C run.
func (p *tpccPart) finding(r *Run, base *Run) string {
	o := p.Outcome
	if len(o.Results) == 0 {
		return fmt.Sprintf("TPC-C, lab %s (run %s): no run finished.", r.Lab, r.ID)
	}
	best := o.Results[0]
	for _, p := range o.Results {
		if p.TpmC.Median > best.TpmC.Median {
			best = p
		}
	}
	s := fmt.Sprintf("TPC-C, lab %s, %d warehouse(s) through %s (run %s): %s at %s, New-Order p99 %.1f ms",
		r.Lab, o.Warehouses, o.Target, r.ID, tpmcText(best.TpmC), clients(best.Threads), best.Txn(tpcc.NewOrder).P99)
	if len(o.Results) > 1 {
		s += fmt.Sprintf(" (the highest of %d client counts)", len(o.Results))
	}
	var errs int64
	codes := map[string]int{}
	for _, p := range o.Results {
		errs += p.Errors
		for c, n := range p.ErrorsByCode() {
			codes[c] += n
		}
	}
	if errs > 0 {
		s += fmt.Sprintf("; %d transactions failed", errs)
		if len(codes) > 0 {
			s += " (by server error: " + tpcc.CodesText(codes) + ")"
		}
	}
	switch c := o.Check; {
	case c == nil:
		s += "; consistency not checked"
	case c.Passed:
		s += "; TPC-C's consistency conditions hold"
	default:
		s += "; a TPC-C consistency condition does not hold: " + strings.Join(c.Failures, "; ")
	}
	if v := p.Versus; v != nil && base != nil {
		var parts []string
		for _, p := range v.Points {
			if p.DeltaPct == nil {
				continue
			}
			judged := "noise unknown"
			if p.WithinNoise != nil {
				judged = map[bool]string{true: "within noise", false: "beyond noise"}[*p.WithinNoise]
			}
			parts = append(parts, fmt.Sprintf("%+.0f %% at %s (%s)", *p.DeltaPct, clients(p.Threads), judged))
		}
		if len(parts) > 0 {
			s += fmt.Sprintf("; against run %s (%s): %s", base.ID, base.Title(), strings.Join(parts, ", "))
		}
	}
	return s + "."
}

// tpmcText says a tpmC median with its interval when it has one.
func tpmcText(sp stats.Spread) string {
	if sp.N < 2 {
		return fmt.Sprintf("%.0f tpmC (one run)", sp.Median)
	}
	return fmt.Sprintf("%.0f tpmC (median of %d runs, %.0f–%.0f, its %s)", sp.Median, sp.N, sp.Lo, sp.Hi, sp.IntervalLabel())
}

func clients(n int) string {
	if n == 1 {
		return "1 client"
	}
	return fmt.Sprintf("%d clients", n)
}

// tpmcCharts draws every TPC-C run's tpmC against its client counts (bars:
// the median's interval where a count has several runs).
func tpmcCharts(runs []Run, label map[string]string) []chart.Chart {
	c := chart.Chart{ID: "tpmc", Title: "TPC-C: New-Order transactions a minute vs clients (median of the runs; bars: its interval)", X: "clients", Y: "tpmC", LogX: true, PointTicks: true}
	for _, r := range runs {
		p, ok := r.Part.(*tpccPart)
		if !ok || len(p.Outcome.Results) == 0 {
			continue
		}
		s := chart.Series{Name: label[r.ID]}
		known := true
		for _, pt := range p.Outcome.Results {
			s.Points = append(s.Points, [2]float64{float64(pt.Threads), pt.TpmC.Median})
			s.Intervals = append(s.Intervals, [2]float64{pt.TpmC.Lo, pt.TpmC.Hi})
			known = known && pt.TpmC.N > 1
		}
		if !known {
			s.Intervals = nil
		}
		c.Series = append(c.Series, s)
	}
	if len(c.Series) == 0 {
		return nil
	}
	return []chart.Chart{c}
}

// tpccPage is its section of the page (tpmC at each client count, each transaction type's latencies, the consistency check).
const tpccPage = `{{$p := .Part}}{{with .Part.Outcome}}
<table>
<tr><th>clients</th><th>tpmC</th><th>interval</th><th>runs</th><th>tpm, every type</th><th>errors</th><th>errors by code</th><th>CPU ms/tx</th><th>IOs/tx</th>{{if $p.Versus}}<th>vs the first TPC-C run</th>{{end}}</tr>
{{range .Results}}<tr><td>{{.Threads}}</td><td>{{f1 .TpmC.Median}}{{if .Partial}} <span class="warn">(partial)</span>{{end}}</td><td>{{if gt .TpmC.N 1}}{{f1 .TpmC.Lo}}–{{f1 .TpmC.Hi}} ({{.TpmC.IntervalLabel}}){{else}}-{{end}}</td><td>{{.TpmC.N}}</td><td>{{f1 .TpmTotal}}</td><td>{{.Errors}}</td><td class="l">{{codes .ErrorsByCode}}</td>{{with $p.Cost .Threads}}<td>{{f2 .CPUms}}</td><td>{{if .Disks}}{{f2 .IOs}}{{else}}-{{end}}</td>{{else}}<td>-</td><td>-</td>{{end}}{{if $p.Versus}}<td>{{$p.Change .Threads}}</td>{{end}}</tr>
{{end}}</table>
<table>
<tr><th>clients</th><th class="l">transaction (the median run)</th><th>count</th><th>tpm</th><th>p50 ms</th><th>p95 ms</th><th>p99 ms</th><th>max ms</th><th>errors</th></tr>
{{range $p := .Results}}{{range .Txns}}<tr><td>{{$p.Threads}}</td><td class="l">{{.Name}}</td><td>{{.Count}}</td><td>{{f1 .TPM}}</td><td>{{f1 .P50}}</td><td>{{f1 .P95}}</td><td>{{f1 .P99}}</td><td>{{f1 .MaxMs}}</td><td>{{.Errors}}</td></tr>
{{end}}{{end}}</table>
{{with .Check}}<p>{{if .Passed}}TPC-C's consistency conditions (clause 3.3.2) hold ({{f1 .Seconds}} s to check).{{else}}<span class="warn">A TPC-C consistency condition does not hold: {{range .Failures}}{{.}}; {{end}}</span>{{end}}</p>{{end}}
{{end}}`
