package study

import (
	"bytes"
	"fmt"
	"html/template"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hadrill/hadrill/internal/chart"
	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/stats"
)

// HTML renders a study run as one self-contained page: the finding first,
// the expectations, a chart per main figure (each variant's median, its
// interval and range, the published value beside it), then every figure
// with its spread, change against the baseline and published value.
//
// ctx is what the run's steps recorded (Gather): the differences between
// the variants, their hosts, sysbench's latency histograms.
func HTML(run *results.Run, res *Result, ctx Context) ([]byte, error) {
	titles := map[string]string{}
	for _, v := range res.Study.Variants {
		titles[v.Name] = v.Title()
	}
	type row struct {
		Cell
		Title, Delta, Published, Interval string
	}
	type figure struct {
		Title, Note string
		SVG         template.HTML
	}
	var rows []row
	for _, c := range res.Cells {
		r := row{Cell: c, Title: titles[c.Variant], Delta: "baseline"}
		if c.N > 1 {
			r.Interval = fmt.Sprintf("%s–%s, %s", number(c.Lo), number(c.Hi), c.IntervalLabel())
		}
		if c.Delta != nil {
			r.Delta = change(*c.Delta, titles[res.Study.Baseline()])
		}
		if c.Published != nil {
			r.Published = fmt.Sprintf("%s (%.2f×)", published(*c.Published, c.Metric), c.Ratio)
			if c.Published.Inferred {
				r.Published = published(*c.Published, c.Metric) + ", not printed"
			}
		}
		rows = append(rows, r)
	}
	var figures []figure
	for _, c := range Charts(res, ctx) {
		svg, err := c.SVG()
		if err != nil {
			return nil, err
		}
		figures = append(figures, figure{Title: c.Title, Note: c.Note, SVG: template.HTML(svg)}) // drawn here, not user input
	}
	type setup struct{ Name, Title, Preset, Patch, Lab, Target, Price, NotEmulated string }
	var setups []setup
	for _, v := range res.Study.Variants {
		if !slices.Contains(res.Variants, v.Name) {
			continue
		}
		patch := ""
		if len(v.Patch) > 0 {
			b, _ := yaml.Marshal(v.Patch)
			patch = string(b)
		}
		price := ""
		if p, ok := v.HourlyPrice(); ok {
			price = fmt.Sprintf("$%.2f/h", p)
		}
		preset, lab := v.Preset, res.Labs[v.Name]
		if v.Endpoint != "" {
			preset, lab = v.Endpoint, "none: a server outside the lab, load from this computer"
		}
		var not []string
		for _, e := range v.NotEmulated {
			not = append(not, e.Path+": "+e.Value)
		}
		setups = append(setups, setup{v.Name, v.Title(), preset, patch, lab, v.Target, price, strings.Join(not, "\n")})
	}
	var ids []string
	for _, x := range res.Samples {
		if len(ids) == 0 || ids[len(ids)-1] != x.RunID {
			ids = append(ids, x.RunID)
		}
	}
	var b bytes.Buffer
	err := page.Execute(&b, map[string]any{"Run": run, "Res": res, "Rows": rows, "Charts": figures, "RunIDs": ids, "Font": chart.FontFace(),
		"Settings": ctx.Settings, "Versions": ctx.Versions, "Deviations": res.AllDeviations(), "Level": 100 * stats.Level, "Setups": setups, "Hosts": ctx.Hosts, "Computer": ctx.Computer, "Titles": titles,
		"Groups": groupsSaid(res.Groups, pairsOf(res.Study), func(v string) string { return variant(res.Study, v).Title() })})
	return b.Bytes(), err
}

// Charts are a study run's charts: per step a chart of each main figure
// (bars per variant, or one line per variant across the client counts the
// step measured), then sysbench's latency distributions. IDs are unique
// (PNG file names).
func Charts(res *Result, ctx Context) []chart.Chart {
	titles := map[string]string{}
	for _, v := range res.Study.Variants {
		titles[v.Name] = v.Title()
	}
	var charts []chart.Chart
	for _, st := range res.Study.Steps {
		drawn := map[string]bool{}
		for _, m := range metricsIn(res.Cells, st.Name) {
			if !primary(m) {
				continue
			}
			// a figure at several client counts: one chart across them, as
			// the documents draw it
			if base, _, per := strings.Cut(m, "@"); per {
				if series := seriesOf(res.Cells, st.Name, base); len(series) > 1 {
					if !drawn[base] {
						drawn[base] = true
						charts = append(charts, lines(series, res.Variants, titles, base, across(st, base)))
					}
					continue
				}
			}
			var cs []Cell
			for _, c := range res.Cells {
				if c.Step == st.Name && c.Metric == m {
					cs = append(cs, c)
				}
			}
			charts = append(charts, bars(cs, titles, m, describe(st, m)))
		}
	}
	for _, h := range ctx.Histograms {
		if c := cdf(h, res.Variants, titles, fmt.Sprintf("Latency distribution, step %s with %d clients (every round's transactions)", h.Step, h.Threads)); len(c.Series) > 0 {
			charts = append(charts, c)
		}
	}
	for i := range charts {
		charts[i].ID = fmt.Sprintf("%02d", i+1)
	}
	return charts
}

