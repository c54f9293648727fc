package schedule

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/golden"
)

var galera3 = []string{"db1", "db2", "db3"}

func params(seed uint64) Params {
	return Params{Seed: seed, Faults: Default, Nodes: galera3, Duration: 2 * time.Minute, Hold: 10 * time.Second, Interval: 5 * time.Second}
}

// TestGenerate: the same parameters give the same schedule (the seed
// decides everything), another seed another one; steps follow each other
// within the duration, each held at most Hold, waits within the interval.
func TestGenerate(t *testing.T) {
	a, err := Generate(params(42))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Generate(params(42))
	if !reflect.DeepEqual(a, b) {
		t.Error("seed 42 drew two different schedules")
	}
	if c, _ := Generate(params(43)); reflect.DeepEqual(a.Steps, c.Steps) {
		t.Error("seeds 42 and 43 drew the same schedule")
	}
	if len(a.Steps) < 5 {
		t.Fatalf("%d steps in 2 minutes of holds up to 10 s and waits up to 5 s", len(a.Steps))
	}
	mixed := 0
	for i, st := range a.Steps {
		if st.Hold.D() < time.Second || st.Hold.D() > 10*time.Second || (st.At+st.Hold).D() > 2*time.Minute {
			t.Errorf("step %d: at %v hold %v", i, st.At, st.Hold)
		}
		if i > 0 {
			prev := a.Steps[i-1]
			if wait := (st.At - prev.At - prev.Hold).D(); wait < 2500*time.Millisecond || wait > 5*time.Second {
				t.Errorf("step %d: waits %v after the heal", i, wait)
			}
		}
		if len(st.Events) > 1 {
			mixed++
			if !network(st.Events[0].Kind) || !process(st.Events[1].Kind) || st.Events[1].Offset > st.Hold/2 {
				t.Errorf("step %d mixes %+v", i, st.Events)
			}
		}
		for _, e := range st.Events {
			if e.Kind == PartitionRing && (len(e.Targets) != 1 || len(e.From) != 1 || e.Targets[0] == e.From[0]) {
				t.Errorf("a ring cut on three nodes: %+v", e)
			}
		}
	}
	if mixed == 0 {
		t.Error("no step joined a process fault to a partition")
	}
	out, _ := json.MarshalIndent(a, "", "  ")
	golden.Check(t, "seed42", append(out, '\n'))
}

func TestCheck(t *testing.T) {
	p := Params{Faults: []string{"kill", "nuke", PartitionRing, Packets}, Nodes: []string{"db1", "db2"}, Links: []string{}, Duration: 0, Hold: 2 * time.Hour, Interval: -time.Second}
	_, err := Generate(p)
	for _, want := range []string{`--faults: unknown fault "nuke"`, "--duration: expected 1s to 24h", "--hold: expected 100ms to 1h", "--interval: expected 0 to 1h",
		"--faults: partition-ring needs at least 3 nodes", "--faults: packets acts on a WAN link between regions, and the lab has none"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in %v", want, err)
		}
	}
}

