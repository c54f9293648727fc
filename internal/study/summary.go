package study

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/hadrill/hadrill/internal/stats"
)

// Order is the variants' order in round r (from 1): each round starts one
// variant later, so no variant always runs first (on a warm or a cold
// machine) and the rounds interleave A B C, B C A, C A B…
func Order(variants []string, round int) []string {
	n := len(variants)
	if n == 0 {
		return nil
	}
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, variants[(i+round-1)%n])
	}
	return out
}

// Sample is one figure of one variant in one round.
type Sample struct {
	Round   int     `json:"round"`
	Variant string  `json:"variant"`
	Step    string  `json:"step"`
	Metric  string  `json:"metric"`
	Value   float64 `json:"value"`
	RunID   string  `json:"run_id"`
}

// Cell is one figure of one variant over the rounds: its spread, its
// change against the baseline's, and what the document published.
type Cell struct {
	Step    string `json:"step"`
	Metric  string `json:"metric"`
	Variant string `json:"variant"`
	stats.Spread
	Delta     *stats.Delta `json:"delta,omitempty"` // against the baseline (none for the baseline)
	Published *Reference   `json:"published,omitempty"`
	Ratio     float64      `json:"ratio,omitempty"` // median / published
}

// Check is an expectation against what was measured.
type Check struct {
	Expect
	Median   float64 `json:"median"` // the variant's median, or its ratio to Than's
	Measured bool    `json:"measured"`
	// WithinNoise: the ratio is in bounds that claim a difference, but the
	// two variants' rounds do not establish one (Welch's t-test at
	// stats.Alpha, P its p-value): not established, so not met.
	WithinNoise bool    `json:"within_noise,omitempty"`
	P           float64 `json:"p,omitempty"`
	Met         bool    `json:"met"`
}

// Outcome is a check's verdict in words: reproduced, not reproduced, not
// established (the bounds are met but the rounds cannot tell the
// difference from noise) or not measured.
func (c Check) Outcome() string {
	switch {
	case !c.Measured:
		return "not measured"
	case c.Met:
		return "reproduced"
	case c.WithinNoise && c.inBounds():
		return "not established"
	}
	return "not reproduced"
}

func (c Check) inBounds() bool {
	return (c.Min == nil || c.Median >= *c.Min) && (c.Max == nil || c.Median <= *c.Max)
}

// Summarize turns samples into cells (step, metric and variant in the
// study's order) and judges the expectations.
func Summarize(s *Study, sc Scale, variants []string, samples []Sample) ([]Cell, []Check) {
	base := s.Baseline()
	samples = perDollar(s, samples)
	var cells []Cell
	for _, st := range s.Steps {
		for _, metric := range s.metrics(st, sc) {
			var baseSpread *stats.Spread
			var row []Cell
			for _, v := range variants {
				var values []float64
				for _, x := range samples {
					if x.Variant == v && x.Step == st.Name && x.Metric == metric {
						values = append(values, x.Value)
					}
				}
				if len(values) == 0 {
					continue
				}
				c := Cell{Step: st.Name, Metric: metric, Variant: v, Spread: stats.SpreadOf(values)}
				for i, r := range s.Reference {
					if r.Step == st.Name && r.Variant == v && r.Metric == metric {
						c.Published = &s.Reference[i]
						if r.Value != 0 {
							c.Ratio = c.Median / r.Value
						}
					}
				}
				if v == base {
					sp := c.Spread
					baseSpread = &sp
				}
				row = append(row, c)
			}
			for i := range row {
				if baseSpread != nil && row[i].Variant != base {
					d := stats.Compare(row[i].Spread, *baseSpread)
					row[i].Delta = &d
				}
			}
			cells = append(cells, row...)
		}
	}
	cell := func(variant, step, metric string) (Cell, bool) {
		for _, c := range cells {
			if c.Step == step && c.Variant == variant && c.Metric == metric {
				return c, true
			}
		}
		return Cell{}, false
	}
	var checks []Check
	for _, e := range s.Expect {
		ch := Check{Expect: e}
		c, ok := cell(e.Variant, e.Step, e.Metric)
		v := c.Median
		if e.Than != "" {
			other, found := cell(e.Than, e.Step, e.Metric)
			ok = ok && found && other.Median != 0
			if ok {
				v /= other.Median
				// a claimed difference (the bounds exclude 1) must stand out
				// of the noise of the two variants' rounds
				d := stats.Compare(c.Spread, other.Spread)
				ch.WithinNoise = (d.WithinNoise || d.Unknown) && ((e.Min != nil && *e.Min > 1) || (e.Max != nil && *e.Max < 1))
				ch.P = d.P
			}
		}
		if ok {
			ch.Median, ch.Measured = v, true
			ch.Met = (e.Min == nil || v >= *e.Min) && (e.Max == nil || v <= *e.Max) && !ch.WithinNoise
		}
		checks = append(checks, ch)
	}
	return cells, checks
}

