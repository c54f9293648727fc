package drill

import (
	"fmt"
	"time"

	"github.com/hadrill/hadrill/internal/consistency"
)

// Placed is a drill's first anomaly placed on its fault timeline.
type Placed struct {
	Type string `json:"type"`
	// AtS is when its earliest instance was complete, from the first
	// fault (negative: before it).
	AtS   float64   `json:"at_s"`
	At    time.Time `json:"at"`
	Where string    `json:"where"`
}

// placeFirst places the history's first anomaly (of the types the model
// forbids, when there are any; else of all found) on the drill's fault
// timeline: the history began at started, the first fault at faultAt, and
// a chaos drill's steps were applied as steps says. Nil when no anomaly
// has a time.
func placeFirst(res *consistency.Result, started, faultAt time.Time, steps []Applied) *Placed {
	if res == nil || faultAt.IsZero() {
		return nil
	}
	var first *consistency.Anomaly
	forbidden := len(res.Forbidden) > 0
	for i := range res.Anomalies {
		a := &res.Anomalies[i]
		if a.First == nil || (forbidden && !a.Forbidden) {
			continue
		}
		if first == nil || *a.First < *first.First {
			first = a
		}
	}
	if first == nil {
		return nil
	}
	when := started.Add(time.Duration(*first.First * 1e9))
	at := when.Sub(faultAt).Seconds()
	p := &Placed{Type: first.Type, AtS: at, At: when.UTC()}
	switch {
	case at < 0:
		p.Where = fmt.Sprintf("%.1f s before the first fault", -at)
	case len(steps) == 0:
		p.Where = fmt.Sprintf("%.1f s after the fault", at)
	default:
		p.Where = fmt.Sprintf("%.1f s after the last heal returned (step %d's)", at-steps[len(steps)-1].HealedS, steps[len(steps)-1].Step)
		for i, st := range steps {
			if at < st.AtS && i == 0 {
				p.Where = fmt.Sprintf("%.1f s before step 1 (%s) began", st.AtS-at, st.Says)
				break
			}
			if at < st.AtS { // between the heal before it and this step
				p.Where = fmt.Sprintf("%.1f s after step %d's heal returned, %.1f s before step %d (%s)", at-steps[i-1].HealedS, steps[i-1].Step, st.AtS-at, st.Step, st.Says)
				break
			}
			if at <= st.HealS {
				p.Where = fmt.Sprintf("during step %d (%s), %.1f s into its hold of %.1f s", st.Step, st.Says, at-st.AtS, st.HealS-st.AtS)
				break
			}
			if at <= st.HealedS {
				p.Where = fmt.Sprintf("while step %d's heal ran (%s), %.1f s after its hold ended", st.Step, st.Says, at-st.HealS)
				break
			}
		}
	}
	p.Where = fmt.Sprintf("first %s at %.1f s: %s", first.Type, at, p.Where)
	return p
}
