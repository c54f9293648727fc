// Package chart draws every chart hadrill shows (the run report's and the
// study report's) with gonum/plot, as SVG for the HTML reports and PNG for
// --png: lines over time or over client counts, each point's interval as an
// error bar, published figures as diamonds, faults' windows shaded, and
// horizontal bars of a figure per set-up.
package chart

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"

	"codeberg.org/go-fonts/liberation/liberationsansregular"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Series is one line of a chart. A Cap is a limit drawn dashed in the
// colour of the series before it (a host's CPU quota beside its CPU use).
// Intervals, when given, are each point's interval (low, high), drawn as
// an error bar; Published are figures a document printed, drawn as hollow
// diamonds in the series' colour.
type Series struct {
	Name      string
	Points    [][2]float64
	Cap       bool
	Intervals [][2]float64
	Published [][2]float64
}

// Chart is a line chart, or with Bars a chart of horizontal bars; Markers
// are vertical lines at x (faults). LogX: a logarithmic x axis, labelled
// at the points' x with PointTicks (thread counts), else at powers of ten.
type Chart struct {
	ID, Title, X, Y  string
	LogX, PointTicks bool
	// Note says how to read the chart (under it in the HTML reports).
	Note string
	// Dense series (a latency distribution's hundreds of buckets) are
	// drawn as lines without a mark at each point.
	Dense   bool
	Series  []Series
	Markers []Marker
	Bars    []Bar
}

// Bar is one row of a bar chart: a figure's median, its interval (a dark
// band), its range (a line) and the published figure (a diamond), with the
// text written beside it.
type Bar struct {
	Label                    string
	Median, Lo, Hi, Min, Max float64
	Published                *float64
	Text                     string
}

// Marker labels a moment on the x axis; with To beyond X, the span from X
// to To is shaded (a fault's window: from the fault to its heal, or to the
// end of the run when nothing healed it).
type Marker struct {
	X, To float64
	Label string
}

var palette = []color.Color{
	color.RGBA{0x1f, 0x77, 0xb4, 0xff}, color.RGBA{0xd6, 0x27, 0x28, 0xff}, color.RGBA{0x2c, 0xa0, 0x2c, 0xff},
	color.RGBA{0xff, 0x7f, 0x0e, 0xff}, color.RGBA{0x94, 0x67, 0xbd, 0xff}, color.RGBA{0x8c, 0x56, 0x4b, 0xff},
}

// The charts' text is Liberation Sans, the face the HTML report embeds
// (a sans-serif that lays out the same everywhere).
func init() { plot.DefaultFont = font.Font{Typeface: "Liberation", Variant: "Sans"} }

