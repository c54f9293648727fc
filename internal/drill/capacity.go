package drill

import (
	"fmt"
	"slices"
	"time"

	"github.com/hadrill/hadrill/internal/stats"
)

// A drill measures what a fault does to traffic the lab carries: traffic
// it cannot carry before the fault (writes failing, piling up, or waiting
// a large share of their timeout) would make the fault's gap and losses
// the load's. The writes of the time before the fault (its first second
// apart, while connections open) are judged before the fault is injected.

// Limits of traffic a lab carries.
const (
	carryFailed = 0.01                   // at most this share of the writes failed or still pending
	carryP99    = 500 * time.Millisecond // and their 99th percentile of latency at most this
)

// Capacity is how the lab carried the drill's writes before its fault.
type Capacity struct {
	Writes    int     `json:"writes"`
	Failed    int     `json:"failed"` // failed, or not back a second after they were sent
	P99Ms     float64 `json:"p99_ms"` // of the writes acknowledged
	AckedPerS float64 `json:"acked_per_s"`
	Carried   bool    `json:"carried"`
	Why       string  `json:"why,omitempty"`
}

// Carried judges the writes sent between from and to, as they stood at
// now: failed, or not back a second after they were sent, counts against
// the lab. Too few writes (under 20) judge nothing: carried.
func Carried(ops []Op, from, to, now time.Time) Capacity {
	c := Capacity{Carried: true}
	var lat []time.Duration
	for _, o := range ops {
		if !o.Write || o.Sent.Before(from) || !o.Sent.Before(to) {
			continue
		}
		c.Writes++
		switch {
		case o.OK():
			lat = append(lat, o.Done.Sub(o.Sent))
		case !o.Done.IsZero() || now.Sub(o.Sent) > time.Second:
			c.Failed++
		}
	}
	if c.Writes < 20 {
		return c
	}
	slices.Sort(lat)
	p99 := stats.Percentile(lat, 99)
	c.P99Ms = float64(p99.Microseconds()) / 1000
	c.AckedPerS = float64(len(lat)) / to.Sub(from).Seconds()
	switch {
	case float64(c.Failed) > carryFailed*float64(c.Writes):
		c.Carried, c.Why = false, fmt.Sprintf("%d of its %d writes failed or were not back within a second", c.Failed, c.Writes)
	case p99 > carryP99:
		c.Carried, c.Why = false, fmt.Sprintf("its writes' 99th percentile of latency was %.0f ms (at most %v)", c.P99Ms, carryP99)
	}
	return c
}

// Refusal says why a drill stopped before its fault and how the load left
// the lab, with a rate the lab carried (about two thirds of what it
// acknowledged).
func (c Capacity) Refusal(rate int, before time.Duration, lab string) string {
	suggest := max(1, int(c.AckedPerS*2/3)/5*5)
	return fmt.Sprintf("--rate: the lab cannot carry %d writes/s before any fault: in the %v before it, %s; the fault would measure the load, not itself. "+
		"%s. Run the drill at a lower --rate (the lab acknowledged %.0f writes/s: --rate %d) or on larger machines",
		rate, before.Round(100*time.Millisecond), c.Why, lab, c.AckedPerS, suggest)
}
