package study

import (
	"cmp"
	"fmt"
	"github.com/hadrill/hadrill/internal/words"
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

// Verdicts of a check.
const (
	Reproduced    = "reproduced"     // the interval of our figure lies within the claim's bounds
	NotReproduced = "not_reproduced" // it lies wholly outside them
	Inconclusive  = "inconclusive"   // it crosses a bound (or one round: no interval): noise cannot tell
	NotMeasured   = "not_measured"   // a variant or step did not run
	NotRun        = "not_run"        // --variants left out its variant (or the one it is compared with)
	NotCheckable  = "not_checkable"  // this computer cannot build the set-up that decides it (Expect.NotCheckable says why)
	OtherScale    = "other_scale"    // a claim measured at one scale only (Expect.Scale), the run at the other
)

// printed is the cell's published figure when the document prints it
// (an inferred one is never drawn as published).
func (c Cell) printed() *Reference {
	if c.Published == nil || c.Published.Inferred {
		return nil
	}
	return c.Published
}

// Check is one of the document's claims against what was measured: the
// claim's figure (a mean, or a ratio of two variants' means) with its 90 %
// interval (Ours), and the verdict: reproduced when the whole interval is
// within the claim's bounds, not reproduced when it is wholly outside,
// inconclusive when it crosses a bound. Each bound is so a one-sided test
// at stats.Alpha: a claim holds on noise alone at most 5 % of the time.
type Check struct {
	Expect
	// Published is the document's figure for the claim's variant, as
	// printed (or marked inferred).
	Published string         `json:"published,omitempty"`
	Ours      stats.Estimate `json:"ours"`
	// Median is the variant's median, or the ratio of the two medians.
	Median float64 `json:"median"`
	// Events and Hours: a rate's events and hours over every round
	// (IsRate), what its interval is of; for a share (IsShare), Events of
	// Trials; for a claim that something never happens (IsNever), or that
	// it happens (IsEver), the
	// rounds that counted one (Events) of those that measured it (Trials).
	Events  int     `json:"events,omitempty"`
	Hours   float64 `json:"hours,omitempty"`
	Trials  int     `json:"trials,omitempty"`
	Verdict string  `json:"verdict"`
	// Measured are the run's per-host measurements that bear on the claim
	// (a disk at its cap, a host at its CPU quota), said when it does not
	// reproduce.
	Measured []string `json:"measured,omitempty"`
	// LeftOut are the check's variants --variants left out (not run).
	LeftOut []string `json:"left_out,omitempty"`
	// Rounds is how many rounds a two-look design judged it over, and
	// Needs, when it stayed inconclusive, the rounds it would need (Design).
	Rounds int `json:"rounds,omitempty"`
	Needs  int `json:"needs_rounds,omitempty"`
	// Look is which of a design's looks judged it (LookPilot: the pilot's
	// rounds alone, at its own level; LookFinal: every round).
	Look string `json:"look,omitempty"`
}

// Counts says whether a check counts for or against its study (one not
// run, not checkable here or of the other scale counts for nothing).
func (c Check) Counts() bool {
	return c.Verdict != NotRun && c.Verdict != NotCheckable && c.Verdict != OtherScale
}

// Outcome is a check's verdict in words.
func (c Check) Outcome() string { return strings.ReplaceAll(c.Verdict, "_", " ") }

// judge places an estimate against the claim's bounds (a claim not
// checkable here is not judged).
func judge(e stats.Estimate, x Expect) string {
	if x.NotCheckable != "" {
		return NotCheckable
	}
	switch e.Against(x.Min, x.Max) {
	case stats.Inside:
		return Reproduced
	case stats.Outside:
		return NotReproduced
	}
	return Inconclusive
}

// Bounds says a claim's bounds ("at least 1.05×", "from 90 to 130 ms").
func (x Expect) Bounds() string {
	f := func(v float64) string {
		if x.Than != "" {
			return number(v) + "×"
		}
		return figure(x.Metric, v)
	}
	switch {
	case x.Min != nil && x.Max != nil:
		return fmt.Sprintf("from %s to %s", f(*x.Min), f(*x.Max))
	case x.Min != nil:
		return "at least " + f(*x.Min)
	case x.Max != nil:
		return "at most " + f(*x.Max)
	}
	return "unbounded"
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
		ch := Check{Expect: e, Verdict: NotMeasured}
		for _, v := range []string{e.Variant, e.Than} {
			if v != "" && !slices.Contains(variants, v) {
				ch.Verdict, ch.LeftOut = NotRun, append(ch.LeftOut, v)
			}
		}
		if ch.Verdict == NotRun {
			checks = append(checks, ch)
			continue
		}
		if st, ok := s.step(e.Step); e.Scale != "" && ok && !slices.Contains(s.metrics(st, sc), e.Metric) {
			ch.Verdict = OtherScale
			checks = append(checks, ch)
			continue
		}
		// the document's figures behind the claim: the variant's, and for a
		// ratio the other's beside it
		texts := map[string]string{}
		for _, r := range s.Reference {
			if r.Step == e.Step && r.Metric == e.Metric {
				texts[r.Variant] = published(r, r.Metric)
			}
		}
		ch.Published = texts[e.Variant]
		if e.Than != "" && (texts[e.Variant] != "" || texts[e.Than] != "") {
			ch.Published = cmp.Or(texts[e.Variant], "not printed") + " against " + cmp.Or(texts[e.Than], "not printed")
		}
		c, ok := cell(e.Variant, e.Step, e.Metric)
		if ok && (IsNever(e) || IsEver(e)) {
			k, n := roundsWith(samples, e)
			ch.Median, ch.Ours, ch.Events, ch.Trials = c.Median, stats.Estimate{Value: c.Mean, Lo: c.Mean, Hi: c.Mean}, k, n
			ch.Verdict = witnessed(k, e)
		} else if e.Than == "" && ok && IsRate(e.Metric) {
			events, hours := exposed(samples, e.Variant, e.Step, e.Metric)
			ch.Median, ch.Ours, ch.Events, ch.Hours = c.Median, stats.RateEstimate(events, hours), events, hours
			ch.Verdict = judge(ch.Ours, e)
		} else if ok && IsShare(e) {
			k, n := shareOf(samples, e.Variant, e.Step, e.Metric)
			ch.Median, ch.Ours, ch.Events, ch.Trials = c.Median, stats.ShareEstimate(k, n), k, n
			ch.Verdict = judge(ch.Ours, e)
		} else if e.Than == "" && ok {
			ch.Median, ch.Ours = c.Median, stats.MeanEstimate(c.Spread)
			ch.Verdict = judge(ch.Ours, e)
		} else if other, found := cell(e.Than, e.Step, e.Metric); ok && found && other.Mean != 0 && other.Median != 0 {
			ch.Median, ch.Ours = c.Median/other.Median, stats.RatioEstimate(c.Spread, other.Spread)
			ch.Verdict = judge(ch.Ours, e)
		}
		checks = append(checks, ch)
	}
	return cells, checks
}

