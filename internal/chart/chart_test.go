package chart

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBars(t *testing.T) {
	pub := 108.0
	for _, c := range []struct {
		name   string
		bars   []Bar
		logged bool
	}{
		{"near figures: linear", []Bar{{Label: "a", Median: 500, Lo: 480, Hi: 520, Min: 470, Max: 530}, {Label: "b", Median: 280, Max: 281, Min: 279}}, false},
		{"over 20× apart: logarithmic", []Bar{{Label: "async", Median: 0.5, Min: 0.4, Max: 0.7}, {Label: "wan", Median: 105, Published: &pub, Text: "105 ms (published 108 ms)"}}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ch := Chart{Title: "t", X: "ms", Bars: c.bars}
			svg, err := ch.SVG()
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(string(svg), "logarithmic axis"); got != c.logged {
				t.Errorf("logarithmic axis %v, want %v", got, c.logged)
			}
			for _, b := range c.bars {
				if !strings.Contains(string(svg), b.Label) || !strings.Contains(string(svg), b.Text) {
					t.Errorf("bar %q or its text %q not drawn", b.Label, b.Text)
				}
			}
			// a bar chart grows with its rows
			if _, h := ch.size(); h <= 0 {
				t.Errorf("height %v", h)
			}
		})
	}
}

func TestLinesWithIntervalsAndPublished(t *testing.T) {
	c := Chart{ID: "x", Title: "TPS by clients", X: "clients", Y: "TPS", LogX: true, PointTicks: true, Series: []Series{
		{Name: "galera", Points: [][2]float64{{1, 100}, {8, 400}, {32, 500}}, Intervals: [][2]float64{{90, 110}, {380, 420}, {450, 560}},
			Published: [][2]float64{{32, 856}}},
		{Name: "async", Points: [][2]float64{{1, 120}, {8, 450}}}, // no intervals: no bars
	}}
	svg, err := c.SVG()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"galera", "async", ">32<"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("svg lacks %q", want)
		}
	}
	// the axis reaches the published figure and the intervals' tops
	if m := maxY(c.Series); m != 856 {
		t.Errorf("max y %v", m)
	}
	e := errorPoints{{1, 100, 90, 110}, {2, 5, 6, 4}} // an interval that misses its point is clipped to it
	if lo, hi := e.YError(0); lo != 10 || hi != 10 {
		t.Errorf("error bar %v %v", lo, hi)
	}
	if lo, hi := e.YError(1); lo != 0 || hi != 0 {
		t.Errorf("clipped error bar %v %v", lo, hi)
	}
	dir := t.TempDir()
	dense := Chart{ID: "cdf", Title: "latency", LogX: true, Dense: true, Series: []Series{{Name: "a", Points: [][2]float64{{0.5, 0.1}, {1, 0.5}, {10, 1}}}}}
	if err := WritePNGs(dir, []Chart{c, dense}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"x.png", "cdf.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() < 1000 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestOddSeries (the review's M8, L7): a logarithmic axis with one count
// (one thread count of 1), zeros, and points that are not numbers draw
// (those points left out) instead of failing or panicking.
func TestOddSeries(t *testing.T) {
	for _, c := range []Chart{
		{ID: "one", Title: "one thread count", LogX: true, PointTicks: true, Series: []Series{{Name: "a", Points: [][2]float64{{1, 270}}, Intervals: [][2]float64{{260, 280}}}}},
		{ID: "zero", Title: "no throughput", LogX: true, PointTicks: true, Series: []Series{{Name: "a", Points: [][2]float64{{1, 0}}}}},
		{ID: "nan", Title: "a NaN", Series: []Series{{Name: "a", Points: [][2]float64{{0, 1}, {1, math.NaN()}, {2, math.Inf(1)}, {3, 2}}}}},
		{ID: "all-nan", Title: "only NaN", LogX: true, Series: []Series{{Name: "a", Points: [][2]float64{{1, math.NaN()}}}}},
	} {
		if _, err := c.SVG(); err != nil {
			t.Errorf("%s: %v", c.ID, err)
		}
		if _, err := c.PNG(); err != nil {
			t.Errorf("%s: %v", c.ID, err)
		}
	}
}
