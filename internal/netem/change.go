package netem

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/spec"
)

// Change is a `fault delay|loss|reorder|duplicate|corrupt|bandwidth LINK VALUE` request.
type Change struct {
	Verb   fault.Kind // fault.Delay, fault.Loss, fault.Reorder, fault.Duplicate, fault.Corrupt or fault.Bandwidth
	Link   string
	Value  string
	Jitter string // delay only, optional
}

// Apply returns the links with the change made, or a user error naming
// every problem (unknown link, a value out of range).
func Apply(links []Link, c Change) ([]Link, error) {
	var problems []string
	i, err := Find(links, c.Link)
	if err != nil {
		problems = append(problems, err.Error())
	}
	k := Link{}
	if err == nil {
		k = links[i]
	}
	switch c.Verb {
	case fault.Delay:
		d, perr := parseDelay(c.Value)
		if perr != "" {
			problems = append(problems, "VALUE: "+perr)
		}
		k.RTT = d
		if c.Jitter != "" {
			j, jerr := parseDelay(c.Jitter)
			if jerr != "" {
				problems = append(problems, "--jitter: "+jerr)
			}
			k.Jitter = j
		}
		if why := spec.JitterProblem(k.RTT, k.Jitter); perr == "" && why != "" {
			problems = append(problems, "--jitter: "+why+" (--jitter 0 removes it)")
		}
	case fault.Loss:
		v := strings.TrimSuffix(strings.TrimSpace(c.Value), "%")
		f, perr := strconv.ParseFloat(v, 64)
		if perr != nil || !spec.ValidLoss(f) {
			problems = append(problems, fmt.Sprintf("VALUE: expected a loss percentage from 0 to 100 like 1%% or 0.5, got %q", c.Value))
		}
		k.Loss = f
	case fault.Reorder:
		v := strings.TrimSuffix(strings.TrimSpace(c.Value), "%")
		f, perr := strconv.ParseFloat(v, 64)
		if perr != nil || !spec.ValidLoss(f) {
			problems = append(problems, fmt.Sprintf("VALUE: expected a reorder percentage from 0 to 100 like 25%% or 1, got %q", c.Value))
		} else if f > 0 && err == nil && k.RTT == 0 {
			problems = append(problems, fmt.Sprintf("LINK: link %s has no delay, so nothing waits to be overtaken; give it one first (fault delay %s RTT)", k.Name, k.Name))
		}
		k.Reorder = f
	case fault.Duplicate:
		v := strings.TrimSuffix(strings.TrimSpace(c.Value), "%")
		f, perr := strconv.ParseFloat(v, 64)
		if perr != nil || !spec.ValidLoss(f) || f >= 100 {
			problems = append(problems, fmt.Sprintf("VALUE: expected a duplicate percentage from 0 to below 100 like 1%% or 10, got %q", c.Value))
		}
		k.Duplicate = f
	case fault.Corrupt:
		v := strings.TrimSuffix(strings.TrimSpace(c.Value), "%")
		f, perr := strconv.ParseFloat(v, 64)
		if perr != nil || !spec.ValidLoss(f) {
			problems = append(problems, fmt.Sprintf("VALUE: expected a corrupt percentage from 0 to 100 like 1%% or 0.1, got %q", c.Value))
		}
		k.Corrupt = f
	case fault.Bandwidth:
		if c.Value == "0" || c.Value == "unlimited" {
			k.Bandwidth = 0
		} else if r, perr := spec.ParseRate(c.Value); perr != nil {
			problems = append(problems, fmt.Sprintf("VALUE: expected a rate from 8kbit to 100gbit like 10mbit or 1gbit, or unlimited, got %q", c.Value))
		} else {
			k.Bandwidth = r
		}
	default:
		problems = append(problems, fmt.Sprintf("unknown link fault %q (delay, loss, reorder, duplicate, corrupt, bandwidth)", c.Verb))
	}
	if err := hderr.Users(problems); err != nil {
		return nil, err
	}
	out := append([]Link(nil), links...)
	out[i] = k
	return out, nil
}

func parseDelay(s string) (time.Duration, string) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d < 0 || d > MaxDelay {
		return 0, fmt.Sprintf("expected a round-trip time from 0 to %v like 100ms or 1.5s, got %q", MaxDelay, s)
	}
	return d, ""
}

// Describe is a link's impairment as a user would write it.
func (k Link) Describe() string {
	s := "rtt " + k.RTT.String()
	if k.Jitter > 0 {
		s += " ±" + k.Jitter.String()
	}
	if k.Loss > 0 {
		s += fmt.Sprintf(", loss %g%%", k.Loss)
	}
	if k.Reorder > 0 {
		s += fmt.Sprintf(", reorder %g%%", k.Reorder)
	}
	if k.Duplicate > 0 {
		s += fmt.Sprintf(", duplicate %g%%", k.Duplicate)
	}
	if k.Corrupt > 0 {
		s += fmt.Sprintf(", corrupt %g%%", k.Corrupt)
	}
	if k.Bandwidth > 0 {
		s += ", bandwidth " + spec.FormatRate(k.Bandwidth)
	}
	return s
}