// A rate metric (…_per_h) is events an hour of a step's exposure: each
// round's rate with, beside it, its hours (Exposure). A claim on a rate is
// judged on the events and hours of every round together, with Garwood's
// exact Poisson interval (stats.RateEstimate), not a mean over rounds: no
// event in a few minutes is then a bound, not a rate of 0.
const (
	RateSuffix = "_per_h"
	Exposure   = "faults_h"
)

// IsRate reports whether metric is a rate an hour of exposure.
func IsRate(metric string) bool { return strings.HasSuffix(metric, RateSuffix) }

// IsNever reports whether a claim says something never happens: a bound
// of at most 0 on a figure of its own (acknowledged writes lost, rows that
// diverged, new connections on a donor). Such a claim is universal: one
// round that counts one refutes it, however many went without, at any
// look (not reproduced); rounds without one reproduce it as the document
// saw it, and say how many they were and the share of rounds with one
// that so few cannot exclude. An interval over rounds that were all 0 is a
// point, and one lost write among three rounds an interval reaching 0:
// neither is the claim's test.
func IsNever(e Expect) bool {
	return e.Than == "" && e.Min == nil && e.Max != nil && *e.Max == 0
}

// IsEver reports whether a claim says something happens at all
// (happens: true): a bound of at least 1 on a count of anomalies a history
// check witnesses (lost updates, stale reads, a wrong bank total:
// witnessMetrics). Such a claim
// is existential: one round that counts one reproduces it, at any look —
// each anomaly counted is a transaction history the checker found, a
// counterexample, not a sample of noise —, and rounds without one do not
// reproduce it, saying how many they were and the share of rounds with one
// that they exclude. A mean over rounds (1, 3 and 4 lost updates: its
// interval reaches below 1) is not the claim's test.
func IsEver(e Expect) bool {
	return e.Happens && e.Than == "" && e.Max == nil && e.Min != nil && *e.Min == 1 && slices.Contains(witnessMetrics, e.Metric)
}

