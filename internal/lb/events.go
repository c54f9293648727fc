package lb

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/lb/proxy"
	"github.com/hadrill/hadrill/internal/plan"
)

// Event is a change a load balancer's proxy logged in where it sends
// connections.
type Event = proxy.Event

// Events are the changes every instance of the load balancer logged
// between from and to (inclusive), in time order; an instance whose log
// cannot be read is skipped.
func (b Balancer) Events(ctx context.Context, from, to time.Time) []Event {
	var out []Event
	for i := range b.LB.Instances {
		out = append(out, b.InstanceEvents(ctx, &b.LB.Instances[i], from, to)...)
	}
	slices.SortStableFunc(out, func(a, b Event) int { return a.At.Compare(b.At) })
	return out
}

// InstanceEvents are the changes one instance logged between from and to
// (inclusive), in order; none when its log cannot be read.
func (b Balancer) InstanceEvents(ctx context.Context, in *plan.LBInstance, from, to time.Time) []Event {
	log, err := b.Hosts(in.Host).ReadFile(ctx, in.LogFile)
	if err != nil {
		return nil
	}
	var out []Event
	for _, e := range KindOf(b.LB).Events(log) {
		if !e.At.Before(from) && !e.At.After(to) {
			e.Instance = in.Host
			out = append(out, e)
		}
	}
	return out
}

// maxSaid is how many events Say lists before it counts the rest.
const maxSaid = 8

// Say tells a load balancer's events as a sentence, their times from
// since (which origin names: "the fault"), or "" when there are none:
// which server it marked down and why, the sessions it shut with it, and
// which it took back.
func Say(name string, events []Event, since time.Time, origin string) string {
	if len(events) == 0 {
		return ""
	}
	var parts []string
	for i, e := range events {
		if i == maxSaid {
			parts = append(parts, fmt.Sprintf("and %d more", len(events)-maxSaid))
			break
		}
		parts = append(parts, Tell(e, fmt.Sprintf("at +%.1f s", e.At.Sub(since).Seconds())))
	}
	return fmt.Sprintf("load balancer %s (times from %s): %s", name, origin, strings.Join(parts, "; "))
}

// Tell is one event as a clause, at saying when ("at +0.3 s").
func Tell(e Event, at string) string {
	switch e.What {
	case proxy.Down:
		s := fmt.Sprintf("%s marked %s down %s", e.Proxy, e.Server, at)
		if e.Reason != "" {
			s += " (" + e.Reason + ")"
		}
		if e.Sessions > 0 {
			s += fmt.Sprintf(", shutting its %d sessions", e.Sessions)
		}
		return s
	case proxy.Up:
		return fmt.Sprintf("%s took %s back %s", e.Proxy, e.Server, at)
	}
	return fmt.Sprintf("%s had no server %s", e.Proxy, at)
}

// WhyOut is, for each server the proxy does not send to now (DOWN, or in
// maintenance: its state in st), the event that took it out, from the
// proxy's own events (in time order); a server with none in them is left
// out.
func WhyOut(events []Event, st []ServerState) []Event {
	var out []Event
	for _, s := range st {
		if !strings.HasPrefix(s.Status, "DOWN") && !strings.HasPrefix(s.Status, "MAINT") {
			continue
		}
		for i := len(events) - 1; i >= 0; i-- {
			if e := events[i]; e.Proxy == s.Proxy && e.Server == s.Name && e.What == proxy.Down {
				out = append(out, e)
				break
			}
		}
	}
	return out
}