// plot lays the chart out; titled: with its title (a PNG stands alone; in
// the HTML report the figure's caption is its title).
func (c Chart) plot(titled bool) (*plot.Plot, error) {
	p := plot.New()
	p.X.Label.Text, p.Y.Label.Text = c.X, c.Y
	if titled {
		p.Title.Text = c.Title
	}
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	if c.LogX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
		if c.PointTicks { // thread counts: labelled at the counts measured
			p.X.Tick.Marker = xTicks(c.Series)
		}
	}
	colour := -1
	for _, s := range c.Series {
		if !s.Cap {
			colour++
		}
		s = drawable(s, c.LogX)
		if len(s.Points) == 0 {
			continue
		}
		xy := make(plotter.XYs, len(s.Points))
		for j, pt := range s.Points {
			xy[j].X, xy[j].Y = pt[0], pt[1]
		}
		line, points, err := plotter.NewLinePoints(xy)
		if err != nil {
			return nil, fmt.Errorf("chart %s: %w", c.Title, err)
		}
		col := palette[max(colour, 0)%len(palette)]
		line.Color, points.Color = col, col
		line.Width = vg.Points(1.5)
		if s.Cap {
			line.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
			p.Add(line)
			p.Legend.Add(s.Name, line)
			continue
		}
		points.Shape = draw.CircleGlyph{}
		points.Radius = vg.Points(2)
		if c.Dense {
			p.Add(line)
			p.Legend.Add(s.Name, line)
		} else {
			p.Add(line, points)
			p.Legend.Add(s.Name, line, points)
		}
		if len(s.Intervals) == len(s.Points) {
			bars := make(errorPoints, len(s.Points))
			for j := range s.Points {
				bars[j] = errorPoint{s.Points[j][0], s.Points[j][1], s.Intervals[j][0], s.Intervals[j][1]}
			}
			eb, err := plotter.NewYErrorBars(bars)
			if err != nil {
				return nil, fmt.Errorf("chart %s: %w", c.Title, err)
			}
			eb.LineStyle.Color, eb.LineStyle.Width, eb.CapWidth = col, vg.Points(1.2), vg.Points(6)
			p.Add(eb)
		}
		if len(s.Published) > 0 {
			pub, err := plotter.NewScatter(xys(s.Published))
			if err != nil {
				return nil, fmt.Errorf("chart %s: %w", c.Title, err)
			}
			pub.Shape, pub.Color, pub.Radius = diamond{}, col, vg.Points(5)
			p.Add(pub)
		}
	}
	top := maxY(c.Series) * (1.15 + 0.07*float64(len(c.Series))) // room for the legend above the lines
	for _, m := range c.Markers {
		if m.To <= m.X {
			continue
		}
		shade, err := plotter.NewPolygon(plotter.XYs{{X: m.X, Y: 0}, {X: m.To, Y: 0}, {X: m.To, Y: top}, {X: m.X, Y: top}})
		if err != nil {
			return nil, err
		}
		shade.Color, shade.LineStyle.Width = color.RGBA{0xd6, 0x27, 0x28, 0x1c}, 0
		p.Add(shade)
	}
	for i, m := range c.Markers {
		y := maxY(c.Series) * (1.05 - 0.08*float64(i%3)) // staggered, so close faults stay readable
		v, err := plotter.NewLine(plotter.XYs{{X: m.X, Y: 0}, {X: m.X, Y: y}})
		if err != nil {
			return nil, err
		}
		v.Color, v.Dashes = color.RGBA{0xaa, 0, 0, 0xff}, []vg.Length{vg.Points(4), vg.Points(3)}
		lb, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: m.X, Y: y}}, Labels: []string{" " + m.Label}})
		if err != nil {
			return nil, err
		}
		for j := range lb.TextStyle {
			lb.TextStyle[j].Color = color.RGBA{0xaa, 0, 0, 0xff}
		}
		p.Add(v, lb)
	}
	p.Y.Min = 0
	p.Y.Max = max(top, 1) // a chart of zeros still has a scale
	if lo, hi, ok := xRange(c.Series); c.LogX && (!ok || lo == hi) {
		// a logarithmic axis has no room for the linear padding of a
		// single value (which reaches 0): a factor of two either side
		p.X.Min, p.X.Max = 1, 10
		if ok {
			p.X.Min, p.X.Max = lo/2, hi*2
		}
	}
	return p, nil
}

// drawable is a series without the points a chart cannot draw: a value
// that is not a finite number, or an x at or below 0 on a logarithmic
// axis (with their intervals).
func drawable(s Series, logX bool) Series {
	keep := func(pt [2]float64) bool {
		return !math.IsNaN(pt[0]) && !math.IsNaN(pt[1]) && !math.IsInf(pt[0], 0) && !math.IsInf(pt[1], 0) && (!logX || pt[0] > 0)
	}
	if !slices.ContainsFunc(s.Points, func(pt [2]float64) bool { return !keep(pt) }) {
		return s
	}
	out := s
	out.Points, out.Intervals = nil, nil
	for j, pt := range s.Points {
		if keep(pt) {
			out.Points = append(out.Points, pt)
			if len(s.Intervals) == len(s.Points) {
				out.Intervals = append(out.Intervals, s.Intervals[j])
			}
		}
	}
	return out
}