// witnessMetrics are the counts of anomalies a history check finds, each
// with the transactions that show it (workload.HistoryFigures' counted
// figures, and a drill's history figures).
var witnessMetrics = []string{"lost_updates", "stale_reads", "realtime_cycles", "lost_appends", "cycles", "long_forks",
	"wrong_totals", "negative_values", "lost_elements", "stale_elements"}

// witnessed is the verdict of a claim that something never happens, or
// that it happens, from its rounds that counted one.
func witnessed(k int, e Expect) string {
	switch {
	case e.NotCheckable != "":
		return NotCheckable
	case (k > 0) == IsEver(e):
		return Reproduced
	}
	return NotReproduced
}

// roundsWith is a never- or ever-claim's rounds that counted one (for a
// never-claim a value above 0; for an ever-claim one of at least its bound,
// 1) and its rounds.
func roundsWith(samples []Sample, e Expect) (k, n int) {
	for _, x := range samples {
		if x.Variant == e.Variant && x.Step == e.Step && x.Metric == e.Metric {
			n++
			if x.Value > 0 && (!IsEver(e) || x.Value >= *e.Min) {
				k++
			}
		}
	}
	return k, n
}

// neverSaid is a never-claim's rounds in words: the ones that refuted it,
// or how many went without and the share of rounds with one that they
// cannot exclude (Clopper–Pearson's upper bound at stats.Alpha); an
// ever-claim's: the ones that witnessed it, or how many went without and
// the share of rounds with one above which they exclude.
func neverSaid(c Check) string {
	if IsEver(c.Expect) {
		if c.Events > 0 {
			return fmt.Sprintf("%d of %d rounds counted one: one witnessed reproduces a claim that it happens", c.Events, c.Trials)
		}
		return fmt.Sprintf("none in %d rounds (one would reproduce it): it was not seen here; so many exclude one in more than %s of rounds", c.Trials, number(stats.ShareEstimate(0, c.Trials).Hi))
	}
	if c.Events > 0 {
		return fmt.Sprintf("%d of %d rounds counted one: one refutes a claim that it never happens", c.Events, c.Trials)
	}
	return fmt.Sprintf("none in %d rounds (one would refute it); so few cannot exclude one in up to %s of rounds", c.Trials, number(stats.ShareEstimate(0, c.Trials).Hi))
}

// Shares: a drill's outcome, 1 or 0 a round (passed, lost_any). A claim
// on a share is judged on how many of the rounds went that way, with the
// Clopper–Pearson exact interval (stats.ShareEstimate), not a t-interval
// over the 0s and 1s: none of three drills losing anything is then a share
// of up to 0.63, not a share of 0.
var shareMetrics = []string{"passed", "lost_any"}

// IsShare reports whether a claim is on a share of drills (one that it
// never happens is IsNever's).
func IsShare(e Expect) bool {
	return e.Than == "" && slices.Contains(shareMetrics, e.Metric) && !IsNever(e)
}

