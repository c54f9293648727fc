package chaos

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/plan"
)

// runner records commands, by host, each command as its last words (a
// batch's rules; Lift's flush); the hosts in fail fail, and every flush
// fails with "No chain" when noChain.
type runner struct {
	mu      sync.Mutex
	ran     []string
	fail    map[string]bool
	noChain bool
}

func (r *runner) Run(_ context.Context, host string, argv ...string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	what := strings.Join(argv, " ")
	if argv[0] == "sh" { // a script's arguments after $0
		what = strings.Join(argv[4:], " | ")
	}
	r.ran = append(r.ran, host+": "+what)
	switch {
	case r.fail[host]:
		return errors.New(host + ": iptables: Resource temporarily unavailable")
	case r.noChain && slices.Contains(argv, "-F"):
		return errors.New(host + ": iptables: No chain/target/match by that name.")
	}
	return nil
}

func (r *runner) sorted() string {
	slices.Sort(r.ran)
	return strings.Join(r.ran, "\n")
}

var (
	a = plan.Host{Name: "a", Address: "198.18.0.1"}
	b = plan.Host{Name: "b", Address: "198.18.0.2"}
	c = plan.Host{Name: "c", Address: "198.18.0.3"}
)

// One command a host: its rules and the jumps to the chain together (the
// scripts themselves run against real tables in package iptables' tests).
func TestCutApply(t *testing.T) {
	r := &runner{}
	if err := (Cut{Side: []plan.Host{a, b}, From: []plan.Host{c, {Name: "d", Address: "198.18.0.4", ClusterAddress: "198.19.0.4"}}}).Apply(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	rules := "filter | HDFAULT | -A HDFAULT -s 198.18.0.3 -j DROP\n-A HDFAULT -d 198.18.0.3 -j DROP\n" +
		"-A HDFAULT -s 198.18.0.4 -j DROP\n-A HDFAULT -d 198.18.0.4 -j DROP\n-A HDFAULT -s 198.19.0.4 -j DROP\n-A HDFAULT -d 198.19.0.4 -j DROP\n | INPUT OUTPUT FORWARD"
	if got, want := r.sorted(), "a: "+rules+"\nb: "+rules; got != want {
		t.Errorf("commands:\n%s\nwant:\n%s", got, want)
	}
}

// A partition that fails on one host has its rules deleted from the hosts
// that took them.
func TestCutApplyUndoesOnFailure(t *testing.T) {
	r := &runner{fail: map[string]bool{"b": true}}
	err := (Cut{Side: []plan.Host{a, b}, From: []plan.Host{c}}).Apply(context.Background(), r)
	if err == nil || !strings.Contains(err.Error(), "temporarily unavailable") {
		t.Fatalf("err = %v", err)
	}
	want := "a: *filter\n-D HDFAULT -s 198.18.0.3 -j DROP\n-D HDFAULT -d 198.18.0.3 -j DROP\nCOMMIT\n\n" +
		"a: filter | HDFAULT | -A HDFAULT -s 198.18.0.3 -j DROP\n-A HDFAULT -d 198.18.0.3 -j DROP\n | INPUT OUTPUT FORWARD\n" +
		"b: filter | HDFAULT | -A HDFAULT -s 198.18.0.3 -j DROP\n-A HDFAULT -d 198.18.0.3 -j DROP\n | INPUT OUTPUT FORWARD"
	if got := r.sorted(); got != want {
		t.Errorf("commands:\n%s\nwant:\n%s", got, want)
	}
}

func TestLift(t *testing.T) {
	r := &runner{noChain: true}
	if err := Lift(context.Background(), r, Chain, []plan.Host{a, b}); err != nil {
		t.Errorf("hosts never partitioned have no chain: %v", err)
	}
	if got, want := r.sorted(), "a: iptables -w -F HDFAULT\nb: iptables -w -F HDFAULT"; got != want {
		t.Errorf("ran %s", got)
	}
	r = &runner{fail: map[string]bool{"a": true}}
	if err := Lift(context.Background(), r, Chain, []plan.Host{a}); err == nil {
		t.Error("a failing flush must be reported")
	}
}

// A remote lab's chain is its own, and down takes it away whole: one
// command a host; a failure on one host is reported and every host tried.
func TestRemove(t *testing.T) {
	p := &plan.Plan{Lab: "rg3", Mode: plan.ModeSSH}
	if got := ChainOf(p); got != "HDFAULT-rg3" {
		t.Errorf("ChainOf = %q", got)
	}
	if got := ChainOf(&plan.Plan{Lab: "rg3", Mode: plan.ModeNetns}); got != Chain {
		t.Errorf("ChainOf a namespaced lab = %q", got)
	}
	r := &runner{fail: map[string]bool{"a": true}}
	if err := Remove(context.Background(), r, "HDFAULT-rg3", []plan.Host{a, b}); err == nil {
		t.Error("a's failure is not reported")
	}
	if got, want := r.sorted(), "a: filter | HDFAULT-rg3 | INPUT OUTPUT FORWARD\nb: filter | HDFAULT-rg3 | INPUT OUTPUT FORWARD"; got != want {
		t.Errorf("commands:\n%s\nwant:\n%s", got, want)
	}
}

// A one-way cut drops only what arrives from From, on the receiving side.
func TestOneWayApply(t *testing.T) {
	r := &runner{}
	if err := (Cut{Side: []plan.Host{b}, From: []plan.Host{a}, OneWay: true}).Apply(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if got, want := r.sorted(), "b: filter | HDFAULT | -A HDFAULT -s 198.18.0.1 -j DROP\n | INPUT OUTPUT FORWARD"; got != want {
		t.Errorf("commands:\n%s\nwant:\n%s", got, want)
	}
}

func regionsPlan() *plan.Plan {
	return &plan.Plan{Lab: "x", Hosts: []plan.Host{
		{Name: "db1", Region: "main"}, {Name: "db2", Region: "main"}, {Name: "dr1", Region: "dr"},
		{Name: "lb", Region: "main"}, {Name: "client", Region: "main"},
	}}
}

func TestPartition(t *testing.T) {
	cases := []struct {
		name          string
		targets, from []string
		side, other   []string
		problem       string
	}{
		{"one node from everyone", []string{"db1"}, nil, []string{"db1"}, []string{"db2", "dr1", "lb", "client"}, ""},
		{"a region from the rest", []string{"dr"}, nil, []string{"dr1"}, []string{"db1", "db2", "lb", "client"}, ""},
		{"node from node", []string{"db1"}, []string{"db2"}, []string{"db1"}, []string{"db2"}, ""},
		{"region from region", []string{"main"}, []string{"dr"}, []string{"db1", "db2", "lb", "client"}, []string{"dr1"}, ""},
		{"nobody named", nil, nil, nil, nil, "name the nodes or the region"},
		{"unknown target", []string{"db9"}, nil, nil, nil, `"db9" is neither a host nor a region`},
		{"unknown from", []string{"db1"}, []string{"nope"}, nil, nil, `--from: "nope"`},
		{"both sides", []string{"db1"}, []string{"main"}, nil, nil, "db1 is on both sides"},
		{"everyone on one side", []string{"main", "dr"}, nil, nil, nil, "cuts no one off"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cut, err := NewCut(regionsPlan(), c.targets, c.from)
			if c.problem != "" {
				if !hderr.IsUser(err) || !strings.Contains(err.Error(), c.problem) {
					t.Fatalf("want %q, got %v", c.problem, err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(Names(cut.Side), c.side) || !reflect.DeepEqual(Names(cut.From), c.other) {
				t.Fatalf("%v | %v | %v", Names(cut.Side), Names(cut.From), err)
			}
		})
	}
}

func TestOneWay(t *testing.T) {
	cut, err := NewOneWay(regionsPlan(), []string{"db1"}, []string{"dr"})
	if err != nil || !cut.OneWay || !reflect.DeepEqual(Names(cut.From), []string{"db1"}) || !reflect.DeepEqual(Names(cut.Side), []string{"dr1"}) {
		t.Fatalf("%+v %v", cut, err)
	}
	_, err = NewOneWay(regionsPlan(), []string{"db9"}, nil)
	for _, w := range []string{`--from: "db9" is neither a host nor a region`, "--to: name the hosts or regions"} {
		if !hderr.IsUser(err) || !strings.Contains(err.Error(), w) {
			t.Errorf("%q missing from %v", w, err)
		}
	}
	if _, err := NewOneWay(regionsPlan(), []string{"main"}, []string{"db1"}); err == nil || !strings.Contains(err.Error(), "db1 is on both sides") {
		t.Errorf("overlapping sides: %v", err)
	}
}