// bars draws one horizontal bar per variant: the median, the interval as a
// band, the range as a line, the published value as a diamond; the axis is
// logarithmic when the figures span more than 20× (the chart's rule).
func bars(cells []Cell, titles map[string]string, metric, title string) chart.Chart {
	c := chart.Chart{Title: title, X: unitOf(metric), Note: "bar: median of the rounds; dark band: interval of the median; line: range; ◇ published"}
	for _, cell := range cells {
		b := chart.Bar{Label: titles[cell.Variant], Median: cell.Median, Lo: cell.Lo, Hi: cell.Hi, Min: cell.Min, Max: cell.Max, Text: figure(metric, cell.Median)}
		if p := cell.printed(); p != nil {
			v := p.Value
			b.Published = &v
			b.Text += " (published " + published(*p, metric) + ")"
		}
		c.Bars = append(c.Bars, b)
	}
	return c
}

// unitOf names a figure's unit on an axis: "tps@32" → transactions/s,
// "avg_ms" → ms, "visible_s" → seconds; else the figure's own name.
func unitOf(metric string) string {
	base, _, _ := strings.Cut(metric, "@")
	switch {
	case base == "tps":
		return "transactions/s"
	case base == PerDollar:
		return "TPS per $/h"
	case strings.HasSuffix(base, "_ms"):
		return "ms (" + base + ")"
	case strings.HasSuffix(base, "_s"):
		return "seconds (" + base + ")"
	}
	return base
}

// seriesOf is a step's figure at each count it was measured at (the n of
// "tps@n"), in rising order, each with its cells.
func seriesOf(cells []Cell, step, base string) map[int][]Cell {
	out := map[int][]Cell{}
	for _, c := range cells {
		b, n, ok := strings.Cut(c.Metric, "@")
		if c.Step != step || !ok || b != base {
			continue
		}
		k, err := strconv.Atoi(n)
		if err == nil {
			out[k] = append(out[k], c)
		}
	}
	return out
}

// across titles a chart of a figure over client counts.
func across(st Step, base string) string {
	d := strings.NewReplacer("with N clients", "by clients", "Seconds for N mariadb-slap clients", "Seconds for mariadb-slap's clients").Replace(describe(st, base+"@N"))
	if strings.Contains(d, " N ") {
		d += ", by N"
	}
	return d
}

// lines draws a figure against the client count (or row count), a line
// per variant through its medians with each interval of the median as an
// error bar and the published figures as diamonds (logarithmic count axis,
// labelled at the counts measured).
func lines(series map[int][]Cell, variants []string, titles map[string]string, base, title string) chart.Chart {
	var counts []int
	for n := range series {
		counts = append(counts, n)
	}
	slices.Sort(counts)
	c := chart.Chart{Title: title, X: "count", Y: unitOf(base), LogX: true, PointTicks: true,
		Note: "a point: the median of the rounds; bar: the interval of the median; ◇ published"}
	for _, v := range variants {
		s := chart.Series{Name: titles[v]}
		for _, n := range counts {
			for _, cell := range series[n] {
				if cell.Variant != v {
					continue
				}
				s.Points = append(s.Points, [2]float64{float64(n), cell.Median})
				s.Intervals = append(s.Intervals, [2]float64{cell.Lo, cell.Hi})
				if p := cell.printed(); p != nil {
					s.Published = append(s.Published, [2]float64{float64(n), p.Value})
				}
			}
		}
		if len(s.Points) > 0 {
			c.Series = append(c.Series, s)
		}
	}
	return c
}

// cdf draws each variant's latency distribution as the share of
// transactions at or under a latency (a logarithmic latency axis): curves
// to the left are faster, a long flat top is the tail.
func cdf(h Histogram, variants []string, titles map[string]string, title string) chart.Chart {
	c := chart.Chart{Title: title, X: "ms (logarithmic axis)", Y: "share of transactions", LogX: true, Dense: true,
		Note: "the share of transactions done within a latency (sysbench's histogram): curves to the left are faster, a long flat top is the tail"}
	for _, v := range variants {
		bs := h.Variants[v]
		var total int64
		for _, b := range bs {
			total += b.Count
		}
		if total == 0 {
			continue
		}
		s := chart.Series{Name: fmt.Sprintf("%s (%d transactions)", titles[v], total)}
		var cum int64
		for _, b := range bs {
			cum += b.Count
			if b.Value > 0 {
				s.Points = append(s.Points, [2]float64{b.Value, float64(cum) / float64(total)})
			}
		}
		c.Series = append(c.Series, s)
	}
	return c
}

