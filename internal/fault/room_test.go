package fault

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/plan"
)

// runner records commands; the command numbered failAt (from 1) fails, and
// so does every "-C" check (no jump yet) and, when noChain, every flush.
type runner struct {
	ran     []string
	failAt  int
	noChain bool
}

func (r *runner) Run(_ context.Context, host string, argv ...string) error {
	line := host + ": " + strings.Join(argv, " ")
	r.ran = append(r.ran, line)
	switch {
	case len(r.ran) == r.failAt:
		return errors.New(host + ": iptables: Resource temporarily unavailable")
	case strings.Contains(line, " -C "):
		return errors.New(host + ": iptables: Bad rule")
	case r.noChain && strings.Contains(line, " -F "):
		return errors.New(host + ": iptables: No chain/target/match by that name.")
	}
	return nil
}

var (
	a = plan.Host{Name: "a", Address: "198.18.0.1"}
	b = plan.Host{Name: "b", Address: "198.18.0.2"}
	c = plan.Host{Name: "c", Address: "198.18.0.3"}
)

func TestCutApply(t *testing.T) {
	r := &runner{}
	if err := (Cut{Side: []plan.Host{a}, From: []plan.Host{b, c}}).Apply(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"a: iptables -w -N HDFAULT",
		"a: iptables -w -A HDFAULT -s 198.18.0.2 -j DROP", "a: iptables -w -A HDFAULT -d 198.18.0.2 -j DROP",
		"a: iptables -w -A HDFAULT -s 198.18.0.3 -j DROP", "a: iptables -w -A HDFAULT -d 198.18.0.3 -j DROP",
		"a: iptables -w -C INPUT -j HDFAULT", "a: iptables -w -I INPUT -j HDFAULT",
		"a: iptables -w -C OUTPUT -j HDFAULT", "a: iptables -w -I OUTPUT -j HDFAULT",
	}
	if got := strings.Join(r.ran, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("commands:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

// A partition that fails half-way removes what it added, last first.
func TestCutApplyUndoesOnFailure(t *testing.T) {
	r := &runner{failAt: 4} // the third DROP rule
	err := (Cut{Side: []plan.Host{a}, From: []plan.Host{b, c}}).Apply(context.Background(), r)
	if err == nil || !strings.Contains(err.Error(), "temporarily unavailable") {
		t.Fatalf("err = %v", err)
	}
	undo := r.ran[4:]
	want := []string{"a: iptables -w -D HDFAULT -d 198.18.0.2 -j DROP", "a: iptables -w -D HDFAULT -s 198.18.0.2 -j DROP"}
	if strings.Join(undo, "\n") != strings.Join(want, "\n") {
		t.Errorf("undo:\n%s\nwant:\n%s", strings.Join(undo, "\n"), strings.Join(want, "\n"))
	}
}

func TestLift(t *testing.T) {
	r := &runner{noChain: true}
	if err := Lift(context.Background(), r, Chain, []plan.Host{a, b}); err != nil {
		t.Errorf("hosts never partitioned have no chain: %v", err)
	}
	if len(r.ran) != 2 {
		t.Errorf("ran %v", r.ran)
	}
	r = &runner{failAt: 1}
	if err := Lift(context.Background(), r, Chain, []plan.Host{a}); err == nil {
		t.Error("a failing flush must be reported")
	}
}

// A remote lab's chain is its own, and down takes it away whole: every
// jump to it, its rules, the chain; a host without it is fine.
func TestRemove(t *testing.T) {
	p := &plan.Plan{Lab: "rg3", Mode: plan.ModeSSH}
	if got := ChainOf(p); got != "HDFAULT-rg3" {
		t.Errorf("ChainOf = %q", got)
	}
	if got := ChainOf(&plan.Plan{Lab: "rg3", Mode: plan.ModeNetns}); got != Chain {
		t.Errorf("ChainOf a namespaced lab = %q", got)
	}
	r := &runner{noChain: true}
	if err := Remove(context.Background(), r, "HDFAULT-rg3", []plan.Host{a}); err != nil {
		t.Errorf("a host without the chain: %v", err)
	}
	want := []string{"a: iptables -w -C INPUT -j HDFAULT-rg3", "a: iptables -w -C OUTPUT -j HDFAULT-rg3", "a: iptables -w -F HDFAULT-rg3", "a: iptables -w -X HDFAULT-rg3"}
	if got := strings.Join(r.ran, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("commands:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	r = &runner{failAt: 3}
	if err := Remove(context.Background(), r, "HDFAULT-rg3", []plan.Host{a, b}); err == nil || !strings.Contains(strings.Join(r.ran, "\n"), "b: iptables -w -X HDFAULT-rg3") {
		t.Errorf("a failure on a is reported and b still tried: %v %v", err, r.ran)
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
