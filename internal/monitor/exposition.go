package monitor

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// Sample is one line of a scrape: a metric name, its labels and value.
type Sample struct {
	Name   string
	Labels []Label
	Value  float64
}

// Label is a label's name and (unescaped) value.
type Label struct{ Name, Value string }

// Scrape is one scrape of one exporter: when, and what it served (its
// samples and the types it declared), or why it failed.
type Scrape struct {
	Job, Instance string
	T             time.Time
	Err           string
	Types         map[string]string // metric name → counter, gauge, histogram, summary, untyped
	Samples       []Sample
}

// ParseText reads the Prometheus text exposition format (what exporters
// serve at /metrics): # TYPE lines and samples; # HELP and other comments
// are skipped, as are lines it cannot read (counted in bad).
func ParseText(body string) (types map[string]string, samples []Sample, bad int) {
	types = map[string]string{}
	for line := range strings.Lines(body) {
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			if name, typ, ok := strings.Cut(rest, " "); ok {
				types[name] = strings.TrimSpace(typ)
			}
			continue
		}
		if line[0] == '#' {
			continue
		}
		s, ok := parseSample(line)
		if !ok {
			bad++
			continue
		}
		samples = append(samples, s)
	}
	return types, samples, bad
}

// parseSample reads `name{label="value",...} value [timestamp]`.
func parseSample(line string) (Sample, bool) {
	var s Sample
	i := strings.IndexAny(line, "{ ")
	if i <= 0 {
		return s, false
	}
	s.Name, line = line[:i], line[i:]
	if line[0] == '{' {
		var ok bool
		if s.Labels, line, ok = parseLabels(line[1:]); !ok {
			return s, false
		}
	}
	fields := strings.Fields(line)
	if len(fields) < 1 || len(fields) > 2 {
		return s, false
	}
	v, err := parseValue(fields[0])
	if err != nil {
		return s, false
	}
	s.Value = v
	return s, true
}

// parseLabels reads label pairs up to the closing brace; rest is what
// follows it.
func parseLabels(in string) (labels []Label, rest string, ok bool) {
	for {
		in = strings.TrimLeft(in, " ,")
		if strings.HasPrefix(in, "}") {
			return labels, in[1:], true
		}
		eq := strings.IndexByte(in, '=')
		if eq <= 0 || eq+1 >= len(in) || in[eq+1] != '"' {
			return nil, "", false
		}
		name := strings.TrimSpace(in[:eq])
		var b strings.Builder
		j := eq + 2
		for ; j < len(in) && in[j] != '"'; j++ {
			if in[j] == '\\' && j+1 < len(in) {
				j++
				switch in[j] {
				case 'n':
					b.WriteByte('\n')
				default:
					b.WriteByte(in[j])
				}
				continue
			}
			b.WriteByte(in[j])
		}
		if j >= len(in) {
			return nil, "", false
		}
		labels = append(labels, Label{name, b.String()})
		in = in[j+1:]
	}
}

func parseValue(s string) (float64, error) {
	switch s {
	case "+Inf", "Inf":
		return math.Inf(1), nil
	case "-Inf":
		return math.Inf(-1), nil
	case "NaN":
		return math.NaN(), nil
	}
	return strconv.ParseFloat(s, 64)
}

// The scrape file: each scrape is a header line and the body the exporter
// served, as it served it:
//
//	# hadrill scrape job=mysqld instance=db1 t=1764090000123
//	<body>
//
// a failed scrape has "error=<why>" at the end of its header and no body.
const scrapeHeader = "# hadrill scrape "

// writeScrape appends one scrape to w.
func writeScrape(w io.Writer, job, instance string, t time.Time, body []byte, failure error) error {
	h := fmt.Sprintf("%sjob=%s instance=%s t=%d", scrapeHeader, job, instance, t.UnixMilli())
	if failure != nil {
		_, err := fmt.Fprintf(w, "%s error=%s\n", h, strings.ReplaceAll(failure.Error(), "\n", " "))
		return err
	}
	if _, err := io.WriteString(w, h+"\n"); err != nil {
		return err
	}
	if len(body) > 0 && body[len(body)-1] != '\n' {
		body = append(body, '\n')
	}
	_, err := w.Write(body)
	return err
}

// ReadScrapes reads a scrape file, calling each with every scrape in turn
// (parsed); it stops at each's first error.
func ReadScrapes(r io.Reader, each func(Scrape) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var cur *Scrape
	var body strings.Builder
	flush := func() error {
		if cur == nil {
			return nil
		}
		if cur.Err == "" {
			cur.Types, cur.Samples, _ = ParseText(body.String())
		}
		body.Reset()
		s := *cur
		cur = nil
		return each(s)
	}
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, scrapeHeader); ok {
			if err := flush(); err != nil {
				return err
			}
			s, err := parseHeader(rest)
			if err != nil {
				return err
			}
			cur = &s
			continue
		}
		if cur != nil {
			body.WriteString(line)
			body.WriteByte('\n')
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return flush()
}

func parseHeader(h string) (Scrape, error) {
	var s Scrape
	rest := h
	for _, key := range []string{"job=", "instance=", "t="} {
		var field string
		field, rest, _ = strings.Cut(rest, " ")
		v, ok := strings.CutPrefix(field, key)
		if !ok {
			return s, fmt.Errorf("scrape header %q: expected %s", h, key)
		}
		switch key {
		case "job=":
			s.Job = v
		case "instance=":
			s.Instance = v
		default:
			ms, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return s, fmt.Errorf("scrape header %q: %v", h, err)
			}
			s.T = time.UnixMilli(ms)
		}
	}
	if e, ok := strings.CutPrefix(rest, "error="); ok {
		s.Err = e
	}
	return s, nil
}
