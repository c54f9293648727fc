package fault

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

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
		"-A HDFAULT -s 198.18.0.4 -j DROP\n-A HDFAULT -d 198.18.0.4 -j DROP\n-A HDFAULT -s 198.19.0.4 -j DROP\n-A HDFAULT -d 198.19.0.4 -j DROP\n | INPUT OUTPUT"
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
		"a: filter | HDFAULT | -A HDFAULT -s 198.18.0.3 -j DROP\n-A HDFAULT -d 198.18.0.3 -j DROP\n | INPUT OUTPUT\n" +
		"b: filter | HDFAULT | -A HDFAULT -s 198.18.0.3 -j DROP\n-A HDFAULT -d 198.18.0.3 -j DROP\n | INPUT OUTPUT"
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
	if got, want := r.sorted(), "a: filter | HDFAULT-rg3 | INPUT OUTPUT\nb: filter | HDFAULT-rg3 | INPUT OUTPUT"; got != want {
		t.Errorf("commands:\n%s\nwant:\n%s", got, want)
	}
}

func TestLog(t *testing.T) {
	l := Log(filepath.Join(t.TempDir(), "faults.jsonl"))
	if got := l.Between(time.Time{}, time.Now()); got != nil {
		t.Errorf("no log yet: %v", got)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, f := range []Kind{Kill, Heal, Partition} {
		if err := l.Append(Record{Fault: f, At: t0.Add(time.Duration(i) * time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	fh, _ := os.OpenFile(string(l), os.O_APPEND|os.O_WRONLY, 0)
	fh.WriteString("{damaged\n")
	fh.Close()
	if err := l.Append(Record{Fault: "pause"}); err != nil { // At: now
		t.Fatal(err)
	}
	got := l.Between(t0.Add(time.Minute), t0.Add(2*time.Minute))
	if len(got) != 2 || got[0].Fault != "heal" || got[1].Fault != "partition" {
		t.Errorf("between: %+v", got)
	}
	if all := l.Between(time.Time{}, time.Now().Add(time.Minute)); len(all) != 4 || all[3].At.IsZero() {
		t.Errorf("all: %+v", all)
	}
}

// A one-way cut drops only what arrives from From, on the receiving side.
func TestOneWayApply(t *testing.T) {
	r := &runner{}
	if err := (Cut{Side: []plan.Host{b}, From: []plan.Host{a}, OneWay: true}).Apply(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if got, want := r.sorted(), "b: filter | HDFAULT | -A HDFAULT -s 198.18.0.1 -j DROP\n | INPUT OUTPUT"; got != want {
		t.Errorf("commands:\n%s\nwant:\n%s", got, want)
	}
}
