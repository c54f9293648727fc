package study

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/stats"
	"github.com/hadrill/hadrill/internal/words"
)

// CampaignRun is one study run of a campaign: its id and its result;
// Judged says how its claims were judged when not as it stored them.
type CampaignRun struct {
	ID     string
	Res    *Result
	Judged string
}

// Rejudge judges each run's rounds by today's claims of its study (the
// embedded study of its name), as a resumed run does: the claims' words,
// bounds and form (a claim that something happens at all) may have
// changed since the run, its set-up may not — the study's variants, steps
// and scale, and the claims' figures (each claim's variant, step, metric
// and the variant it is compared with, in order, so that the run's
// two-look design still sizes each). A run whose study changed more, or
// is not embedded (a study file), keeps its verdicts, and says why.
func Rejudge(home string, runs []CampaignRun) []CampaignRun {
	out := slices.Clone(runs)
	for i := range out {
		r := &out[i]
		now, err := Embedded(r.Res.Study.Name)
		if err != nil {
			r.Judged = "its own verdicts: no embedded study of its name to judge it by today's claims"
			continue
		}
		if changed := studyChanged(r.Res.Study, now, r.Res.Scale); changed != "" {
			r.Judged = "its own verdicts: the study's " + changed + " changed since the run"
			continue
		}
		if !sameFigures(r.Res.Study.Expect, now.Expect) {
			r.Judged = "its own verdicts: the figures its claims are of changed since the run"
			continue
		}
		res := *r.Res
		res.Study = now
		judgeRounds(home, now, &res)
		r.Res, r.Judged = &res, "judged by today's claims"
	}
	return out
}

// sameFigures says whether two lists of claims are of the same figures,
// in the same order.
func sameFigures(a, b []Expect) bool {
	return slices.EqualFunc(a, b, func(x, y Expect) bool {
		return x.Variant == y.Variant && x.Step == y.Step && x.Metric == y.Metric && x.Than == y.Than
	})
}

// Campaign is what a campaign of studies found, counted over every claim
// of its runs (one run a study): how many reproduced, did not, stayed
// inconclusive or were not measured, of the claims that count, and each
// study's claims in one line each. A reviewer reads its headline first.
type Campaign struct {
	Headline string         `json:"headline"`
	Scales   []string       `json:"scales"`
	Studies  int            `json:"studies"`
	Stopped  []string       `json:"stopped,omitempty"`      // studies whose run stopped before its end
	Figures  []string       `json:"figures_only,omitempty"` // studies with no claim
	Claims   int            `json:"claims"`                 // the claims that count
	Verdicts map[string]int `json:"verdicts"`               // every claim's, those that count for nothing too
	// InconclusiveShare is the share of the claims that count still
	// inconclusive (0 when none count).
	InconclusiveShare float64 `json:"inconclusive_share"`
	// Needs are the rounds each inconclusive claim would need to decide
	// (its design's, where it said), and Had the rounds they had, both in
	// ascending order.
	Needs []int         `json:"needs_rounds,omitempty"`
	Had   []int         `json:"had_rounds,omitempty"`
	Runs  []CampaignOne `json:"runs"`
}

// CampaignOne is one study's run in a campaign.
type CampaignOne struct {
	Study   string  `json:"study"`
	Run     string  `json:"run"`
	Scale   string  `json:"scale"`
	Rounds  int     `json:"rounds"`
	Answer  string  `json:"answer"`
	Stopped string  `json:"stopped,omitempty"` // "interrupted", or the step that failed twice
	Judged  string  `json:"judged,omitempty"`  // how its claims were judged when not as it stored them (Rejudge)
	Checks  []Check `json:"checks,omitempty"`
	lines   []string
}