var page = template.Must(template.New("study").Funcs(template.FuncMap{"mark": func(v string) string { return mark[v] }}).Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>hadrill study {{.Res.Study.Name}}</title>
<style>{{.Font}}
body{font-family:"Liberation Sans",Arial,Helvetica,sans-serif;max-width:70em;margin:2em auto;padding:0 1em;color:#222}table{border-collapse:collapse}
.scroll{overflow-x:auto;max-width:100%}figure{margin:1.5em 0}figure svg{width:100%;height:auto;display:block}figcaption{font-weight:bold;margin-bottom:.3em}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}td:first-child,td:nth-child(2),td:nth-child(3){text-align:left}
.finding{font-size:1.05em;line-height:1.5;white-space:pre-line;background:#f4f7fb;padding:1em;border-left:4px solid #2b5d8a}
.met{color:#1a7f37}.missed{color:#b42318}</style></head><body>
<h1>{{.Res.Study.Title}}</h1>
<p class="finding" id="finding">{{.Res.Finding}}</p>
<p>Study <code>{{.Res.Study.Name}}</code>, run {{.Run.ID}}, {{.Res.Scale}} scale: {{.Res.Protocol.Runs}} round(s), variants interleaved (each round starts one later){{with .Groups}}; {{.}}{{end}}{{if .Res.Interrupted}}, <b>interrupted</b>{{end}}.
Source: {{.Res.Study.Source}}.</p>
{{with .Res.Study.About}}<p>{{.}}</p>{{end}}
{{with .Res.Failed}}<p class="missed">Stopped early: a step failed twice: <code>{{.}}</code></p>{{end}}
{{with .Res.Retried}}<p>Steps that failed once and were run again (a busy machine can make a health check flap): {{range .}}<code>{{.}}</code> {{end}}</p>{{end}}
{{with .Deviations}}<h2>Deviations from the document's protocol</h2><ul>{{range .}}<li><b>{{.What}}</b>: the document {{.Document}}; here {{.Here}}{{with .Scale}} ({{.}} scale){{end}}{{with .Why}} — {{.}}{{end}}{{if .Recorded}} <i>(recorded by the run)</i>{{end}}</li>{{end}}</ul>{{end}}
{{if .Res.Checks}}<h2>Does it reproduce?</h2>
<p>Each claim's figure (a mean over the rounds, or the ratio of two variants' means; a share of drills by the exact binomial interval of how many rounds went that way, a rate an hour by Garwood's exact interval over every round's hours) with its {{printf "%.0f" .Level}} % interval: <i>reproduced</i> when the whole interval is within the claim's bounds, <i>not reproduced</i> when it is wholly outside, <i>inconclusive</i> when it crosses a bound (noise cannot tell), <i>not measured</i> when a step did not run, <i>not checkable</i> when this computer cannot build the set-up that decides it (measured and shown; it says why and counts for nothing).</p>
{{with .Res.Design}}<p>The rounds followed a {{.Says}}. Each claim's figure is the mean over the rounds that judged it (a ratio: of each round's ratio of the two variants, paired in the round, on a log scale): {{.Judged}}. A claim still inconclusive would need the rounds its pilot asked for.</p>{{end}}
<div class="scroll"><table><tr><th>verdict</th><th>claim (the document's words)</th><th>where</th><th>figure</th><th>published</th><th>ours</th><th>bounds</th></tr>
{{range .Res.Checks}}<tr class="{{if eq .Verdict "reproduced"}}met{{else}}missed{{end}}"><td>{{mark .Verdict}} {{.Outcome}}</td><td style="text-align:left">“{{.Claim}}”{{with .NotCheckable}}<br><small>not checkable here: {{.}}</small>{{end}}{{with .Differs}}<br><small>differs here: {{.}}</small>{{end}}{{range .Measured}}<br><small>measured: {{.}}</small>{{end}}</td><td style="text-align:left">{{.Source}}</td><td>{{index $.Titles .Variant}} {{.Step}} {{.Metric}}{{with .Than}} ÷ {{index $.Titles .}}{{end}}</td><td>{{or .Published "—"}}</td><td>{{if eq .Verdict "not_measured"}}not measured{{else if eq .Verdict "not_run"}}not run (--variants){{else if eq .Verdict "other_scale"}}{{.Scale}} scale only{{else}}{{printf "%.3g" .Ours.Value}}{{if .Ours.Unbounded}} (interval unbounded){{else if .Ours.Known}} ({{printf "%.3g" .Ours.Lo}}–{{printf "%.3g" .Ours.Hi}}){{else}} (one round){{end}}{{end}}</td><td>{{.Bounds}}{{if .Inferred}} (read from the words: {{.Why}}){{else}}{{with .Why}} — {{.}}{{end}}{{end}}</td></tr>{{end}}</table></div>{{end}}
{{range $i, $c := .Charts}}<figure id="figure-{{$i}}"><figcaption>{{.Title}}</figcaption>{{.SVG}}{{with .Note}}<small>{{.}}</small>{{end}}</figure>{{end}}
<h2>Every figure</h2>
<div class="scroll"><table><tr><th>step</th><th>metric</th><th>variant</th><th>rounds</th><th>median</th><th>min</th><th>max</th><th>interval of the median (its confidence)</th><th>against the baseline</th><th>published</th></tr>
{{range .Rows}}<tr><td>{{.Step}}</td><td>{{.Metric}}</td><td>{{.Title}}</td><td>{{.N}}</td><td>{{printf "%.3g" .Median}}</td><td>{{printf "%.3g" .Min}}</td><td>{{printf "%.3g" .Max}}</td><td>{{.Interval}}</td><td>{{.Delta}}</td><td>{{.Published}}</td></tr>
{{end}}</table></div>
<h2>Set-ups</h2>
{{with .Res.Inventory}}<p>The labs ran on the machines of {{.}}, one at a time; what a set-up asks of its machines, disks and NICs is emulated on this computer only, so there the hosts' own stood in (last column).</p>{{end}}
<div class="scroll"><table><tr><th>variant</th><th>preset or endpoint</th><th>patch (merged into the preset)</th><th>load sent to</th><th>price</th><th>lab</th>{{if .Res.Inventory}}<th>not emulated on the hosts</th>{{end}}</tr>
{{range .Setups}}<tr><td>{{.Title}} ({{.Name}})</td><td>{{.Preset}}</td><td style="text-align:left"><pre>{{.Patch}}</pre></td><td>{{or .Target "lb (each step's own target)"}}</td><td>{{.Price}}</td><td>{{.Lab}}</td>{{if $.Res.Inventory}}<td style="text-align:left"><pre>{{.NotEmulated}}</pre></td>{{end}}</tr>
{{end}}</table></div>
<h2 id="hosts">Hosts, as measured</h2>
<p>Every host of every variant's lab during the variant's first run (CPU in cores, disks and NICs with their caps and use){{with .Computer}}; all ran on one computer: {{index . "cpus"}} CPUs, {{index . "memory"}}, kernel {{index . "kernel"}}{{end}}{{with .Res.Speed}}{{with .Said}}; {{.}}{{end}}{{end}}.</p>
{{if .Hosts}}<div class="scroll"><table><tr><th>variant</th><th>host</th><th>machine</th><th>CPU used</th><th>memory</th><th>disks</th><th>NICs</th></tr>
{{range .Hosts}}<tr><td>{{index $.Titles .Variant}}</td><td>{{.Host}}</td><td>{{.Machine}}</td><td>{{.CPU}}</td><td>{{.Memory}}</td><td style="text-align:left">{{.Disks}}</td><td style="text-align:left">{{.NICs}}</td></tr>
{{end}}</table></div>{{else}}<p>No host was measured (the runs are gone from the store).</p>{{end}}
<h2>What differs between the variants</h2>
{{if .Settings}}<div class="scroll"><table><tr><th>setting (first database node's my.cnf)</th>{{range $.Res.Variants}}<th>{{.}}</th>{{end}}</tr>
{{range .Settings}}{{$d := .}}<tr><td>{{.Setting}}</td>{{range $.Res.Variants}}<td>{{index $d.Values .}}</td>{{end}}</tr>
{{end}}</table></div>{{else}}<p>The variants' servers have the same settings (lab names and addresses aside).</p>{{end}}
{{if .Versions}}<div class="scroll"><table><tr><th>tool version</th>{{range $.Res.Variants}}<th>{{.}}</th>{{end}}</tr>
{{range .Versions}}{{$d := .}}<tr><td>{{.Setting}}</td>{{range $.Res.Variants}}<td>{{index $d.Values .}}</td>{{end}}</tr>
{{end}}</table></div>{{else}}<p>Every variant ran the same versions of the server and tools.</p>{{end}}
<h2>Protocol</h2>
<p>Labs{{with .Res.Inventory}} (on the machines of {{.}}, each up for its variant's turns){{end}}: {{range $v, $l := .Res.Labs}}{{$v}} → {{$l}} {{end}}. Every step of every round is a run of its own in the run store (hosts, configurations, versions recorded there): {{range .RunIDs}}{{.}} {{end}}</p>
</body></html>
`))