// TestParse: a stored schedule reads back as drawn; one naming nodes the
// lab has not, or broken, is refused with every problem and where.
func TestParse(t *testing.T) {
	a, _ := Generate(params(7))
	data, _ := json.Marshal(a)
	b, err := Parse(data, "s.json", galera3, nil)
	if err != nil || !reflect.DeepEqual(a, b) {
		t.Fatalf("round trip: %v", err)
	}
	if _, err := Parse(data, "s.json", []string{"db1", "db2"}, nil); err == nil || !strings.Contains(err.Error(), "s.json: the schedule names db3, not nodes of this cluster or links of this lab (db1, db2)") {
		t.Errorf("another shape: %v", err)
	}
	bad := `{"steps": [{"at_s": 5, "hold_s": 3, "events": [{"offset_s": 4, "kind": "nuke", "targets": ["db1"]}]}, {"at_s": 6, "hold_s": 1, "events": [{"kind": "clock", "targets": ["db2"], "clock": "soon"}]}]}`
	_, err = Parse([]byte(bad), "x.json", galera3, nil)
	for _, want := range []string{`x.json: steps[0].events[0].kind: unknown fault "nuke"`, "x.json: steps[0].events[0].offset_s: 4 is outside the step's hold", "x.json: steps[1]: starts at 6 s, before the step before it heals",
		`x.json: steps[1].events[0].clock: expected a signed duration such as +12s, got "soon"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in %v", want, err)
		}
	}
	if _, err := Parse([]byte("{"), "y.json", galera3, nil); err == nil || !strings.Contains(err.Error(), "y.json: not a schedule") {
		t.Errorf("not JSON: %v", err)
	}
}

// TestMachineDiskAndPacketFaults: memory, disk, packets and disconnect
// steps draw their targets and what they do from the seed; a packets fault takes one
// of the lab's links, and a replay against a lab without it is refused.
func TestMachineDiskAndPacketFaults(t *testing.T) {
	p := params(5)
	p.Faults, p.Links = []string{Memory, Disk, Packets, Disconnect}, []string{"east-west"}
	a, err := Generate(p)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, st := range a.Steps {
		e := st.Events[0]
		seen[e.Kind] = true
		switch e.Kind {
		case Memory:
			if len(e.Targets) != 1 || (e.Limit != "256M" && e.Limit != "512M" && e.Limit != "1G") {
				t.Errorf("memory: %+v", e)
			}
		case Disk:
			if len(e.Targets) != 1 || !slices.Contains(DiskFaults, e.Disk) {
				t.Errorf("disk: %+v", e)
			}
		case Packets:
			if len(e.Targets) != 1 || e.Targets[0] != "east-west" || e.Share <= 0 || !strings.Contains(st.Says(), "packets east-west "+e.Packet) {
				t.Errorf("packets: %+v (%s)", e, st.Says())
			}
		}
	}
	if len(seen) != 4 {
		t.Errorf("kinds drawn: %v", seen)
	}
	// a disconnect: one node's connections, or every node's
	sizes := map[int]bool{}
	for seed := uint64(1); seed <= 10; seed++ {
		q := params(seed)
		q.Faults = []string{Disconnect}
		d, err := Generate(q)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range d.Steps {
			sizes[len(st.Events[0].Targets)] = true
		}
	}
	if len(sizes) != 2 || !sizes[1] || !sizes[len(p.Nodes)] {
		t.Errorf("disconnects drew %v nodes, want 1 and %d", sizes, len(p.Nodes))
	}
	data, _ := json.Marshal(a)
	if _, err := Parse(data, "s.json", galera3, []string{"east-west"}); err != nil {
		t.Errorf("round trip: %v", err)
	}
	if _, err := Parse(data, "s.json", galera3, nil); err == nil || !strings.Contains(err.Error(), "the schedule names east-west, not nodes of this cluster or links of this lab") {
		t.Errorf("a lab without the link: %v", err)
	}
}

func TestUntilAndEnd(t *testing.T) {
	a, _ := Generate(params(1))
	cut := a.Until(30 * time.Second)
	if len(cut.Steps) == 0 || len(cut.Steps) >= len(a.Steps) || cut.Steps[len(cut.Steps)-1].At.D() >= 30*time.Second {
		t.Errorf("until 30 s: %d of %d steps", len(cut.Steps), len(a.Steps))
	}
	if a.End() > 2*time.Minute || a.End() <= cut.End() {
		t.Errorf("end %v, cut's %v", a.End(), cut.End())
	}
}

func TestRingCuts(t *testing.T) {
	got := RingCuts([]string{"a", "b", "c", "d", "e"})
	want := [][2]string{{"a", "c"}, {"a", "d"}, {"b", "d"}, {"b", "e"}, {"c", "e"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("five in a ring: %v", got)
	}
	if got := RingCuts([]string{"a", "b", "c"}); len(got) != 0 {
		t.Errorf("three in a ring: %v", got)
	}
}

func TestSays(t *testing.T) {
	st := Step{Events: []Event{{Kind: PartitionRing, Targets: []string{"db1"}, From: []string{"db3"}}, {Offset: 1.25, Kind: Kill, Targets: []string{"db2"}}}}
	if got := st.Says(); got != "partition-ring db1 from db3; 1.2 s later kill db2" {
		t.Errorf("says %q", got)
	}
}

// TestPrimaryPartitionAndPowerCut: a primary's partition draws no target
// (the writer is found when the step comes) and a replay takes it; a disk
// event may be a power cut, and a disk event of another name is refused; a
// clock strobe draws its offset and period.
func TestPrimaryPartitionAndPowerCut(t *testing.T) {
	p := params(11)
	p.Faults = []string{PartitionPrimary, Disk, ClockStrobe}
	p.Duration = 10 * time.Minute
	s, err := Generate(p)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, st := range s.Steps {
		e := st.Events[0]
		switch e.Kind {
		case PartitionPrimary:
			if len(e.Targets) != 0 || st.Says() != "partition-primary" {
				t.Errorf("partition-primary drew %v (%q)", e.Targets, st.Says())
			}
			seen[e.Kind] = true
		case Disk:
			seen[e.Disk] = true
		case ClockStrobe:
			if len(e.Targets) != 1 || e.Clock == "" || !slices.Contains([]Seconds{2, 3, 5}, e.Strobe) || !strings.Contains(st.Says(), e.Clock+" and back every ") {
				t.Errorf("clock-strobe: %+v (%q)", e, st.Says())
			}
			seen[e.Kind] = true
		}
	}
	if !seen[PartitionPrimary] || !seen[DiskPowerCut] || !seen[ClockStrobe] {
		t.Errorf("drawn: %v", seen)
	}
	data, _ := json.Marshal(s)
	if b, err := Parse(data, "s.json", galera3, nil); err != nil || !reflect.DeepEqual(s, b) {
		t.Errorf("round trip: %v", err)
	}
	bad := `{"steps": [{"at_s": 0, "hold_s": 3, "events": [{"kind": "disk", "targets": ["db1"], "disk": "melt"}, {"kind": "clock-strobe", "targets": ["db2"], "clock": "+3s", "strobe_s": 0.2}]}]}`
	_, err = Parse([]byte(bad), "x.json", galera3, nil)
	for _, want := range []string{`x.json: steps[0].events[0].disk: expected one of stall, eio-fsync, slow, power-cut, got "melt"`, "x.json: steps[0].events[1].strobe_s: expected a period of 2 to 3600 s, got 0.2"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in %v", want, err)
		}
	}
}
