// Package report turns stored runs into one self-contained HTML file:
// SVG charts (gonum/plot) and tables inline, nothing fetched from elsewhere.
package report

import (
	"bytes"
	"fmt"
	"image/color"
	"sort"
	"strconv"

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
type Series struct {
	Name   string
	Points [][2]float64
	Cap    bool
}

// Chart is a line chart; Markers are vertical lines at x (faults).
type Chart struct {
	ID, Title, X, Y string
	LogX            bool
	Series          []Series
	Markers         []Marker
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
	if c.LogX { // thread counts: log scale, labelled at the counts measured
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = xTicks(c.Series)
	}
	colour := -1
	for _, s := range c.Series {
		if !s.Cap {
			colour++
		}
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
		p.Add(line, points)
		p.Legend.Add(s.Name, line, points)
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
	p.Y.Max = top
	return p, nil
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
	for _, s := range series {
		for _, pt := range s.Points {
			m = max(m, pt[1])
		}
	}
	return m
}

// A chart's size; the HTML report scales it to the page's width.
const width, height = 24 * vg.Centimeter, 10 * vg.Centimeter

// SVG renders the chart as SVG.
func (c Chart) SVG() ([]byte, error) {
	p, err := c.plot(false)
	if err != nil {
		return nil, err
	}
	canvas := vgsvg.New(width, height)
	p.Draw(draw.New(canvas))
	var b bytes.Buffer
	if _, err := canvas.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// PNG renders the chart as PNG.
func (c Chart) PNG() ([]byte, error) {
	p, err := c.plot(true)
	if err != nil {
		return nil, err
	}
	canvas := vgimg.PngCanvas{Canvas: vgimg.New(width, height)}
	p.Draw(draw.New(canvas))
	var b bytes.Buffer
	if _, err := canvas.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
