package study

import (
	"bytes"
	"cmp"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

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
	type chart struct {
		Title string
		SVG   template.HTML
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
	var charts []chart
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
						charts = append(charts, chart{Title: across(st, base), SVG: template.HTML(lines(series, res.Variants, titles, base))})
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
			charts = append(charts, chart{Title: describe(st, m), SVG: template.HTML(bars(cs, titles, m))})
		}
	}
	for _, h := range ctx.Histograms {
		charts = append(charts, chart{Title: fmt.Sprintf("Latency distribution, step %s with %d clients (every round's transactions)", h.Step, h.Threads),
			SVG: template.HTML(cdf(h, res.Variants, titles))})
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
	err := page.Execute(&b, map[string]any{"Run": run, "Res": res, "Rows": rows, "Charts": charts, "RunIDs": ids,
		"Settings": ctx.Settings, "Versions": ctx.Versions, "Deviations": res.Study.DeviationsAt(res.Scale), "Level": 100 * stats.Level, "Setups": setups, "Hosts": ctx.Hosts, "Computer": ctx.Computer, "Titles": titles})
	return b.Bytes(), err
}

// bars draws one horizontal bar per variant: the median, the interval as a
// band, the range as a line, the published value as a diamond; the axis is
// logarithmic when the figures span more than 20×.
func bars(cells []Cell, titles map[string]string, metric string) string {
	const left, width, rowH = 190.0, 480.0, 34.0
	hi, lo := 0.0, math.Inf(1)
	for _, c := range cells {
		hi = max(hi, c.Max)
		lo = min(lo, max(c.Min, 1e-9))
		if c.printed() != nil {
			hi = max(hi, c.printed().Value)
			lo = min(lo, c.printed().Value)
		}
	}
	logScale := hi/lo > 20
	x := func(v float64) float64 {
		if hi <= 0 {
			return left
		}
		if logScale {
			a, b := math.Log10(lo/2), math.Log10(hi*1.1)
			return left + width*(math.Log10(max(v, lo/2))-a)/(b-a)
		}
		return left + width*v/(hi*1.1)
	}
	var s strings.Builder
	h := rowH*float64(len(cells)) + 40
	fmt.Fprintf(&s, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="12">`, left+width+260, h)
	for i, c := range cells {
		y := 10 + rowH*float64(i)
		fmt.Fprintf(&s, `<text x="%.0f" y="%.0f" text-anchor="end">%s</text>`, left-8, y+16, template.HTMLEscapeString(titles[c.Variant]))
		fmt.Fprintf(&s, `<rect x="%.0f" y="%.0f" width="%.1f" height="18" fill="#8fb3d9"/>`, left, y+4, x(c.Median)-left)
		fmt.Fprintf(&s, `<rect x="%.1f" y="%.0f" width="%.1f" height="8" fill="#2b5d8a" opacity="0.6"><title>interval of the median (see the table for its confidence)</title></rect>`, x(c.Lo), y+9, max(x(c.Hi)-x(c.Lo), 1))
		fmt.Fprintf(&s, `<line x1="%.1f" x2="%.1f" y1="%.0f" y2="%.0f" stroke="#222"><title>range</title></line>`, x(c.Min), x(c.Max), y+13, y+13)
		label := figure(metric, c.Median)
		if c.printed() != nil {
			px := x(c.printed().Value)
			fmt.Fprintf(&s, `<path d="M%.1f %.0f l6 7 l-6 7 l-6 -7 z" fill="#d95f02"><title>published %s</title></path>`, px, y+6, template.HTMLEscapeString(published(*c.printed(), metric)))
			label += " (published " + published(*c.printed(), metric) + ")"
		}
		fmt.Fprintf(&s, `<text x="%.1f" y="%.0f">%s</text>`, max(x(c.Max), x(c.Median))+10, y+17, template.HTMLEscapeString(label))
	}
	scale := "linear axis"
	if logScale {
		scale = "logarithmic axis"
	}
	fmt.Fprintf(&s, `<text x="%.0f" y="%.0f" fill="#555">bar: median of the rounds; band: interval of the median; line: range; ◆ published (%s)</text></svg>`, left, h-8, scale)
	return s.String()
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

// lines draws a figure against the client count (or row count), a line per
// variant through its medians with each 95 % interval as a bar and the
// published figures as diamonds; counts are evenly spaced.
func lines(series map[int][]Cell, variants []string, titles map[string]string, base string) string {
	const left, width, top, height = 70.0, 520.0, 10.0, 240.0
	colors := []string{"#2b5d8a", "#d95f02", "#1b9e77", "#7570b3", "#e7298a", "#66a61e"}
	var counts []int
	hi := 0.0
	for n, cs := range series {
		counts = append(counts, n)
		for _, c := range cs {
			hi = max(hi, c.Hi, c.Median)
			if c.printed() != nil {
				hi = max(hi, c.printed().Value)
			}
		}
	}
	slices.Sort(counts)
	if hi <= 0 {
		hi = 1
	}
	hi *= 1.1
	x := func(i int) float64 { return left + width*(float64(i)+0.5)/float64(len(counts)) }
	y := func(v float64) float64 { return top + height*(1-v/hi) }
	var s strings.Builder
	fmt.Fprintf(&s, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="12">`, left+width+280, top+height+50)
	for k := 0; k <= 4; k++ {
		v := hi * float64(k) / 4
		fmt.Fprintf(&s, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="%.0f" y="%.1f" text-anchor="end">%s</text>`,
			left, left+width, y(v), y(v), left-6, y(v)+4, number(v))
	}
	for i, n := range counts {
		fmt.Fprintf(&s, `<text x="%.1f" y="%.0f" text-anchor="middle">%d</text>`, x(i), top+height+16, n)
	}
	for vi, v := range variants {
		color := colors[vi%len(colors)]
		var pts []string
		for i, n := range counts {
			for _, c := range series[n] {
				if c.Variant != v {
					continue
				}
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(c.Median)))
				fmt.Fprintf(&s, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="3" opacity="0.5"><title>interval of the median %s–%s</title></line>`,
					x(i), x(i), y(c.Lo), y(c.Hi), color, number(c.Lo), number(c.Hi))
				fmt.Fprintf(&s, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%s: %s</title></circle>`, x(i), y(c.Median), color,
					template.HTMLEscapeString(titles[v]), template.HTMLEscapeString(figure(c.Metric, c.Median)))
				if c.printed() != nil {
					fmt.Fprintf(&s, `<path d="M%.1f %.1f l6 7 l-6 7 l-6 -7 z" fill="none" stroke="%s" stroke-width="2"><title>published %s</title></path>`,
						x(i)+10, y(c.printed().Value)-7, color, template.HTMLEscapeString(published(*c.printed(), c.Metric)))
				}
			}
		}
		if len(pts) == 0 {
			continue
		}
		fmt.Fprintf(&s, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`, color, strings.Join(pts, " "))
		fmt.Fprintf(&s, `<rect x="%.0f" y="%.0f" width="12" height="12" fill="%s"/><text x="%.0f" y="%.0f">%s</text>`,
			left+width+14, top+18*float64(vi), color, left+width+32, top+18*float64(vi)+10, template.HTMLEscapeString(titles[v]))
	}
	unit := map[string]string{"tps": "TPS", "avg_s": "seconds", "visible_s": "seconds", PerDollar: "TPS per $/h"}[base]
	fmt.Fprintf(&s, `<text x="%.0f" y="%.0f" fill="#555">%s (median of the rounds; bar: interval of the median; ◇ published) against the count below</text></svg>`,
		left, top+height+40, cmp.Or(unit, base))
	return s.String()
}

