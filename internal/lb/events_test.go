package lb

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/host/hosttest"
	"github.com/hadrill/hadrill/internal/plan"
)

func TestEventsAndSay(t *testing.T) {
	logs := hosttest.New(nil)
	log := func(name, text string) string {
		_ = logs.WriteFile(context.Background(), name, []byte(text), 0o644)
		return name
	}
	pair := &plan.LB{Name: "lb", Instances: []plan.LBInstance{
		{Host: "lb1", LogFile: log("/lb1/proxy.log", "2026-11-29T08:41:07.5+00:00 Server writes/db1 is DOWN, reason: Layer7 timeout, check duration: 1001ms. 2 active and 0 backup servers left. 42 sessions active, 0 requeued, 0 remaining in queue.\n"+
			"2026-11-29T08:41:09.5+00:00 Server writes/db1 is UP, reason: Layer7 check passed, code: 200, check duration: 2ms. 3 active and 0 backup servers online. 0 sessions requeued, 0 total in queue.\n"+
			"2026-11-29T08:45:00+00:00 Server writes/db2 is DOWN, reason: Layer7 timeout, check duration: 1001ms. 2 active and 0 backup servers left. 0 sessions active, 0 requeued, 0 remaining in queue.\n")},
		{Host: "lb2", LogFile: log("/lb2/proxy.log", "2026-11-29T08:41:08+00:00 proxy writes has no server available!\n")},
		{Host: "lb3", LogFile: "/lb3/proxy.log"}, // none: skipped
	}}
	b := Balancer{LB: pair, Hosts: func(string) host.Host { return logs }}
	since := time.Date(2026, 11, 29, 8, 41, 0, 0, time.UTC)
	ev := b.Events(context.Background(), since, since.Add(time.Minute))
	if len(ev) != 3 || ev[0].Instance != "lb1" || ev[1].Instance != "lb2" || ev[2].Instance != "lb1" {
		t.Fatalf("events of both instances within the minute, in time order: %+v", ev)
	}
	got := Say("lb", ev, since, "the fault")
	want := "load balancer lb (times from the fault): writes marked db1 down at +7.5 s (Layer7 timeout), shutting its 42 sessions; writes had no server at +8.0 s; writes took db1 back at +9.5 s"
	if got != want {
		t.Errorf("Say:\n got %s\nwant %s", got, want)
	}
	if s := Say("lb", nil, since, "the fault"); s != "" {
		t.Errorf("no events: %q", s)
	}
	var many []Event
	for i := range maxSaid + 3 {
		many = append(many, Event{At: since.Add(time.Duration(i) * time.Second), Proxy: "writes", Server: fmt.Sprintf("db%d", i), What: "up"})
	}
	if s := Say("lb", many, since, "the fault"); len(s) == 0 || s[len(s)-len("and 3 more"):] != "and 3 more" {
		t.Errorf("more than %d events: %s", maxSaid, s)
	}
}

// TestWhyOut: each server out of service is explained by the last event
// that took it out; one in service, or with no event, is not.
func TestWhyOut(t *testing.T) {
	at := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	ev := []Event{
		{At: at, Proxy: "writes", Server: "db2", What: "down", Reason: "Layer4 timeout"},
		{At: at.Add(time.Second), Proxy: "writes", Server: "db2", What: "up"},
		{At: at.Add(2 * time.Second), Proxy: "writes", Server: "db2", What: "down", Reason: "Layer7 wrong status, code: 503"},
		{At: at.Add(3 * time.Second), Proxy: "reads", Server: "db3", What: "down", Reason: "maintenance"},
		{At: at.Add(4 * time.Second), Proxy: "writes", Server: "db1", What: "down", Reason: "Layer4 timeout"},
		{At: at.Add(5 * time.Second), Proxy: "writes", Server: "db1", What: "up"},
	}
	st := []ServerState{{Proxy: "writes", Name: "db1", Status: "UP"}, {Proxy: "writes", Name: "db2", Status: "DOWN 1/2"},
		{Proxy: "reads", Name: "db3", Status: "MAINT"}, {Proxy: "reads", Name: "db4", Status: "DOWN"}}
	got := WhyOut(ev, st)
	if len(got) != 2 || got[0].Reason != "Layer7 wrong status, code: 503" || got[1].Server != "db3" {
		t.Errorf("why out: %+v", got)
	}
	if s := Tell(got[0], "since 08:00:02"); s != "writes marked db2 down since 08:00:02 (Layer7 wrong status, code: 503)" {
		t.Errorf("told: %s", s)
	}
}