// PerDollar is the metric of throughput per dollar an hour: a sysbench
// step's TPS divided by the variant's hourly price (document 004's price
// per performance, the other way up: more is better).
const PerDollar = "tps_per_dollar"

// metrics are a step's figures at a scale, with TPS per dollar when a
// variant is priced.
func (s *Study) metrics(st Step, sc Scale) []string {
	out := st.Metrics(sc)
	if st.Kind != "sysbench" || !slices.ContainsFunc(s.Variants, func(v Variant) bool { _, ok := v.HourlyPrice(); return ok }) {
		return out
	}
	for _, n := range sc.Threads {
		out = append(out, fmt.Sprintf("%s@%d", PerDollar, n))
	}
	return out
}

// perDollar adds each priced variant's TPS per dollar an hour to the
// samples (derived, never stored).
func perDollar(s *Study, samples []Sample) []Sample {
	prices := map[string]float64{}
	for _, v := range s.Variants {
		if p, ok := v.HourlyPrice(); ok {
			prices[v.Name] = p
		}
	}
	out := slices.Clone(samples)
	for _, x := range samples {
		if n, ok := strings.CutPrefix(x.Metric, "tps@"); ok && prices[x.Variant] > 0 {
			d := x
			d.Metric, d.Value = PerDollar+"@"+n, x.Value/prices[x.Variant]
			out = append(out, d)
		}
	}
	return out
}

// primary is the figure a step is reported by: a commit's mean time, or
// throughput at each thread count.
func primary(metric string) bool {
	return metric == "avg_ms" || metric == "seconds" || strings.HasPrefix(metric, "tps@") || strings.HasPrefix(metric, "visible_s@") ||
		strings.HasPrefix(metric, "avg_s@") || strings.HasPrefix(metric, PerDollar+"@")
}

// Finding is the report's opening paragraph, computed from the cells: for
// each step its main figure per variant (median of the rounds, with its
// interval, the change against the baseline and the published value), then
// whether the expectations were met.
func Finding(s *Study, scale string, rounds int, cells []Cell, checks []Check, interrupted bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, %s scale, %d round(s) of every variant interleaved", s.Title, scale, rounds)
	if interrupted {
		b.WriteString(" (interrupted: what was measured)")
	}
	b.WriteString(". ")
	titles := map[string]string{}
	for _, v := range s.Variants {
		titles[v.Name] = v.Title()
	}
	for _, st := range s.Steps {
		for _, metric := range metricsIn(cells, st.Name) {
			if !primary(metric) {
				continue
			}
			var parts []string
			for _, c := range cells {
				if c.Step != st.Name || c.Metric != metric {
					continue
				}
				p := fmt.Sprintf("%s %s", titles[c.Variant], figure(metric, c.Median))
				if c.N > 1 {
					p += fmt.Sprintf(" (%s %s–%s)", c.IntervalLabel(), number(c.Lo), number(c.Hi))
				}
				if c.Delta != nil {
					p += ", " + change(*c.Delta, titles[s.Baseline()])
				}
				if c.Published != nil {
					p += fmt.Sprintf("; published %s", published(*c.Published, metric))
				}
				parts = append(parts, p)
			}
			if len(parts) > 0 {
				fmt.Fprintf(&b, "%s: %s. ", describe(st, metric), strings.Join(parts, "; "))
			}
		}
	}
	if len(checks) > 0 {
		by := map[string][]string{}
		for _, c := range checks {
			var what string
			switch o := c.Outcome(); {
			case o == "reproduced":
				what = "met"
			case o == "not measured":
				what = fmt.Sprintf("%s %s", titles[c.Variant], c.Step)
			case c.Than != "":
				noise := ""
				if o == "not established" {
					noise = fmt.Sprintf(", which %d round(s) cannot tell from noise (Welch's t-test, p %.2f; it calls set-ups that do not differ different at most %.0f %% of the time)",
						rounds, c.P, 100*stats.Alpha)
				}
				what = fmt.Sprintf("%s %s %s× %s%s (%s)", titles[c.Variant], c.Step, number(c.Median), titles[c.Than], noise, c.Why)
			default:
				what = fmt.Sprintf("%s %s %s (%s)", titles[c.Variant], c.Step, figure(c.Metric, c.Median), c.Why)
			}
			by[c.Outcome()] = append(by[c.Outcome()], what)
		}
		measured := len(checks) - len(by["not measured"])
		fmt.Fprintf(&b, "The document's result is reproduced on %d of %d counts measured", len(by["reproduced"]), measured)
		if len(by["not reproduced"]) > 0 {
			fmt.Fprintf(&b, "; not reproduced: %s", strings.Join(by["not reproduced"], "; "))
		}
		if len(by["not established"]) > 0 {
			fmt.Fprintf(&b, "; not established: %s", strings.Join(by["not established"], "; "))
		}
		b.WriteString(".")
		if n := len(by["not measured"]); n > 0 {
			why := "a step failed"
			if interrupted {
				why = "the study stopped before they ran"
			}
			fmt.Fprintf(&b, " %d count(s) not measured, so neither reproduced nor not (%s): %s.", n, why, strings.Join(by["not measured"], "; "))
		}
	}
	return strings.TrimSpace(b.String())
}

