package iptables

import (
	"fmt"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/lb/proxy"
)

// check is how the prober sees one server for one group: up or down, and
// how many probes in a row have said otherwise.
type check struct {
	Up      bool
	Against int    // probes in a row contradicting Up
	Reason  string // the last failed probe's
}

// Observe is a check after one probe (pure): ok moves a down server up
// after rise good probes in a row, a failure moves an up one down after
// fall; it says whether the server changed.
func (c check) Observe(ok bool, reason string, t Timing) (check, bool) {
	if !ok {
		c.Reason = reason
	}
	if ok == c.Up {
		c.Against = 0
		return c, false
	}
	c.Against++
	need := t.Fall
	if !c.Up {
		need = t.Rise
	}
	if c.Against < need {
		return c, false
	}
	c.Up, c.Against = ok, 0
	return c, true
}

// Status is the check as HAProxy's `show stat` would say it: UP, DOWN,
// "UP 1/2" (failing, going down), "DOWN 1/2" (answering, coming back).
func (c check) Status(t Timing) string {
	switch {
	case c.Up && c.Against > 0:
		return fmt.Sprintf("UP %d/%d", c.Against, t.Fall)
	case c.Up:
		return "UP"
	case c.Against > 0:
		return fmt.Sprintf("DOWN %d/%d", c.Against, t.Rise)
	}
	return "DOWN"
}

// The prober's log: one line a change, its time first.
//
//	2026-11-30T11:00:00.123456Z writes db1 down: agent answered 503 (not synced); 3 sessions kept
//	2026-11-30T11:00:04.001Z writes db1 up
//	2026-11-30T11:00:00.123456Z writes - no server

// LogLine is the log's line for an event (its At in UTC).
func LogLine(e proxy.Event) string {
	server := e.Server
	if server == "" {
		server = "-"
	}
	s := fmt.Sprintf("%s %s %s %s", e.At.UTC().Format(time.RFC3339Nano), e.Proxy, server, e.What)
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	if e.Sessions > 0 {
		s += fmt.Sprintf("; %d sessions kept", e.Sessions)
	}
	return s
}

// Events are the changes a prober's log holds, in order (pure): lines
// that are not one are skipped.
func Events(log []byte) []proxy.Event {
	var out []proxy.Event
	for _, line := range strings.Split(string(log), "\n") {
		f := strings.SplitN(line, " ", 4)
		if len(f) < 4 {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, f[0])
		if err != nil {
			continue
		}
		e := proxy.Event{At: at, Proxy: f[1], Server: f[2]}
		if e.Server == "-" {
			e.Server = ""
		}
		if f[3] == proxy.NoServer {
			e.What = proxy.NoServer
			out = append(out, e)
			continue
		}
		what, rest, _ := strings.Cut(f[3], ": ")
		if what != proxy.Down && what != proxy.Up {
			continue
		}
		e.What, e.Reason = what, rest
		if k := strings.LastIndex(rest, "; "); k >= 0 && strings.HasSuffix(rest, " sessions kept") {
			if _, err := fmt.Sscanf(rest[k+2:], "%d sessions kept", &e.Sessions); err == nil {
				e.Reason = rest[:k]
			}
		}
		out = append(out, e)
	}
	return out
}