// shareOf is a share metric's rounds that went that way (a value of 1)
// and its rounds.
func shareOf(samples []Sample, variant, step, metric string) (k, n int) {
	for _, x := range samples {
		if x.Variant == variant && x.Step == step && x.Metric == metric {
			n++
			if x.Value >= 0.5 {
				k++
			}
		}
	}
	return k, n
}

// exposed is a rate metric's events (each round's rate times its hours,
// rounded) and hours, over the rounds that measured both.
func exposed(samples []Sample, variant, step, metric string) (int, float64) {
	rates, hours := map[int]float64{}, map[int]float64{}
	for _, x := range samples {
		if x.Variant != variant || x.Step != step {
			continue
		}
		switch x.Metric {
		case metric:
			rates[x.Round] = x.Value
		case Exposure:
			hours[x.Round] = x.Value
		}
	}
	events, total := 0, 0.0
	for r, rate := range rates {
		if h, ok := hours[r]; ok && h > 0 {
			events += int(math.Round(rate * h))
			total += h
		}
	}
	return events, total
}

// Tally counts checks by verdict.
func Tally(checks []Check) map[string]int {
	n := map[string]int{}
	for _, c := range checks {
		n[c.Verdict]++
	}
	return n
}

// Answer is a study's verdict in one phrase, first in its finding: every
// claim reproduced, or how many were not and could not be told.
func Answer(checks []Check) string {
	n, total := Tally(checks), 0
	for _, c := range checks {
		if c.Counts() {
			total++
		}
	}
	var others []string
	if n[NotRun] > 0 {
		others = append(others, fmt.Sprintf("%d more not run: --variants left out their variants", n[NotRun]))
	}
	if n[NotCheckable] > 0 {
		others = append(others, fmt.Sprintf("%d more not checkable here, each saying why", n[NotCheckable]))
	}
	if n[OtherScale] > 0 {
		others = append(others, fmt.Sprintf("%d more measured at the other scale only", n[OtherScale]))
	}
	left := ""
	if len(others) > 0 {
		left = "; " + strings.Join(others, "; ")
	}
	switch {
	case len(checks) == 0:
		return "No claim of the document to check (figures only; a study checks a claim with expect: its words, place and bounds)"
	case total == 0 && n[NotCheckable] == 0 && n[OtherScale] == 0:
		return fmt.Sprintf("No claim checked: --variants left out the variants of all %d", n[NotRun])
	case total == 0:
		return "No claim checked" + left
	case n[Reproduced] == total:
		return fmt.Sprintf("Reproduced: all %d of the document's claims checked hold%s", total, left)
	}
	var parts []string
	for _, v := range []string{NotReproduced, Inconclusive, NotMeasured} {
		if n[v] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[v], strings.ReplaceAll(v, "_", " ")))
		}
	}
	head := "Not reproduced"
	if n[NotReproduced] == 0 {
		head = "Not established"
	}
	return fmt.Sprintf("%s: %d of the document's %d claims checked hold; %s%s", head, n[Reproduced], total, strings.Join(parts, ", "), left)
}

// PerDollar is the metric of throughput per dollar an hour: a sysbench
// step's TPS divided by the variant's hourly price (document 004's price
// per performance, the other way up: more is better).
const PerDollar = "tps_per_dollar"

