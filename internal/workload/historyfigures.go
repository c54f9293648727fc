package workload

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/consistency"
)

// Figure is one figure a history workload's checked history gives (a
// study's consistency step reports it): its name, what it counts, and its
// value for a history checked over a run of d.
type Figure struct {
	Name string
	What string
	Of   func(c *consistency.Result, d time.Duration) float64
}

// the figures the workloads share
var (
	committedPerS = func(what string) Figure {
		return Figure{"committed_per_s", what + " committed per second", func(c *consistency.Result, d time.Duration) float64 { return float64(c.OK) / d.Seconds() }}
	}
	stalePct = Figure{"stale_read_pct", "Share of committed reads that missed a write acknowledged before they began, in %",
		func(c *consistency.Result, _ time.Duration) float64 {
			if len(c.Reads) == 0 || c.Reads[0].Reads == 0 {
				return 0
			}
			return 100 * float64(c.Reads[0].Stale) / float64(c.Reads[0].Reads)
		}}
	behindP99 = Figure{"behind_p99_ms", "How far behind the stale reads were at the 99th percentile, at least (the time since the earliest write they missed was acknowledged), in ms",
		func(c *consistency.Result, _ time.Duration) float64 {
			if len(c.Reads) == 0 {
				return 0
			}
			return 1000 * c.Reads[0].BehindP99
		}}
)

// counted is a figure counting the anomalies of some types.
func counted(name, what string, types ...string) Figure {
	return Figure{name, what, func(c *consistency.Result, _ time.Duration) float64 { return float64(c.Count(types...)) }}
}

// appendFigures are list-append's: its anomalies, named.
var appendFigures = []Figure{
	committedPerS("Transactions"),
	counted("lost_updates", "Lost updates (P4): two committed transactions read the same version and both wrote it", "lost-update"),
	counted("stale_reads", "Stale reads: G-single through real time (a transaction missed one that completed before it began)", "G-single-realtime"),
	{"realtime_cycles", "Every cycle through real time (stale reads, and write skew across real time)", func(c *consistency.Result, _ time.Duration) float64 {
		n := 0
		for _, a := range c.Anomalies {
			if strings.HasSuffix(a.Type, "-realtime") {
				n += a.Count
			}
		}
		return float64(n)
	}},
	counted("lost_appends", "Acknowledged appends no later read ever saw", "lost"),
	counted("cycles", "Dependency cycles without real-time or process order (G0, G1c, G-single, G2-item with G-nonadjacent and long forks, and reads undecided between two)", consistency.DataCycles...),
	counted("long_forks", "Long forks: two readers saw two writes in opposite orders (snapshot isolation forbids it)", consistency.LongFork),
	stalePct,
	behindP99,
}

// bankFigures are the bank's own (the list-append ones are not measured by it).
var bankFigures = []Figure{
	committedPerS("Transfers and reads"),
	counted("wrong_totals", "Reads of every balance whose total was not the opening one (money made or destroyed)", "wrong-total"),
	counted("negative_values", "Reads that saw a balance below zero", "negative-value"),
}

// setFigures are the set's own, and the reads' freshness.
var setFigures = []Figure{
	committedPerS("Adds and reads"),
	ownFigure("lost_elements", "Set elements acknowledged (or seen) and then missing from every read since some moment", "lost", 1),
	ownFigure("stale_elements", "Set elements every read saw in the end, but one that began after they were known missed", "stale", 1),
	ownFigure("visible_p99_ms", "How long after its acknowledgement a set element was still missed by a read, at the 99th percentile of the elements, at least, in ms", "visible_after_p99_s", 1000),
	stalePct,
	behindP99,
}

// ownFigure is one of the workload's own figures (Result.Own's value
// named key), times scale; NaN when its checker gave no such value.
func ownFigure(name, what, key string, scale float64) Figure {
	return Figure{name, what, func(c *consistency.Result, _ time.Duration) float64 {
		if c.Own == nil {
			return 0
		}
		v, ok := c.Own.Values[key]
		if !ok {
			return math.NaN()
		}
		return scale * v
	}}
}

// HistoryFigures are the figures a history workload's checked history
// gives, in order.
func HistoryFigures(name string) []Figure { return historyOf(name).figures }

// AllHistoryFigures are every history workload's figure names, each once,
// in the workloads' order.
func AllHistoryFigures() []string {
	var out []string
	for _, w := range historyWorkloads {
		for _, f := range w.figures {
			if !slices.Contains(out, f.Name) {
				out = append(out, f.Name)
			}
		}
	}
	return out
}

// DescribeHistoryFigure says what a figure of a history workload counts,
// and of what load ("" for a figure it does not give).
func DescribeHistoryFigure(name, figure string) string {
	w := historyOf(name)
	for _, f := range w.figures {
		if f.Name == figure {
			return f.What + ", " + w.does
		}
	}
	return ""
}
