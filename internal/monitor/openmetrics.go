package monitor

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// family is how a sample name is written in OpenMetrics: the family it
// belongs to and that family's type.
type family struct{ name, typ string }

// omFamily maps a sample name and the type its exporter declared for it
// to its OpenMetrics family. A counter whose samples end in _total is a
// counter family of the name without it (OpenMetrics' rule); a gauge stays
// a gauge; anything else (untyped, a counter named otherwise, the parts of
// a histogram or summary) is a family of unknown type named as the sample.
func omFamily(sample string, types map[string]string) family {
	if t := types[sample]; t == "gauge" {
		return family{sample, "gauge"}
	}
	if base, ok := strings.CutSuffix(sample, "_total"); ok && types[sample] == "counter" {
		return family{base, "counter"}
	}
	return family{sample, "unknown"}
}

type point struct {
	t time.Time
	v float64
}

type series struct {
	sample string
	labels string // written, {…} with job and instance first
	points []point
}

// WriteOpenMetrics writes every successful scrape of a scrape file as one
// OpenMetrics text file with timestamps, each family's series together
// (what `promtool tsdb create-blocks-from openmetrics` loads into a
// Prometheus data directory). Every series gets the labels job and
// instance, and extra (the run's id, say). It returns how many samples it
// wrote.
func WriteOpenMetrics(scrapes io.Reader, out io.Writer, extra []Label) (int, error) {
	fams := map[string]family{}             // sample name → its family, as first declared
	bySeries := map[string]*series{}        // sample name + labels → series
	members := map[family]map[string]bool{} // family → its series' keys
	err := ReadScrapes(scrapes, func(s Scrape) error {
		if s.Err != "" {
			return nil
		}
		for _, x := range s.Samples {
			f, ok := fams[x.Name]
			if !ok {
				f = omFamily(x.Name, s.Types)
				fams[x.Name] = f
			}
			labels := append([]Label{{"job", s.Job}, {"instance", s.Instance}}, extra...)
			for _, l := range x.Labels {
				if l.Name != "job" && l.Name != "instance" {
					labels = append(labels, l)
				}
			}
			ls := formatLabels(labels)
			key := x.Name + ls
			sr := bySeries[key]
			if sr == nil {
				sr = &series{sample: x.Name, labels: ls}
				bySeries[key] = sr
				if members[f] == nil {
					members[f] = map[string]bool{}
				}
				members[f][key] = true
			}
			if n := len(sr.points); n > 0 && !s.T.After(sr.points[n-1].t) {
				continue // a series' points must rise in time
			}
			sr.points = append(sr.points, point{s.T, x.Value})
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	var order []family
	for f := range members {
		order = append(order, f)
	}
	sort.Slice(order, func(i, j int) bool { return order[i].name < order[j].name })
	w := bufio.NewWriter(out)
	n := 0
	for _, f := range order {
		fmt.Fprintf(w, "# TYPE %s %s\n", f.name, f.typ)
		keys := make([]string, 0, len(members[f]))
		for k := range members[f] {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			sr := bySeries[k]
			for _, p := range sr.points {
				fmt.Fprintf(w, "%s%s %s %s\n", sr.sample, sr.labels, formatValue(p.v), strconv.FormatFloat(float64(p.t.UnixMilli())/1000, 'f', 3, 64))
				n++
			}
		}
	}
	fmt.Fprintln(w, "# EOF")
	return n, w.Flush()
}

func formatLabels(ls []Label) string {
	if len(ls) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, l := range ls {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(l.Name)
		b.WriteString(`="`)
		b.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(l.Value))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

func formatValue(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// Points is one named series over a run: seconds since start, value.
type Points struct {
	Instance string
	Points   [][2]float64
}

// Gauge is the values of sample name (no labels) of every instance of a
// job, over time from start.
func Gauge(scrapes io.Reader, job, name string, start time.Time) ([]Points, error) {
	m, err := Collect(scrapes, job, map[string]bool{name: false}, start)
	return m[name], err
}

// Rate is the per-second increase of counter name (no labels) of every
// instance of a job between consecutive scrapes; a fall (a restarted
// server) starts again from the new value.
func Rate(scrapes io.Reader, job, name string, start time.Time) ([]Points, error) {
	m, err := Collect(scrapes, job, map[string]bool{name: true}, start)
	return m[name], err
}

// Collect reads several samples (no labels) of a job's instances in one
// pass: names maps each to whether it is a counter to take as a rate
// (Rate) or a value to take as it is (Gauge). Each name's instances come
// in name order; a name no scrape had is absent.
func Collect(scrapes io.Reader, job string, names map[string]bool, start time.Time) (map[string][]Points, error) {
	type key struct{ name, instance string }
	by := map[key]*Points{}
	last := map[key]point{}
	err := ReadScrapes(scrapes, func(s Scrape) error {
		if s.Job != job || s.Err != "" {
			return nil
		}
		for _, x := range s.Samples {
			rate, wanted := names[x.Name]
			if !wanted || len(x.Labels) > 0 {
				continue
			}
			k := key{x.Name, s.Instance}
			p := by[k]
			if p == nil {
				p = &Points{Instance: s.Instance}
				by[k] = p
			}
			t := s.T.Sub(start).Seconds()
			if n := len(p.Points); n > 0 && t <= p.Points[n-1][0] {
				continue // out of order
			}
			if !rate {
				p.Points = append(p.Points, [2]float64{t, x.Value})
				continue
			}
			prev, seen := last[k]
			last[k] = point{s.T, x.Value}
			if dt := s.T.Sub(prev.t).Seconds(); seen && dt > 0 && x.Value >= prev.v {
				p.Points = append(p.Points, [2]float64{t, (x.Value - prev.v) / dt})
			}
		}
		return nil
	})
	keys := make([]key, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].instance < keys[j].instance })
	out := map[string][]Points{}
	for _, k := range keys {
		out[k.name] = append(out[k.name], *by[k])
	}
	return out, err
}
