package report

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/chart"
	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/stats"
	"github.com/hadrill/hadrill/internal/workload"
	"github.com/hadrill/hadrill/internal/workload/sysbench"
)

// sweepPart is a sysbench run: its points (one per thread count), each
// count's TPS with its interval, the CPU and IOs a transaction cost, and
// its faults marked on each count's first run.
type sweepPart struct {
	plain
	Points []sysbench.Point
	TPS    map[int]stats.Figure
	Costs  map[int]workload.Cost
	steps  []chart.Marker
}

func readSweep(home string, r *results.Run) part {
	p := &sweepPart{}
	_ = json.Unmarshal(r.Results, &p.Points)
	p.TPS = tpsFigures(p.Points)
	if len(p.Points) > 0 {
		p.Costs = workload.Costs(home, r, p.Points)
	}
	p.steps = stepMarkers(r, results.ReadCSV(home, r.ID, workload.StepsFile))
	return p
}

func (p *sweepPart) markers(*Run) []chart.Marker { return p.steps }
func (p *sweepPart) charts(r *Run, label string) []chart.Chart {
	if c := latencyChart(p.Points, r.ID, label); len(c.Series) > 0 {
		return []chart.Chart{c}
	}
	return nil
}

// sweepOf is a run's sweep (nil: the run is not one, or measured no point).
func sweepOf(r Run) *sweepPart {
	if p, ok := r.Part.(*sweepPart); ok && len(p.Points) > 0 {
		return p
	}
	return nil
}

// sweepCharts are the sweeps' TPS, p95 and p99 against their thread
// counts, one line a run (TPS drawn with its 95 % interval where known).
func sweepCharts(runs []Run, label map[string]string) []chart.Chart {
	tpsc := chart.Chart{ID: "tps", Title: "Throughput vs threads (mean after the warm-up cut; bars: 95 % interval)", X: "threads", Y: "transactions/s", LogX: true, PointTicks: true}
	p95 := chart.Chart{ID: "p95", Title: "p95 latency vs threads", X: "threads", Y: "ms", LogX: true, PointTicks: true}
	p99 := chart.Chart{ID: "p99", Title: "p99 latency vs threads", X: "threads", Y: "ms", LogX: true, PointTicks: true}
	for _, r := range runs {
		sw := sweepOf(r)
		if sw == nil {
			continue
		}
		var a, b, c, iv [][2]float64
		known := true
		for _, p := range sw.Points {
			f, ok := sw.TPS[p.Threads]
			y := p.TPS
			if ok && f.Mean > 0 {
				y = f.Mean
			}
			known = known && ok && f.Known
			iv = append(iv, [2]float64{f.Lo, f.Hi})
			a = append(a, [2]float64{float64(p.Threads), y})
			b = append(b, [2]float64{float64(p.Threads), p.P95})
			c = append(c, [2]float64{float64(p.Threads), p.P99})
		}
		s := chart.Series{Name: label[r.ID], Points: a}
		if known {
			s.Intervals = iv
		}
		tpsc.Series = append(tpsc.Series, s)
		p95.Series = append(p95.Series, chart.Series{Name: label[r.ID], Points: b})
		p99.Series = append(p99.Series, chart.Series{Name: label[r.ID], Points: c})
	}
	if len(tpsc.Series) == 0 {
		return nil
	}
	return []chart.Chart{tpsc, p95, p99}
}

// latencyChart draws a sweep's latency distribution per thread count:
// the share of its transactions done within each latency (sysbench's
// histogram of the first run at the count), up to the slowest.
func latencyChart(pts []sysbench.Point, id, name string) chart.Chart {
	c := chart.Chart{ID: "lat-" + id, Title: "Latency distribution (share of transactions done within x ms), " + name, X: "ms", Y: "share of transactions"}
	for _, p := range pts {
		if len(p.Runs) == 0 || len(p.Runs[0].Histogram) == 0 {
			continue
		}
		var total, done int64
		for _, b := range p.Runs[0].Histogram {
			total += b.Count
		}
		var out [][2]float64
		for _, b := range p.Runs[0].Histogram {
			done += b.Count
			out = append(out, [2]float64{b.Value, float64(done) / float64(total)})
		}
		c.Series = append(c.Series, chart.Series{Name: fmt.Sprintf("%d threads", p.Threads), Points: out})
	}
	return c
}