// metrics are a step's figures at a scale, with TPS per dollar when a
// variant is priced.
func (s *Study) metrics(st Step, sc Scale) []string {
	out := st.Metrics(sc)
	if k := kindOf(st); k == nil || !k.priced || !slices.ContainsFunc(s.Variants, func(v Variant) bool { _, ok := v.HourlyPrice(); return ok }) {
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
		strings.HasPrefix(metric, "avg_s@") || strings.HasPrefix(metric, PerDollar+"@") || strings.HasPrefix(metric, "tpmc@")
}

// Finding is what a study run says first, computed from its cells and
// checks, to be read in ten seconds: one headline (every claim reproduced,
// or how many were not), then one line per claim (its verdict, our figure
// with its interval against the claim's bounds and the published figure,
// its words shortened, and the one reason it did not reproduce); then the
// deviations by name, how the rounds ran, and each step's main figure per
// variant. The claims' full words and places are in the report's table.
func Finding(res *Result) string {
	s := res.Study
	var b strings.Builder
	head := Answer(res.Checks)
	switch {
	case res.Failed != "":
		head = "Stopped by a step that failed twice (" + firstLine(res.Failed) + "); what was measured: " + lowerFirst(head)
	case res.Interrupted:
		head += " (interrupted: what was measured)"
	}
	b.WriteString(head + ".\n")
	titles := map[string]string{}
	for _, v := range s.Variants {
		titles[v.Name] = v.Title()
	}
	if len(res.Checks) > 0 {
		fmt.Fprintf(&b, "\nEach claim: ours with its %.0f %% interval; the claim's bounds; the document's figure; its words (in full in the report); the reason, where it did not reproduce.\n", 100*stats.Level)
	}
	twice := sameFigure(res.Checks)
	for _, c := range res.Checks {
		fmt.Fprintf(&b, "%s %s: %s\n", mark[c.Verdict], c.Outcome(), claimLine(c, titles, res.Failed != "" || res.Interrupted, twice[figureOf(c)]))
	}
	b.WriteString("\n")
	if devs := res.AllDeviations(); len(devs) > 0 {
		var what []string
		recorded := 0
		for _, d := range devs {
			what = append(what, d.What+" ("+d.Here+")")
			if d.Recorded {
				recorded++
			}
		}
		fmt.Fprintf(&b, "Deviations from the document (%d, %d recorded by the run): %s.\n", len(devs), recorded, strings.Join(what, "; "))
	}
	fmt.Fprintf(&b, "Rounds: %s, %s scale, %d round(s) of every variant interleaved", s.Title, res.Scale, res.Rounds)
	if g := groupsSaid(res.Groups, pairsOf(s), func(v string) string { return variant(s, v).Title() }); g != "" {
		b.WriteString(" within its group; " + g)
	}
	if res.Design != nil {
		b.WriteString("; they followed a " + res.Design.Says() + "; " + res.Design.Judged())
	}
	b.WriteString(".\n")
	if len(res.Retried) > 0 {
		fmt.Fprintf(&b, "Retried: %d step(s) failed once and were run again (%s).\n", len(res.Retried), strings.Join(res.Retried, "; "))
	}
	if res.Inventory != "" {
		b.WriteString("Hosts: " + hostsNote(s, res.Variants, res.Inventory) + "\n")
	}
	for _, st := range s.Steps {
		for _, metric := range metricsIn(res.Cells, st.Name) {
			if !primary(metric) {
				continue
			}
			var parts []string
			for _, c := range res.Cells {
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
					label := map[bool]string{false: "published", true: "not printed,"}[c.Published.Inferred]
					p += "; " + label + " " + published(*c.Published, metric)
				}
				parts = append(parts, p)
			}
			if len(parts) > 0 {
				fmt.Fprintf(&b, "%s: %s.\n", describe(st, metric), strings.Join(parts, "; "))
			}
		}
	}
	return strings.TrimSpace(b.String())
}

// mark is a verdict's sign at the start of its line.
var mark = map[string]string{Reproduced: "✔", NotReproduced: "✘", Inconclusive: "?", NotMeasured: "–", NotRun: "·", NotCheckable: "⊘", OtherScale: "·"}

