package report

import (
	"encoding/json"
	"fmt"
	"github.com/hadrill/hadrill/internal/words"
	"strings"

	"github.com/hadrill/hadrill/internal/results"
)

// Title is how the report names a run: what ran, on which lab (the run's
// id is shown beside it, never instead of it).
func (r Run) Title() string {
	if r.Part != nil {
		if t := r.Part.title(&r); t != "" {
			return t
		}
	}
	if p := r.param("workload"); p != "" {
		return fmt.Sprintf("%s %s, lab %s", r.Kind, p, r.Lab)
	}
	return fmt.Sprintf("%s, lab %s", r.Kind, r.Lab)
}

func (r Run) param(key string) string {
	var p map[string]any
	_ = json.Unmarshal([]byte(r.Params), &p)
	if v, ok := p[key]; ok && v != nil {
		return fmt.Sprint(v)
	}
	return ""
}

// Finding is what the report says first: per run what was found (its
// kind's finding: headline figures with their intervals, verdicts, the
// change against the first run of its kind), then whether it was
// interrupted and what makes it doubtful. Pure: computed from the runs
// alone.
func Finding(runs []Run) []string {
	var out []string
	first := map[results.Kind]*Run{}
	for i := range runs {
		r := &runs[i]
		base := first[r.Kind]
		if base == nil {
			first[r.Kind] = r
		}
		s := r.Part.finding(r, base)
		if r.Interrupted {
			s += " Interrupted: the results are partial."
		}
		if n := len(r.Warnings); n > 0 {
			s += fmt.Sprintf(" %s: %s.", words.Count(n, "warning"), strings.Join(r.Warnings, "; "))
		}
		out = append(out, s)
	}
	return out
}

func errorsNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", %d failed", n)
}