// finding: the sweep's peak TPS with its interval and p99 there, and its
// change at each thread count against the report's first sweep.
func (p *sweepPart) finding(r *Run, first *Run) string {
	if len(p.Points) == 0 {
		return fmt.Sprintf("Lab %s, %s %s (run %s): no thread count measured.", r.Lab, r.Kind, r.param("workload"), r.ID)
	}
	figs := p.TPS
	peak := p.Points[0]
	for _, pt := range p.Points {
		if figs[pt.Threads].Mean > figs[peak.Threads].Mean {
			peak = pt
		}
	}
	s := fmt.Sprintf("Lab %s, %s %s (run %s): %s at %s", r.Lab, r.Kind, r.param("workload"), r.ID, tpsText(figs[peak.Threads]), threads(peak.Threads))
	s += fmt.Sprintf(", p99 %.1f ms there", peak.P99)
	if len(p.Points) > 1 {
		s += fmt.Sprintf(" (the highest of %d thread counts, %d to %d)", len(p.Points), p.Points[0].Threads, p.Points[len(p.Points)-1].Threads)
	}
	var base *sweepPart
	if first != nil {
		base = sweepOf(*first)
	}
	if base == nil {
		return s + "."
	}
	var parts []string
	for _, pt := range p.Points {
		b, ok := base.TPS[pt.Threads]
		if !ok {
			continue
		}
		pct, noise, known := figs[pt.Threads].Versus(b)
		judged := map[bool]string{true: "within noise", false: "beyond noise"}[noise]
		if !known {
			judged = "noise unknown"
		}
		parts = append(parts, fmt.Sprintf("%+.0f %% at %s (%s)", pct, threads(pt.Threads), judged))
	}
	if len(parts) > 0 {
		s += fmt.Sprintf("; against run %s (%s): %s", first.ID, first.Title(), strings.Join(parts, ", "))
	}
	return s + "."
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

// tpsText says a TPS figure with its interval when it has one.
func tpsText(f stats.Figure) string {
	if !f.Known {
		return fmt.Sprintf("%.0f TPS (%s)", f.Mean, f.Method)
	}
	return fmt.Sprintf("%.0f TPS (95 %% interval %.0f–%.0f, %s)", f.Mean, f.Lo, f.Hi, f.Method)
}

func threads(n int) string {
	if n == 1 {
		return "1 thread"
	}
	return fmt.Sprintf("%d threads", n)
}

func pointAt(pts []sysbench.Point, threads int) *sysbench.Point {
	for i := range pts {
		if pts[i].Threads == threads {
			return &pts[i]
		}
	}
	return nil
}

// stepMarkers places a sysbench run's faults on its time series: each
// thread count's line starts at its first run, so a fault is marked at its
// offset into the first run it fell in (labelled with the thread count),
// its window shaded to its end or the run's.
func stepMarkers(r *results.Run, rows [][]string) []chart.Marker {
	var out []chart.Marker
	for _, m := range markers(r) {
		at := r.Started.Add(time.Duration(m.X * float64(time.Second))).UnixNano()
		for _, row := range rows {
			if len(row) < 4 || row[1] != "1" {
				continue
			}
			start, _ := strconv.ParseInt(row[2], 10, 64)
			end, _ := strconv.ParseInt(row[3], 10, 64)
			if at >= start && at <= end {
				mk := chart.Marker{X: float64(at-start) / 1e9, Label: m.Label + " (" + row[0] + " threads)"}
				if m.To > m.X { // its window, as far as this run goes
					mk.To = min(mk.X+m.To-m.X, float64(end-start)/1e9)
				}
				out = append(out, mk)
			}
		}
	}
	return out
}

// sweepPage is its section of the page (a sweep's points, one row a thread count).
const sweepPage = `{{if .Part.Points}}
<table>
<tr><th>threads</th><th>tps</th><th>qps</th><th>p50 ms</th><th>p95 ms</th><th>p99 ms</th><th>avg ms</th><th>err/s</th><th>runs</th></tr>
{{range .Part.Points}}<tr><td>{{.Threads}}</td><td>{{f1 .TPS}}</td><td>{{f1 .QPS}}</td><td>{{f2 .P50}}</td><td>{{f2 .P95}}</td><td>{{f2 .P99}}</td><td>{{f2 .AvgLat}}</td><td>{{f2 .ErrPerSec}}</td><td>{{len .Runs}}{{if .Partial}} <span class="warn">partial</span>{{end}}</td></tr>
{{end}}
</table>
{{end}}`