// xRange is the smallest and largest positive x of the series' points.
func xRange(series []Series) (lo, hi float64, ok bool) {
	for _, s := range series {
		for _, pt := range drawable(s, true).Points {
			if !ok || pt[0] < lo {
				lo = pt[0]
			}
			if !ok || pt[0] > hi {
				hi = pt[0]
			}
			ok = true
		}
	}
	return lo, hi, ok
}

// errorPoints are points with their intervals, as plotter.YErrorBars reads them.
type errorPoint struct{ x, y, lo, hi float64 }
type errorPoints []errorPoint

func (e errorPoints) Len() int                    { return len(e) }
func (e errorPoints) XY(i int) (float64, float64) { return e[i].x, e[i].y }
func (e errorPoints) YError(i int) (float64, float64) {
	return max(e[i].y-e[i].lo, 0), max(e[i].hi-e[i].y, 0)
}

func xys(pts [][2]float64) plotter.XYs {
	out := make(plotter.XYs, len(pts))
	for i, pt := range pts {
		out[i].X, out[i].Y = pt[0], pt[1]
	}
	return out
}

// diamond is a hollow diamond: a published figure.
type diamond struct{}

func (diamond) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(1.5)})
	r := sty.Radius
	var p vg.Path
	p.Move(vg.Point{X: pt.X, Y: pt.Y + r})
	p.Line(vg.Point{X: pt.X + r, Y: pt.Y})
	p.Line(vg.Point{X: pt.X, Y: pt.Y - r})
	p.Line(vg.Point{X: pt.X - r, Y: pt.Y})
	p.Close()
	c.Stroke(p)
}

func xTicks(series []Series) plot.ConstantTicks {
	seen := map[float64]bool{}
	var ticks plot.ConstantTicks
	for _, s := range series {
		for _, pt := range s.Points {
			if !seen[pt[0]] {
				seen[pt[0]] = true
				ticks = append(ticks, plot.Tick{Value: pt[0], Label: strconv.FormatFloat(pt[0], 'f', -1, 64)})
			}
		}
	}
	sort.Slice(ticks, func(i, j int) bool { return ticks[i].Value < ticks[j].Value })
	return ticks
}

func maxY(series []Series) float64 {
	m := 1.0
	finite := func(v float64) float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0
		}
		return v
	}
	for _, s := range series {
		for _, pt := range s.Points {
			m = max(m, finite(pt[1]))
		}
		for _, iv := range s.Intervals {
			m = max(m, finite(iv[1]))
		}
		for _, pt := range s.Published {
			m = max(m, finite(pt[1]))
		}
	}
	return m
}

// A chart's size; the HTML report scales it to the page's width.
const width, height = 24 * vg.Centimeter, 10 * vg.Centimeter

// size is the chart's size: a bar chart grows with its rows.
func (c Chart) size() (vg.Length, vg.Length) {
	if len(c.Bars) > 0 {
		return width, vg.Centimeter * vg.Length(2.5+0.9*float64(len(c.Bars)))
	}
	return width, height
}

func (c Chart) layout(titled bool) (*plot.Plot, error) {
	if len(c.Bars) > 0 {
		return c.bars(titled)
	}
	return c.plot(titled)
}

