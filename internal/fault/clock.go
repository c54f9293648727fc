package fault

import (
	"sort"
	"time"
)

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