// NewCampaign counts the claims of runs (one a study), in the studies'
// name order.
func NewCampaign(runs []CampaignRun) *Campaign {
	c := &Campaign{Verdicts: map[string]int{}}
	runs = slices.Clone(runs)
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].Res.Study.Name < runs[j].Res.Study.Name })
	inconclusive := 0
	for _, r := range runs {
		res := r.Res
		one := CampaignOne{Study: res.Study.Name, Run: r.ID, Scale: res.Scale, Rounds: res.Rounds, Answer: Answer(res.Checks), Judged: r.Judged, Checks: res.Checks}
		switch {
		case res.Failed != "":
			one.Stopped = "a step failed twice: " + firstLine(res.Failed)
		case res.Interrupted:
			one.Stopped = "interrupted"
		}
		if one.Stopped != "" {
			c.Stopped = append(c.Stopped, one.Study)
		}
		if len(res.Checks) == 0 {
			c.Figures = append(c.Figures, one.Study)
		}
		titles := map[string]string{}
		for _, v := range res.Study.Variants {
			titles[v.Name] = v.Title()
		}
		twice := sameFigure(res.Checks)
		for _, ch := range res.Checks {
			c.Verdicts[ch.Verdict]++
			if ch.Counts() {
				c.Claims++
				if ch.Verdict == Inconclusive {
					inconclusive++
					if ch.Needs > ch.Rounds {
						c.Needs, c.Had = append(c.Needs, ch.Needs), append(c.Had, ch.Rounds)
					}
				}
			}
			one.lines = append(one.lines, fmt.Sprintf("%s %s: %s", mark[ch.Verdict], ch.Outcome(), claimLine(ch, titles, one.Stopped != "", twice[figureOf(ch)])))
		}
		if !slices.Contains(c.Scales, res.Scale) {
			c.Scales = append(c.Scales, res.Scale)
		}
		c.Runs = append(c.Runs, one)
	}
	slices.Sort(c.Needs)
	slices.Sort(c.Had)
	c.Studies = len(runs)
	if c.Claims > 0 {
		c.InconclusiveShare = float64(inconclusive) / float64(c.Claims)
	}
	c.Headline = c.headline()
	return c
}

// headline says the campaign in one sentence: its studies, the claims
// that count and how they came out, the share still inconclusive.
func (c *Campaign) headline() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s at %s scale", words.Count(c.Studies, "study"), words.And(c.Scales))
	if len(c.Stopped) > 0 {
		fmt.Fprintf(&b, " (%d stopped before their end: %s)", len(c.Stopped), strings.Join(c.Stopped, ", "))
	}
	if c.Claims == 0 {
		b.WriteString(": no claim that counts")
	} else {
		var parts []string
		for _, v := range []string{Reproduced, NotReproduced, Inconclusive, NotMeasured} {
			if n := c.Verdicts[v]; n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", n, strings.ReplaceAll(v, "_", " ")))
			}
		}
		fmt.Fprintf(&b, ": of their %s that count, %s; %.0f %% still inconclusive", words.Count(c.Claims, "claim"), strings.Join(parts, ", "), 100*c.InconclusiveShare)
	}
	var nothing []string
	for _, v := range []struct{ verdict, said string }{{NotCheckable, "not checkable here"}, {OtherScale, "measured at the other scale only"}, {NotRun, "not run (--variants)"}} {
		if n := c.Verdicts[v.verdict]; n > 0 {
			nothing = append(nothing, fmt.Sprintf("%d %s", n, v.said))
		}
	}
	if len(nothing) > 0 {
		n := c.Verdicts[NotCheckable] + c.Verdicts[OtherScale] + c.Verdicts[NotRun]
		fmt.Fprintf(&b, "; %d more %s for nothing (%s)", n, words.Noun(n, "claim")+map[bool]string{true: " counts", false: " count"}[n == 1], strings.Join(nothing, ", "))
	}
	if len(c.Figures) > 0 {
		fmt.Fprintf(&b, "; %s of figures only (no claim)", words.Count(len(c.Figures), "study"))
	}
	return b.String()
}