// claimLine is a check in one line: our figure and its interval against
// the claim's bounds (and the published figure), the claim's words
// shortened, and the one reason it did not reproduce.
func claimLine(c Check, titles map[string]string, stopped, withStep bool) string {
	said := fmt.Sprintf("%q", shorten(c.Claim, 60))
	switch c.Verdict {
	case NotRun:
		return fmt.Sprintf("%s — --variants left out %s", said, words.And(c.LeftOut))
	case OtherScale:
		return fmt.Sprintf("%s — measured at %s scale only (%s)", said, c.Scale, c.Metric)
	case NotMeasured:
		why := "the run yielded no figure for it (a sysbench point whose clients all failed is left out)"
		if stopped {
			why = "the study stopped before it was measured"
		}
		return fmt.Sprintf("%s %s: %s — %s", titles[c.Variant], c.Step, said, why)
	}
	line := fmt.Sprintf("%s; claim %s", ours(c, titles), c.Bounds())
	if withStep { // another claim is of the same figure in another step: the step tells them apart
		line = c.Step + ", " + line
	}
	if c.Look == LookPilot {
		line += fmt.Sprintf(" (decided by the pilot's %d rounds)", c.Rounds)
	}
	if c.Inferred {
		line += " (read from its words)"
	}
	if c.Published != "" && !strings.Contains(c.Published, "(inferred)") {
		line += "; published " + c.Published
	}
	line += ": " + said
	if reason := reasonOf(c); reason != "" {
		line += " — " + shorten(reason, 120)
	}
	return line
}

// figureOf is what a claim's figure is of, steps aside: its variant, its
// metric and the variant it is compared with.
func figureOf(c Check) string { return c.Variant + "\x00" + c.Metric + "\x00" + c.Than }

// sameFigure are the figures claims of more than one step are of (a
// kill's and a cut-off's share of drills that lost a write): their lines
// name the step.
func sameFigure(checks []Check) map[string]bool {
	steps := map[string]map[string]bool{}
	for _, c := range checks {
		if steps[figureOf(c)] == nil {
			steps[figureOf(c)] = map[string]bool{}
		}
		steps[figureOf(c)][c.Step] = true
	}
	out := map[string]bool{}
	for k, v := range steps {
		if len(v) > 1 {
			out[k] = true
		}
	}
	return out
}

// more says what would decide an inconclusive check: the rounds its
// design asked for, else what.
func more(c Check, what string) string {
	if c.Needs > c.Rounds {
		return fmt.Sprintf("about %d rounds would decide it (it had %d)", c.Needs, c.Rounds)
	}
	return what
}

// reasonOf is the one reason a check did not reproduce ("" when it did):
// for an inconclusive one, what would decide it; else what differs from
// the document, or what the run measured at a limit.
func reasonOf(c Check) string {
	if (IsNever(c.Expect) || IsEver(c.Expect)) && c.Trials > 0 && (c.Verdict == Reproduced || c.Verdict == NotReproduced) {
		return neverSaid(c)
	}
	switch c.Verdict {
	case Reproduced:
		return ""
	case NotCheckable:
		return "not checkable here: " + c.NotCheckable
	case Inconclusive:
		switch {
		case c.Hours > 0:
			return fmt.Sprintf("%d in %.3g hours: the rate may be anywhere from %s to %s an hour (Garwood's interval); %s", c.Events, c.Hours, number(c.Ours.Lo), number(c.Ours.Hi), more(c, "more hours would tell"))
		case c.Trials > 0:
			return fmt.Sprintf("%d of %d: the share may be anywhere from %s to %s (an exact binomial interval); %s", c.Events, c.Trials, number(c.Ours.Lo), number(c.Ours.Hi), more(c, "more rounds would tell"))
		case !c.Ours.Known:
			return "one round gives no interval: noise cannot be told apart"
		case c.Ours.Unbounded:
			return "the ratio's interval is unbounded: the other variant's figure is not told apart from 0"
		case c.Needs > c.Rounds:
			return fmt.Sprintf("the interval crosses a bound; about %d rounds would decide it (it had %d)", c.Needs, c.Rounds)
		}
		return "the interval crosses a bound: the rounds cannot tell the difference from noise"
	}
	if c.Differs != "" {
		return "what differs: " + firstSentence(c.Differs)
	}
	if len(c.Measured) > 0 {
		return "measured: " + c.Measured[0]
	}
	return ""
}

// shorten cuts words to about n characters at a word's end, with "…".
func shorten(words string, n int) string {
	words = strings.Join(strings.Fields(words), " ")
	if len([]rune(words)) <= n {
		return words
	}
	r := []rune(words)[:n]
	if i := strings.LastIndexByte(string(r), ' '); i > n/2 {
		return strings.TrimRight(string(r)[:i], ",;:") + "…"
	}
	return string(r) + "…"
}

