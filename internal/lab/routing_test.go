package lab

import (
	"reflect"
	"testing"

	"github.com/hadrill/hadrill/internal/lb"
)

func TestViewOf(t *testing.T) {
	servers := []lb.ServerState{
		{Proxy: "writes", Name: "db1", Status: "UP 1/2"},
		{Proxy: "writes", Name: "db2", Status: "UP"},
		{Proxy: "reads", Name: "db1", Status: "DOWN"},
	}
	v, ok := viewOf("lb", "lb1", "db1", servers)
	if want := (routed{LB: "lb", Host: "lb1", Node: "db1", Status: []string{"writes UP 1/2", "reads DOWN"}, Up: true}); !ok || !reflect.DeepEqual(v, want) {
		t.Errorf("db1: %+v %v, want %+v", v, ok, want)
	}
	if got := v.String(); got != "lb on lb1 marks db1 writes UP 1/2, reads DOWN" {
		t.Errorf("said %q", got)
	}
	if got := (routed{Node: "db1"}).String(); got != "no running load balancer has db1" {
		t.Errorf("said %q", got)
	}
	if _, ok := viewOf("lb", "lb1", "db3", servers); ok {
		t.Error("db3 is in no group, yet found")
	}
	for status, want := range map[string]bool{"UP": true, "UP 1/2": true, "no check": true, "DOWN": false, "DOWN 1/2": false, "MAINT": false, "DRAIN": false, "MAINT (via writes/db2)": false} {
		if routes(status) != want {
			t.Errorf("routes(%q) = %v, want %v", status, !want, want)
		}
	}
}

func TestPendingRouting(t *testing.T) {
	up := func(lbHost, node string) routed { return routed{LB: "lb", Host: lbHost, Node: node, Up: true} }
	down := func(lbHost, node string) routed { return routed{LB: "lb", Host: lbHost, Node: node} }
	for _, c := range []struct {
		name  string
		views []routed
		drain bool
		want  []routed
	}{
		{"drain: nothing routes", []routed{down("lb1", "db1"), down("lb2", "db1")}, true, nil},
		{"drain: a pair's standby still routes", []routed{down("lb1", "db1"), up("lb2", "db1")}, true, []routed{up("lb2", "db1")}},
		{"drain: no proxy has it", nil, true, nil},
		{"undrain: one proxy routes", []routed{down("lb1", "db1"), up("lb2", "db1"), up("lb1", "db2")}, false, nil},
		{"undrain: none routes one of two", []routed{up("lb1", "db1"), down("lb1", "db2"), down("lb2", "db2")}, false, []routed{down("lb1", "db2"), down("lb2", "db2")}},
		{"undrain: no running proxy has it", []routed{up("lb1", "db2")}, false, []routed{{Node: "db1"}}},
	} {
		if got := pendingRouting(c.views, []string{"db1", "db2"}, c.drain); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