// Text is the campaign for a reader: the headline, then each study with a
// claim, its answer and its claims one a line (the verdict, ours with its
// interval against the claim's bounds, the claim's words shortened, the
// one reason it did not reproduce), then the studies of figures only.
func (c *Campaign) Text() string {
	var b strings.Builder
	b.WriteString(c.Headline + ".\n")
	switch n := len(c.Needs); {
	case n == 1:
		fmt.Fprintf(&b, "The inconclusive claim its design sized would need %s rounds to decide; it had %s.\n", span(c.Needs), span(c.Had))
	case n > 1:
		fmt.Fprintf(&b, "The %d inconclusive claims their designs sized would need %s rounds each to decide (median %s); they had %s.\n",
			n, span(c.Needs), words.Thousands(int64(math.Round(stats.Median(floats(c.Needs))))), span(c.Had))
	}
	for _, r := range c.Runs {
		if len(r.Checks) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n%s (run %s, %s scale, %s): %s", r.Study, r.Run, r.Scale, words.Count(r.Rounds, "round"), r.Answer)
		if r.Stopped != "" {
			fmt.Fprintf(&b, " (stopped before its end: %s)", r.Stopped)
		}
		if r.Judged != "" {
			fmt.Fprintf(&b, " (%s)", r.Judged)
		}
		b.WriteString(".\n")
		for _, l := range r.lines {
			b.WriteString("  " + l + "\n")
		}
	}
	if len(c.Figures) > 0 {
		var figs []string
		for _, r := range c.Runs {
			if len(r.Checks) == 0 {
				figs = append(figs, fmt.Sprintf("%s (run %s)", r.Study, r.Run))
			}
		}
		fmt.Fprintf(&b, "\nFigures only, no claim to check: %s.\n", strings.Join(figs, ", "))
	}
	return b.String()
}

// CampaignRuns are the runs a campaign counts: the named ones (every
// problem with them at once: an unknown id, a run not a study's, two runs
// of one study), or, with none named, the newest run of each study at
// scale in home's run store that ran to its end (else its newest, counted
// as stopped).
func CampaignRuns(home string, ids []string, scale string) ([]CampaignRun, error) {
	var problems []string
	var out []CampaignRun
	if len(ids) > 0 {
		of := map[string]string{} // study -> the run named for it
		for _, id := range ids {
			_, res, err := LoadRun(home, id)
			if err != nil {
				msg := strings.TrimPrefix(err.Error(), "RUN_ID: ")
				problems = append(problems, strings.TrimPrefix(msg, "RUN: "))
				continue
			}
			if first, ok := of[res.Study.Name]; ok && first == id {
				problems = append(problems, fmt.Sprintf("%s: named twice", id))
				continue
			} else if ok {
				problems = append(problems, fmt.Sprintf("%s: a second run of study %s (%s is one): a campaign counts each study once", id, res.Study.Name, first))
				continue
			}
			of[res.Study.Name] = id
			out = append(out, CampaignRun{ID: id, Res: res})
		}
		if len(problems) > 0 {
			for i, p := range problems {
				problems[i] = "RUN: " + p
			}
			return nil, hderr.Users(problems)
		}
		return out, nil
	}
	newest := map[string]CampaignRun{}
	for _, id := range results.List(home) { // oldest first: a later run of a study replaces the earlier
		r, err := results.Load(home, id)
		if err != nil || r.Kind != Kind {
			continue
		}
		var res Result
		if json.Unmarshal(r.Results, &res) != nil || res.Study == nil || res.Scale != scale {
			continue
		}
		if had, ok := newest[res.Study.Name]; ok && !had.Res.Interrupted && res.Interrupted { // a run a step stopped is interrupted too
			continue // a complete run outranks a later one that stopped
		}
		newest[res.Study.Name] = CampaignRun{ID: id, Res: &res}
	}
	if len(newest) == 0 {
		return nil, hderr.User("no study run at %s scale in %s (`make studies` or `hadrill study run` make them; RUN ids name others)", scale, results.Dir(home))
	}
	for _, r := range newest {
		out = append(out, r)
	}
	return out, nil
}

// span is an ascending list's range in words ("112", "66 to 10,926").
func span(v []int) string {
	lo, hi := words.Thousands(int64(v[0])), words.Thousands(int64(v[len(v)-1]))
	if lo == hi {
		return lo
	}
	return lo + " to " + hi
}

func floats(v []int) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}