// change says a delta: in percent, or as a factor when the figure is
// more than double or less than half the baseline's.
func change(d stats.Delta, base string) string {
	if d.Unknown {
		return fmt.Sprintf("%+.0f %% against %s (one round: noise unknown)", d.Percent, base)
	}
	if d.WithinNoise {
		return fmt.Sprintf("%+.0f %% against %s, within noise", d.Percent, base)
	}
	if f := 1 + d.Percent/100; f >= 2 || (f > 0 && f <= 0.5) {
		return fmt.Sprintf("%s× %s", number(f), base)
	}
	return fmt.Sprintf("%+.0f %% against %s", d.Percent, base)
}

func metricsIn(cells []Cell, step string) []string {
	var out []string
	for _, c := range cells {
		if c.Step == step && (len(out) == 0 || out[len(out)-1] != c.Metric) {
			out = append(out, c.Metric)
		}
	}
	return out
}

func describe(st Step, metric string) string {
	switch st.Kind {
	case "commit-latency":
		return "Mean time of an autocommit INSERT"
	case "bulk-replication":
		return fmt.Sprintf("Seconds from the first of %s single-row commits until all are on the other node", strings.TrimPrefix(metric, "visible_s@"))
	case "slap":
		what := "the query " + map[bool]string{true: "over the generated " + st.Dataset + " dataset", false: "given"}[st.Dataset != ""]
		if st.Load != "" {
			what = "its generated " + st.Load + " load"
		}
		n := strings.TrimPrefix(metric, "avg_s@")
		return fmt.Sprintf("Seconds for %s mariadb-slap client%s to run %s", n, map[bool]string{true: "", false: "s"}[n == "1"], what)
	case "disk":
		if metric == "seconds" {
			return fmt.Sprintf("Seconds of fio's %s test", testName(st))
		}
		return fmt.Sprintf("fio's %s test, %s", testName(st), metric)
	}
	if n, ok := strings.CutPrefix(metric, PerDollar+"@"); ok {
		return fmt.Sprintf("Transactions per second per dollar an hour, sysbench %s with %s clients", st.Workload, n)
	}
	threads := strings.TrimPrefix(metric, "tps@")
	return fmt.Sprintf("Transactions per second, sysbench %s with %s clients", st.Workload, threads)
}

func testName(st Step) string {
	if st.Test == "" {
		return "file1g"
	}
	return st.Test
}

func figure(metric string, v float64) string {
	switch {
	case strings.HasSuffix(metric, "_ms") || strings.Contains(metric, "_ms@"):
		return number(v) + " ms"
	case strings.HasPrefix(metric, PerDollar):
		return number(v) + " TPS per $/h"
	case strings.HasPrefix(metric, "tps"):
		return number(v) + " TPS"
	case metric == "seconds" || strings.HasPrefix(metric, "visible_s") || strings.HasPrefix(metric, "after_last_s") || strings.HasPrefix(metric, "avg_s@"):
		return number(v) + " s"
	}
	return number(v)
}

func published(r Reference, metric string) string {
	if r.Text != "" {
		return r.Text
	}
	return figure(metric, r.Value)
}

// number prints a figure with about three significant digits.
func number(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1000:
		return fmt.Sprintf("%.0f", v)
	case a >= 100:
		return fmt.Sprintf("%.1f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3f", v)
}