// firstSentence is a text's first sentence, without its full stop.
func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, ". "); i > 0 {
		s = s[:i]
	}
	return strings.TrimSuffix(s, ".")
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// ours says a check's figure in short: the variant's mean, or its ratio
// to the other's, with its interval.
func ours(c Check, titles map[string]string) string {
	what := fmt.Sprintf("%s: %s %s", c.Metric, titles[c.Variant], figure(c.Metric, c.Ours.Value))
	if c.Than != "" {
		what = fmt.Sprintf("%s: %s %s× %s", c.Metric, titles[c.Variant], number(c.Ours.Value), titles[c.Than])
	}
	switch {
	case (IsNever(c.Expect) || IsEver(c.Expect)) && c.Trials > 0 && !c.Ours.Known: // judged by the rounds that counted one, not by an interval
		what += fmt.Sprintf(" (a mean over %d rounds)", c.Trials)
	case c.Ours.Unbounded:
		what += " (interval unbounded)"
	case c.Ours.Known && c.Ours.Level > 0 && math.Abs(c.Ours.Level-stats.Level) > 1e-9: // a design's look
		what += fmt.Sprintf(" (%s–%s, %s %% interval)", number(c.Ours.Lo), number(c.Ours.Hi), trimPercent(c.Ours.Level))
	case c.Ours.Known:
		what += fmt.Sprintf(" (%s–%s)", number(c.Ours.Lo), number(c.Ours.Hi))
	default:
		what += " (one round)"
	}
	return what
}

// change says a delta: in percent, or as a factor when the figure is
// more than double or less than half the baseline's.
func change(d stats.Delta, base string) string {
	if d.ZeroBase {
		return fmt.Sprintf("%s has 0: no ratio", base)
	}
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
	if k := kindOf(st); k != nil {
		return k.describe(st, metric)
	}
	return metric
}

func figure(metric string, v float64) string {
	switch {
	case strings.HasSuffix(metric, "_ms") || strings.Contains(metric, "_ms@"):
		return number(v) + " ms"
	case strings.HasPrefix(metric, PerDollar):
		return number(v) + " TPS per $/h"
	case strings.HasPrefix(metric, "tpmc"):
		return number(v) + " tpmC"
	case strings.HasPrefix(metric, "tps"):
		return number(v) + " TPS"
	case metric == "seconds" || metric == "settle_s" || strings.HasPrefix(metric, "visible_s") || strings.HasPrefix(metric, "after_last_s") || strings.HasPrefix(metric, "avg_s@"):
		return number(v) + " s"
	}
	return number(v)
}

func published(r Reference, metric string) string {
	t := r.Text
	if t == "" {
		t = figure(metric, r.Value)
	}
	if r.Inferred {
		return t + " (inferred)"
	}
	return t
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

// Unreproduced is a study that ran to the end with claims that did not
// reproduce or could not be told from noise: a result, not a failure
// (the command's exit status 4).
type Unreproduced struct {
	Study, RunID string
	Checks       []Check
}

func (e *Unreproduced) Error() string {
	return fmt.Sprintf("study %s: %s (run %s)", e.Study, Answer(e.Checks), e.RunID)
}

// Verdict is nil when every claim of a completed study reproduced (or was
// not run, or is not checkable here); an error (exit 1) when a claim
// could not be measured though no step failed (a sysbench point whose
// clients all failed is left out); else an *Unreproduced.
func Verdict(res *Result, runID string) error {
	n := Tally(res.Checks)
	if !slices.ContainsFunc(res.Checks, func(c Check) bool { return c.Counts() && c.Verdict != Reproduced }) {
		return nil
	}
	if n[NotMeasured] > 0 {
		return fmt.Errorf("study %s: %d claim(s) not measured: the run yielded no figure for them though no step failed (see run %s)", res.Study.Name, n[NotMeasured], runID)
	}
	return &Unreproduced{Study: res.Study.Name, RunID: runID, Checks: res.Checks}
}
