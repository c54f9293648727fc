package report

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hadrill/hadrill/internal/stats"
	"github.com/hadrill/hadrill/internal/workload/sysbench"
)

// Title is how the report names a run: what ran, on which lab (the run's
// id is shown beside it, never instead of it).
func (r Run) Title() string {
	p := r.param("workload")
	switch {
	case r.Drill != nil:
		return fmt.Sprintf("drill %s, lab %s", r.Drill.Scenario, r.Lab)
	case p != "":
		return fmt.Sprintf("%s %s, lab %s", r.Kind, p, r.Lab)
	}
	return fmt.Sprintf("%s, lab %s", r.Kind, r.Lab)
}

func (r Run) param(key string) string {
	var p map[string]any
	_ = json.Unmarshal([]byte(r.Params), &p)
	if v, ok := p[key]; ok && v != nil {
		return fmt.Sprint(v)
	}
	return ""
}

// tpsFigures are a sweep's TPS per thread count: the steady seconds' mean
// with its 95 % interval (stats.FigureOf over the point's runs).
func tpsFigures(pts []sysbench.Point) map[int]stats.Figure {
	out := map[int]stats.Figure{}
	for _, p := range pts {
		var series [][]float64
		for _, run := range p.Runs {
			var s []float64
			for _, iv := range run.Intervals {
				s = append(s, iv.TPS)
			}
			series = append(series, s)
		}
		if len(series) == 0 { // a stored point without its seconds
			out[p.Threads] = stats.Figure{Mean: p.TPS, Median: p.TPS, Level: stats.Confidence, Method: "no per-second series kept", Settled: true}
			continue
		}
		out[p.Threads] = stats.FigureOf(series, stats.Confidence)
	}
	return out
}

// Finding is what the report says first: per run what was found, its
// headline figures with their intervals and its verdicts, and runs
// compared against the first sweep. Pure: computed from the runs alone.
func Finding(runs []Run) []string {
	var out []string
	var base, tpccBase *Run
	for i := range runs {
		r := &runs[i]
		switch {
		case r.TPCC != nil:
			out = append(out, tpccFinding(r, tpccBase))
			if tpccBase == nil {
				tpccBase = r
			}
		case r.Drill != nil:
			out = append(out, drillFinding(r))
		case len(r.Points) > 0:
			out = append(out, sweepFinding(r, base))
			if base == nil {
				base = r
			}
		case r.Check != nil:
			out = append(out, consistencyFinding(r))
		case len(r.Commits) > 0:
			var parts []string
			for _, c := range r.Commits {
				parts = append(parts, fmt.Sprintf("%s p50 %.2f ms, p99 %.2f ms (%d commits%s)", c.Target, c.P50, c.P99, c.Count, errorsNote(c.Errors)))
			}
			out = append(out, fmt.Sprintf("Commit latency, lab %s: %s.", r.Lab, strings.Join(parts, "; ")))
		default:
			out = append(out, fmt.Sprintf("Lab %s, %s (run %s): its figures are in its table below.", r.Lab, r.Kind, r.ID))
		}
		if r.Interrupted {
			out[len(out)-1] += " Interrupted: the results are partial."
		}
		if n := len(r.Warnings); n > 0 {
			out[len(out)-1] += fmt.Sprintf(" %d warning%s: %s.", n, plural(n), strings.Join(r.Warnings, "; "))
		}
	}
	return out
}

func consistencyFinding(r *Run) string {
	c := r.Check
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
	if c.Set != nil {
		s += "; elements: " + c.Set.Text()
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

func drillFinding(r *Run) string {
	d := r.Drill
	verdict := "passed"
	if !d.Passed {
		verdict = "failed (" + strings.Join(d.Problems, "; ") + ")"
	}
	gap := fmt.Sprintf("writes stopped for %.2f s (the client-visible gap)", d.Gap.Seconds)
	if d.Gap.Open {
		gap = fmt.Sprintf("writes never resumed (%.2f s to the end of the traffic)", d.Gap.Seconds)
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

func sweepFinding(r, base *Run) string {
	figs := tpsFigures(r.Points)
	peak := r.Points[0]
	for _, p := range r.Points {
		if figs[p.Threads].Mean > figs[peak.Threads].Mean {
			peak = p
		}
	}
	f := figs[peak.Threads]
	s := fmt.Sprintf("Lab %s, %s %s (run %s): %s at %s", r.Lab, r.Kind, r.param("workload"), r.ID, tpsText(f), threads(peak.Threads))
	s += fmt.Sprintf(", p99 %.1f ms there", peak.P99)
	if len(r.Points) > 1 {
		s += fmt.Sprintf(" (the highest of %d thread counts, %d to %d)", len(r.Points), r.Points[0].Threads, r.Points[len(r.Points)-1].Threads)
	}
	if base == nil {
		return s + "."
	}
	bf := tpsFigures(base.Points)
	var parts []string
	for _, p := range r.Points {
		b, ok := bf[p.Threads]
		if !ok {
			continue
		}
		pct, noise, known := figs[p.Threads].Versus(b)
		judged := map[bool]string{true: "within noise", false: "beyond noise"}[noise]
		if !known {
			judged = "noise unknown"
		}
		parts = append(parts, fmt.Sprintf("%+.0f %% at %s (%s)", pct, threads(p.Threads), judged))
	}
	if len(parts) > 0 {
		s += fmt.Sprintf("; against run %s (%s): %s", base.ID, base.Title(), strings.Join(parts, ", "))
	}
	return s + "."
}

// tpsText says a TPS figure with its interval when it has one.
func tpsText(f stats.Figure) string {
	if !f.Known {
		return fmt.Sprintf("%.0f TPS (%s)", f.Mean, f.Method)
	}
	return fmt.Sprintf("%.0f TPS (95 %% interval %.0f–%.0f, %s)", f.Mean, f.Lo, f.Hi, f.Method)
}

func errorsNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", %d failed", n)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func threads(n int) string {
	if n == 1 {
		return "1 thread"
	}
	return fmt.Sprintf("%d threads", n)
}
