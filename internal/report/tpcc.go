package report

import (
	"fmt"
	"strings"

	"github.com/hadrill/hadrill/internal/chart"
	"github.com/hadrill/hadrill/internal/stats"
	"github.com/hadrill/hadrill/internal/workload/tpcc"
)

// compareTPCC sets each TPC-C run after the first against the first.
func compareTPCC(runs []Run) {
	var first *Run
	for i := range runs {
		r := &runs[i]
		if r.TPCC == nil {
			continue
		}
		if first == nil {
			first = r
			continue
		}
		c := tpcc.Compare([][]tpcc.Point{first.TPCC.Results, r.TPCC.Results})[1]
		r.TPCCVersus = &c
	}
}

// tpccFinding says a TPC-C run's answer: its best tpmC with the interval,
// New-Order's p99 there, its errors by code, the consistency check, and
// the change against the first TPC-C run.
func tpccFinding(r *Run, base *Run) string {
	o := r.TPCC
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
	if v := r.TPCCVersus; v != nil && base != nil {
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

// tpmcChart draws every TPC-C run's tpmC against its client counts (bars:
// the median's interval where a count has several runs).
func tpmcChart(runs []Run, label map[string]string) chart.Chart {
	c := chart.Chart{ID: "tpmc", Title: "TPC-C: New-Order transactions a minute vs clients (median of the runs; bars: its interval)", X: "clients", Y: "tpmC", LogX: true, PointTicks: true}
	for _, r := range runs {
		if r.TPCC == nil || len(r.TPCC.Results) == 0 {
			continue
		}
		s := chart.Series{Name: label[r.ID]}
		known := true
		for _, p := range r.TPCC.Results {
			s.Points = append(s.Points, [2]float64{float64(p.Threads), p.TpmC.Median})
			s.Intervals = append(s.Intervals, [2]float64{p.TpmC.Lo, p.TpmC.Hi})
			known = known && p.TpmC.N > 1
		}
		if !known {
			s.Intervals = nil
		}
		c.Series = append(c.Series, s)
	}
	return c
}

// tpccVersus is a TPC-C run's change against the first at a client count.
func tpccVersus(r Run, clients int) string {
	if r.TPCCVersus == nil {
		return "-"
	}
	for _, p := range r.TPCCVersus.Points {
		if p.Threads == clients {
			return stats.ChangeText(p.DeltaPct, p.WithinNoise)
		}
	}
	return "-"
}