// SVG renders the chart as SVG.
func (c Chart) SVG() ([]byte, error) {
	p, err := c.layout(false)
	if err != nil {
		return nil, err
	}
	canvas := vgsvg.New(c.size())
	p.Draw(draw.New(canvas))
	var b bytes.Buffer
	if _, err := canvas.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// PNG renders the chart as PNG.
func (c Chart) PNG() ([]byte, error) {
	p, err := c.layout(true)
	if err != nil {
		return nil, err
	}
	canvas := vgimg.PngCanvas{Canvas: vgimg.New(c.size())}
	p.Draw(draw.New(canvas))
	var b bytes.Buffer
	if _, err := canvas.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// bars lays out a bar chart: a row per bar from the top, the value axis
// logarithmic when the figures span more than 20×.
func (c Chart) bars(titled bool) (*plot.Plot, error) {
	p := plot.New()
	p.X.Label.Text = c.X
	if titled {
		p.Title.Text = c.Title
	}
	p.Add(plotter.NewGrid())
	hi, lo := 0.0, math.Inf(1)
	for _, b := range c.Bars {
		hi = max(hi, b.Max, b.Hi, b.Median)
		lo = min(lo, max(b.Min, 1e-9))
		if b.Published != nil {
			hi, lo = max(hi, *b.Published), min(lo, max(*b.Published, 1e-9))
		}
	}
	if hi <= 0 {
		hi = 1
	}
	base := 0.0
	if hi/lo > 20 {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
		base = lo / 2
		p.X.Label.Text += " (logarithmic axis)"
	}
	n := len(c.Bars)
	var ticks plot.ConstantTicks
	var labels plotter.XYLabels
	for i, b := range c.Bars {
		y := float64(n - 1 - i) // the first bar on top
		ticks = append(ticks, plot.Tick{Value: y, Label: b.Label})
		bar, err := plotter.NewPolygon(plotter.XYs{{X: base, Y: y - 0.3}, {X: max(b.Median, base), Y: y - 0.3}, {X: max(b.Median, base), Y: y + 0.3}, {X: base, Y: y + 0.3}})
		if err != nil {
			return nil, err
		}
		bar.Color, bar.LineStyle.Width = color.RGBA{0x8f, 0xb3, 0xd9, 0xff}, 0
		p.Add(bar)
		if b.Hi > b.Lo {
			band, err := plotter.NewPolygon(plotter.XYs{{X: max(b.Lo, base), Y: y - 0.12}, {X: b.Hi, Y: y - 0.12}, {X: b.Hi, Y: y + 0.12}, {X: max(b.Lo, base), Y: y + 0.12}})
			if err != nil {
				return nil, err
			}
			band.Color, band.LineStyle.Width = color.RGBA{0x2b, 0x5d, 0x8a, 0x99}, 0
			p.Add(band)
		}
		if b.Max > b.Min {
			rng, err := plotter.NewLine(plotter.XYs{{X: max(b.Min, base), Y: y}, {X: b.Max, Y: y}})
			if err != nil {
				return nil, err
			}
			rng.Color, rng.Width = color.Black, vg.Points(1)
			p.Add(rng)
		}
		if b.Published != nil {
			pub, err := plotter.NewScatter(plotter.XYs{{X: *b.Published, Y: y}})
			if err != nil {
				return nil, err
			}
			pub.Shape, pub.Color, pub.Radius = diamond{}, color.RGBA{0xd9, 0x5f, 0x02, 0xff}, vg.Points(6)
			p.Add(pub)
		}
		labels.XYs = append(labels.XYs, plotter.XY{X: max(b.Max, b.Median, b.Hi, base), Y: y + 0.32})
		labels.Labels = append(labels.Labels, "  "+b.Text)
	}
	if lb, err := plotter.NewLabels(labels); err == nil {
		p.Add(lb)
	} else {
		return nil, err
	}
	p.Y.Tick.Marker = ticks
	p.Y.Min, p.Y.Max = -0.6, float64(n)-0.2
	p.X.Min, p.X.Max = base, hi*1.6 // room for the text beside the longest bar
	if base > 0 {
		p.X.Max = hi * 8
	}
	return p, nil
}

// FontFace is the CSS that carries, once, the font the charts were laid
// out with: without it a browser substitutes a wider one and the charts'
// text overflows.
func FontFace() template.CSS {
	return template.CSS(`@font-face { font-family: "Liberation Sans"; src: url(data:font/ttf;base64,` +
		base64.StdEncoding.EncodeToString(liberationsansregular.TTF) + `) format("truetype"); }`)
}

// WritePNGs writes each chart as <ID>.png into dir (made if missing).
func WritePNGs(dir string, charts []Chart) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, c := range charts {
		b, err := c.PNG()
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, c.ID+".png"), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