// cdf draws each variant's latency distribution as the share of
// transactions at or under a latency (a logarithmic latency axis): curves
// to the left are faster, a long flat top is the tail.
func cdf(h Histogram, variants []string, titles map[string]string) string {
	const left, width, top, height = 60.0, 560.0, 10.0, 220.0
	colors := []string{"#2b5d8a", "#d95f02", "#1b9e77", "#7570b3", "#e7298a", "#66a61e"}
	lo, hi := math.Inf(1), 0.0
	for _, bs := range h.Variants {
		for _, b := range bs {
			if b.Count > 0 {
				lo, hi = min(lo, b.Value), max(hi, b.Value)
			}
		}
	}
	if hi <= 0 {
		return ""
	}
	lo = max(lo, 0.001)
	a, z := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi*1.01))
	if z <= a {
		z = a + 1
	}
	x := func(v float64) float64 { return left + width*(math.Log10(max(v, math.Pow(10, a)))-a)/(z-a) }
	y := func(share float64) float64 { return top + height*(1-share) }
	var s strings.Builder
	fmt.Fprintf(&s, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="12">`, left+width+400, top+height+50)
	for e := a; e <= z; e++ {
		v := math.Pow(10, e)
		fmt.Fprintf(&s, `<line x1="%.1f" x2="%.1f" y1="%.0f" y2="%.0f" stroke="#ddd"/><text x="%.1f" y="%.0f" text-anchor="middle">%s ms</text>`,
			x(v), x(v), top, top+height, x(v), top+height+16, strconv.FormatFloat(v, 'g', -1, 64))
	}
	for _, share := range []float64{0, 0.5, 0.95, 1} {
		fmt.Fprintf(&s, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="%.0f" y="%.1f" text-anchor="end">%.0f %%</text>`,
			left, left+width, y(share), y(share), left-6, y(share)+4, 100*share)
	}
	for i, v := range variants {
		bs := h.Variants[v]
		var total int64
		for _, b := range bs {
			total += b.Count
		}
		if total == 0 {
			continue
		}
		color := colors[i%len(colors)]
		var pts []string
		var cum int64
		for _, b := range bs {
			cum += b.Count
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(b.Value), y(float64(cum)/float64(total))))
		}
		fmt.Fprintf(&s, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`, color, strings.Join(pts, " "))
		fmt.Fprintf(&s, `<rect x="%.0f" y="%.0f" width="12" height="12" fill="%s"/><text x="%.0f" y="%.0f">%s (%d transactions)</text>`,
			left+width+14, top+18*float64(i), color, left+width+32, top+18*float64(i)+10, template.HTMLEscapeString(titles[v]), total)
	}
	fmt.Fprintf(&s, `<text x="%.0f" y="%.0f" fill="#555">share of transactions at or under a latency (logarithmic axis; sysbench's histogram)</text></svg>`, left, top+height+40)
	return s.String()
}

var page = template.Must(template.New("study").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>hadrill study {{.Res.Study.Name}}</title>
<style>body{font-family:sans-serif;max-width:1000px;margin:2em auto;color:#222}table{border-collapse:collapse}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}td:first-child,td:nth-child(2),td:nth-child(3){text-align:left}
.finding{font-size:1.05em;line-height:1.5;background:#f4f7fb;padding:1em;border-left:4px solid #2b5d8a}
.met{color:#1a7f37}.missed{color:#b42318}</style></head><body>
<h1>{{.Res.Study.Title}}</h1>
<p class="finding" id="finding">{{.Res.Finding}}</p>
<p>Study <code>{{.Res.Study.Name}}</code>, run {{.Run.ID}}, {{.Res.Scale}} scale: {{.Res.Protocol.Runs}} round(s), variants interleaved (each round starts one later){{if .Res.Interrupted}}, <b>interrupted</b>{{end}}.
Source: {{.Res.Study.Source}}.</p>
{{with .Res.Study.About}}<p>{{.}}</p>{{end}}
{{with .Res.Failed}}<p class="missed">Stopped early: a step failed twice: <code>{{.}}</code></p>{{end}}
{{with .Res.Retried}}<p>Steps that failed once and were run again (a busy machine can make a health check flap): {{range .}}<code>{{.}}</code> {{end}}</p>{{end}}
{{with .Deviations}}<h2>Deviations from the document's protocol</h2><ul>{{range .}}<li><b>{{.What}}</b>: the document {{.Document}}; here {{.Here}}{{with .Scale}} ({{.}} scale){{end}}{{with .Why}} — {{.}}{{end}}</li>{{end}}</ul>{{end}}
{{if .Res.Checks}}<h2>Does it reproduce?</h2>
<p>Each claim's figure (a mean over the rounds, or the ratio of two variants' means) with its {{printf "%.0f" .Level}} % interval: <i>reproduced</i> when the whole interval is within the claim's bounds, <i>not reproduced</i> when it is wholly outside, <i>inconclusive</i> when it crosses a bound (noise cannot tell), <i>not measured</i> when a step did not run.</p>
<table><tr><th>verdict</th><th>claim (the document's words)</th><th>where</th><th>figure</th><th>published</th><th>ours</th><th>bounds</th></tr>
{{range .Res.Checks}}<tr class="{{if eq .Verdict "reproduced"}}met{{else}}missed{{end}}"><td>{{if eq .Verdict "reproduced"}}✔{{else if eq .Verdict "not_measured"}}–{{else if eq .Verdict "inconclusive"}}?{{else}}✘{{end}} {{.Outcome}}</td><td style="text-align:left">“{{.Claim}}”{{with .Differs}}<br><small>differs here: {{.}}</small>{{end}}{{range .Measured}}<br><small>measured: {{.}}</small>{{end}}</td><td style="text-align:left">{{.Source}}</td><td>{{index $.Titles .Variant}} {{.Step}} {{.Metric}}{{with .Than}} ÷ {{index $.Titles .}}{{end}}</td><td>{{or .Published "—"}}</td><td>{{if eq .Verdict "not_measured"}}not measured{{else}}{{printf "%.3g" .Ours.Value}}{{if .Ours.Known}} ({{printf "%.3g" .Ours.Lo}}–{{printf "%.3g" .Ours.Hi}}){{else}} (one round){{end}}{{end}}</td><td>{{.Bounds}}{{if .Inferred}} (read from the words: {{.Why}}){{else}}{{with .Why}} — {{.}}{{end}}{{end}}</td></tr>{{end}}</table>{{end}}
{{range .Charts}}<h2>{{.Title}}</h2>{{.SVG}}{{end}}
<h2>Every figure</h2>
<table><tr><th>step</th><th>metric</th><th>variant</th><th>rounds</th><th>median</th><th>min</th><th>max</th><th>interval of the median (its confidence)</th><th>against the baseline</th><th>published</th></tr>
{{range .Rows}}<tr><td>{{.Step}}</td><td>{{.Metric}}</td><td>{{.Title}}</td><td>{{.N}}</td><td>{{printf "%.3g" .Median}}</td><td>{{printf "%.3g" .Min}}</td><td>{{printf "%.3g" .Max}}</td><td>{{.Interval}}</td><td>{{.Delta}}</td><td>{{.Published}}</td></tr>
{{end}}</table>
<h2>Set-ups</h2>
{{with .Res.Inventory}}<p>The labs ran on the machines of {{.}}, one at a time; what a set-up asks of its machines, disks and NICs is emulated on this computer only, so there the hosts' own stood in (last column).</p>{{end}}
<table><tr><th>variant</th><th>preset or endpoint</th><th>patch (merged into the preset)</th><th>load sent to</th><th>price</th><th>lab</th>{{if .Res.Inventory}}<th>not emulated on the hosts</th>{{end}}</tr>
{{range .Setups}}<tr><td>{{.Title}} ({{.Name}})</td><td>{{.Preset}}</td><td style="text-align:left"><pre>{{.Patch}}</pre></td><td>{{or .Target "lb (each step's own target)"}}</td><td>{{.Price}}</td><td>{{.Lab}}</td>{{if $.Res.Inventory}}<td style="text-align:left"><pre>{{.NotEmulated}}</pre></td>{{end}}</tr>
{{end}}</table>
<h2 id="hosts">Hosts, as measured</h2>
<p>Every host of every variant's lab during the variant's first run (CPU in cores, disks and NICs with their caps and use){{with .Computer}}; all ran on one computer: {{index . "cpus"}} CPUs, {{index . "memory"}}, kernel {{index . "kernel"}}{{end}}.</p>
{{if .Hosts}}<table><tr><th>variant</th><th>host</th><th>machine</th><th>CPU used</th><th>memory</th><th>disks</th><th>NICs</th></tr>
{{range .Hosts}}<tr><td>{{index $.Titles .Variant}}</td><td>{{.Host}}</td><td>{{.Machine}}</td><td>{{.CPU}}</td><td>{{.Memory}}</td><td style="text-align:left">{{.Disks}}</td><td style="text-align:left">{{.NICs}}</td></tr>
{{end}}</table>{{else}}<p>No host was measured (the runs are gone from the store).</p>{{end}}
<h2>What differs between the variants</h2>
{{if .Settings}}<table><tr><th>setting (first database node's my.cnf)</th>{{range $.Res.Variants}}<th>{{.}}</th>{{end}}</tr>
{{range .Settings}}{{$d := .}}<tr><td>{{.Setting}}</td>{{range $.Res.Variants}}<td>{{index $d.Values .}}</td>{{end}}</tr>
{{end}}</table>{{else}}<p>The variants' servers have the same settings (lab names and addresses aside).</p>{{end}}
{{if .Versions}}<table><tr><th>tool version</th>{{range $.Res.Variants}}<th>{{.}}</th>{{end}}</tr>
{{range .Versions}}{{$d := .}}<tr><td>{{.Setting}}</td>{{range $.Res.Variants}}<td>{{index $d.Values .}}</td>{{end}}</tr>
{{end}}</table>{{else}}<p>Every variant ran the same versions of the server and tools.</p>{{end}}
<h2>Protocol</h2>
<p>Labs{{with .Res.Inventory}} (on the machines of {{.}}, each up for its variant's turns){{end}}: {{range $v, $l := .Res.Labs}}{{$v}} → {{$l}} {{end}}. Every step of every round is a run of its own in the run store (hosts, configurations, versions recorded there): {{range .RunIDs}}{{.}} {{end}}</p>
</body></html>
`))
