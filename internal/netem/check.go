package netem

import (
	"fmt"
	"sort"
	"time"

	"github.com/hadrill/hadrill/internal/stats"
)

// Measured is a link's round trip as measured between two of its hosts.
type Measured struct {
	Link      string  `json:"link"`
	From      string  `json:"from"`
	To        string  `json:"to"`
	TargetMs  float64 `json:"target_ms"`
	P50Ms     float64 `json:"p50_ms"`
	P99Ms     float64 `json:"p99_ms"`
	MinMs     float64 `json:"min_ms"`
	MaxMs     float64 `json:"max_ms"`
	Samples   int     `json:"samples"`
	Failed    int     `json:"failed,omitempty"` // probes lost (loss) or refused
	OK        bool    `json:"ok"`               // within Tolerance: the link is what the spec says
	Usable    bool    `json:"usable"`           // within the wider Bound: off, as on a busy machine, but emulated
	Tolerance float64 `json:"tolerance_ms"`
	Bound     float64 `json:"bound_ms"`
	// BaseMs is the machines' own round trip between the two hosts,
	// measured before the link was emulated (remote hosts: the emulated
	// delay adds to it, and the target is judged on top of it).
	BaseMs float64   `json:"base_ms,omitempty"`
	At     time.Time `json:"at"`
	// NotMeasured says why no round trip was measured (every probe failed):
	// the figures above are then none, not zero.
	NotMeasured string `json:"not_measured,omitempty"`
}

// Summary is the measurement in words: its p50 and p99, or why there is
// none.
func (m Measured) Summary() string {
	if m.Samples == 0 {
		return "not measured (" + m.NotMeasured + ")"
	}
	return fmt.Sprintf("p50 %.2f ms, p99 %.2f ms", m.P50Ms, m.P99Ms)
}

// Tolerance is how far a link's median round trip may be from its target:
// 2 % of it plus 1 ms.
func Tolerance(rtt time.Duration) time.Duration { return rtt/50 + time.Millisecond }

// Bound is how far it may be before the emulation is taken as broken
// (rules missing, the daemon dead or starved): 10 % plus 5 ms. Between the
// two the link works but the machine is busy: said, not fatal.
func Bound(rtt time.Duration) time.Duration { return rtt/10 + 5*time.Millisecond }

// Judge summarises round-trip samples of a link against its target, on top
// of base (the network's own round trip between the two hosts: 0 within
// one computer).
func Judge(k Link, base time.Duration, samples []time.Duration, failed int) Measured {
	m := Measured{Link: k.Name, TargetMs: ms(k.Expected()), Samples: len(samples), Failed: failed, Tolerance: ms(Tolerance(k.RTT)), Bound: ms(Bound(k.RTT)), BaseMs: ms(base)}
	if len(samples) == 0 {
		m.NotMeasured = fmt.Sprintf("all %d probes failed: the link is cut, the netem daemon is down or nothing answers in the other region", failed)
		return m
	}
	s := append([]time.Duration(nil), samples...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	m.MinMs, m.MaxMs = ms(s[0]), ms(s[len(s)-1])
	m.P50Ms, m.P99Ms = ms(stats.Percentile(s, 50)), ms(stats.Percentile(s, 99))
	off := m.P50Ms - m.BaseMs - m.TargetMs
	if off < 0 {
		off = -off
	}
	m.OK, m.Usable = off <= m.Tolerance, off <= m.Bound
	return m
}

// Expected is the median round trip a handshake over the link should take:
// its RTT, less when a Reorder share of each direction's packets is sent
// at once (each way then costs half the RTT or nothing, independently).
func (k Link) Expected() time.Duration {
	delayed := 1 - k.Reorder/100 // each direction
	switch {
	case delayed*delayed >= 0.5: // both ways delayed in at least half the handshakes
		return k.RTT
	case 1-(1-delayed)*(1-delayed) >= 0.5: // at least one way delayed
		return k.RTT / 2
	default:
		return 0
	}
}

// Problem explains a link whose emulation is broken ("" when it is not).
func (m Measured) Problem() string {
	if m.Usable {
		return ""
	}
	if m.Samples == 0 {
		return fmt.Sprintf("link %s: no round trip measured between %s and %s (%d probes failed): the link is cut or the netem daemon is down",
			m.Link, m.From, m.To, m.Failed)
	}
	return fmt.Sprintf("link %s: measured round trip %.2f ms (p50 of %d, %s → %s), target %.2f ms%s ± %.2f ms",
		m.Link, m.P50Ms, m.Samples, m.From, m.To, m.TargetMs, m.OnTop(), m.Bound)
}

// OnTop names the network's own round trip the target adds to ("" where
// there is none).
func (m Measured) OnTop() string {
	if m.BaseMs == 0 {
		return ""
	}
	return fmt.Sprintf(" on top of the machines' own %.2f ms", m.BaseMs)
}

// Warning explains a link that works but missed its tight target ("" when
// it did not): the figures measured now carry the difference.
func (m Measured) Warning() string {
	if m.OK || !m.Usable {
		return ""
	}
	return fmt.Sprintf("link %s: measured round trip %.2f ms (p50 of %d, %s → %s), %.2f ms off its target %.2f ms%s (tolerance %.2f ms): the machine is busy; what is measured now carries the difference",
		m.Link, m.P50Ms, m.Samples, m.From, m.To, m.P50Ms-m.BaseMs-m.TargetMs, m.TargetMs, m.OnTop(), m.Tolerance)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
