package fault

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/plan"
)

func lab() *plan.Plan {
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
			cut, err := NewCut(lab(), c.targets, c.from)
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
	cut, err := NewOneWay(lab(), []string{"db1"}, []string{"dr"})
	if err != nil || !cut.OneWay || !reflect.DeepEqual(Names(cut.From), []string{"db1"}) || !reflect.DeepEqual(Names(cut.Side), []string{"dr1"}) {
		t.Fatalf("%+v %v", cut, err)
	}
	_, err = NewOneWay(lab(), []string{"db9"}, nil)
	for _, w := range []string{`--from: "db9" is neither a host nor a region`, "--to: name the hosts or regions"} {
		if !hderr.IsUser(err) || !strings.Contains(err.Error(), w) {
			t.Errorf("%q missing from %v", w, err)
		}
	}
	if _, err := NewOneWay(lab(), []string{"main"}, []string{"db1"}); err == nil || !strings.Contains(err.Error(), "db1 is on both sides") {
		t.Errorf("overlapping sides: %v", err)
	}
}

func TestSinceHeal(t *testing.T) {
	recs := []Record{{Fault: Kill, Targets: []string{"db1"}}, {Fault: Heal}, {Fault: Partition, Targets: []string{"db3"}}, {Fault: Recover}, {Fault: Disk, Targets: []string{"db2"}, Value: "full"}}
	got := SinceHeal(recs)
	if len(got) != 2 || got[0].Label() != "partition db3" || got[1].Label() != "disk db2 full" {
		t.Errorf("%+v", got)
	}
}

func TestDry(t *testing.T) {
	ctx := context.Background()
	if IsDry(ctx) || !IsDry(Dry(ctx)) {
		t.Error("a dry run is marked on its context and only there")
	}
	// a dry process fault checks its nodes and changes nothing
	p := &plan.Plan{Lab: "t", Nodes: []plan.Node{{Name: "db1"}}}
	if err := Process(Dry(ctx), p, nil, "", Kill, []string{"db9"}, nil); err == nil || !strings.Contains(err.Error(), "db9") {
		t.Errorf("a dry kill of an unknown node: %v", err)
	}
	s := startSleepers(t, "db1")
	log := Log(filepath.Join(t.TempDir(), "faults.jsonl"))
	if err := Process(Dry(ctx), p, s, log, Kill, []string{"db1"}, nil); err != nil {
		t.Fatalf("a dry kill of a running node: %v", err)
	}
	if proc, _ := s.Process(&p.Nodes[0]); proc.Pid == 0 || len(log.Between(time.Time{}, time.Now().Add(time.Hour))) != 0 {
		t.Errorf("a dry kill killed (pid %d) or recorded (%v)", proc.Pid, log.Between(time.Time{}, time.Now().Add(time.Hour)))
	}
}
