package fault

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/hderr"
)

// ClockFault is `hadrill fault clock NODE OFFSET [--drift PPM]`: a node's
// wall clock set Offset from the real one and, with Drift, running that
// many parts per million fast (negative: slow).
type ClockFault struct {
	Node   string
	Offset time.Duration
	Drift  float64 // ppm
}

// MaxClockOffset bounds an offset: a year either way.
const MaxClockOffset = 366 * 24 * time.Hour

// ParseClock reads the command's OFFSET ("+30s", "-5m", "0") and --drift
// ("500ppm", "-200ppm", "" for none), naming every problem at once.
func ParseClock(node, offset, drift string) (ClockFault, error) {
	f := ClockFault{Node: node}
	var problems []string
	if offset != "" && offset != "0" {
		d, err := time.ParseDuration(strings.TrimPrefix(offset, "+"))
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("OFFSET: expected a signed duration such as +30s, -5m or 0, got %q", offset))
		case d.Abs() > MaxClockOffset:
			problems = append(problems, fmt.Sprintf("OFFSET: at most a year either way, got %s", offset))
		default:
			f.Offset = d
		}
	}
	if drift != "" {
		v, err := strconv.ParseFloat(strings.TrimSuffix(drift, "ppm"), 64)
		switch {
		case err != nil || !strings.HasSuffix(drift, "ppm"):
			problems = append(problems, fmt.Sprintf("--drift: expected parts per million such as 500ppm or -200ppm, got %q", drift))
		case math.Abs(v) > 100000:
			problems = append(problems, fmt.Sprintf("--drift: at most 100000ppm either way (10%%), got %q", drift))
		default:
			f.Drift = v
		}
	}
	if len(problems) == 0 && offset == "" && drift == "" {
		problems = append(problems, "OFFSET: give the clock's offset (e.g. +30s) or --drift")
	}
	return f, hderr.Users(problems)
}

// Spec is the fault as libfaketime's timestamp file says it: an offset in
// seconds and, with a drift, the clock's rate ("+60", "-300 x1.0005").
// The zero fault is "+0": the real time.
func (f ClockFault) Spec() string {
	s := "+" + strconv.FormatFloat(f.Offset.Seconds(), 'f', -1, 64)
	if f.Offset < 0 {
		s = strconv.FormatFloat(f.Offset.Seconds(), 'f', -1, 64)
	}
	if f.Drift != 0 {
		s += " x" + strconv.FormatFloat(1+f.Drift/1e6, 'f', -1, 64)
	}
	return s
}

// String is the fault as the log, status and the report show it.
func (f ClockFault) String() string {
	var parts []string
	if f.Offset != 0 || f.Drift == 0 {
		s := f.Offset.String()
		if f.Offset >= 0 {
			s = "+" + s
		}
		parts = append(parts, s)
	}
	if f.Drift != 0 {
		parts = append(parts, fmt.Sprintf("drift %+gppm", f.Drift))
	}
	return strings.Join(parts, ", ")
}

// ParseSpec reads a timestamp file's text back (Spec's form).
func ParseSpec(node, spec string) ClockFault {
	f := ClockFault{Node: node}
	fields := strings.Fields(spec)
	if len(fields) > 0 {
		if v, err := strconv.ParseFloat(fields[0], 64); err == nil {
			f.Offset = time.Duration(v * float64(time.Second))
		}
	}
	if len(fields) > 1 && strings.HasPrefix(fields[1], "x") {
		if v, err := strconv.ParseFloat(fields[1][1:], 64); err == nil {
			f.Drift = math.Round((v-1)*1e6*1000) / 1000
		}
	}
	return f
}

// IsZero says whether the clock is the real one.
func (f ClockFault) IsZero() bool { return f.Offset == 0 && f.Drift == 0 }

// ClockSpan is a stretch of time during which a node's clock was off the
// real time, as the fault log tells it.
type ClockSpan struct {
	Node  string
	Clock string    // as the log shows it: +1m0s, -30s, drift +500ppm
	From  time.Time // the clock fault
	To    time.Time // the node's next clock fault or a heal; zero: off still
}

// ClockSpans reads the clock faults out of a fault log's records (in the
// log's order): each lasts until the node's next clock fault or a heal.
// A fault back to the real time (+0s) opens no span.
func ClockSpans(recs []Record) []ClockSpan {
	open := map[string]ClockSpan{}
	var out []ClockSpan
	end := func(node string, at time.Time) {
		if s, ok := open[node]; ok {
			s.To = at
			out = append(out, s)
			delete(open, node)
		}
	}
	for _, r := range recs {
		switch r.Fault {
		case Clock:
			for _, n := range r.Targets {
				end(n, r.At)
				if r.Value != "" && r.Value != "+0s" {
					open[n] = ClockSpan{Node: n, Clock: r.Value, From: r.At}
				}
			}
		case Heal:
			for n := range open {
				end(n, r.At)
			}
		}
	}
	for _, s := range open {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].From.Equal(out[j].From) {
			return out[i].From.Before(out[j].From)
		}
		return out[i].Node < out[j].Node
	})
	return out
}

// Overlaps reports whether the span covers any moment from from to to.
func (s ClockSpan) Overlaps(from, to time.Time) bool {
	return !s.From.After(to) && (s.To.IsZero() || !s.To.Before(from))
}
