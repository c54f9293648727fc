package study

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/facts"
)

// stoppedRun is seed002-wan's run stopped in its third round at quick
// scale: a and b complete to round 2, c and d (another group) to round 1.
func stoppedRun(t *testing.T) (*Study, Stored, facts.Installed) {
	t.Helper()
	s, err := Embedded("seed002-wan")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range s.Variants {
		names = append(names, v.Name)
	}
	in := facts.Installed{Server: "MariaDB 10.11.19", Galera: "26.4.23", Sysbench: "1.0.20", Kernel: "6.18.44"}
	p := &Result{Study: s, Scale: "quick", Variants: names, Interrupted: true, Failed: "round 3, variant x: a step failed", Installed: in,
		Rounds: 1, Completed: map[string]int{names[0]: 2, names[1]: 2, names[2]: 1, names[3]: 1},
		RoundTimes: map[string][]float64{names[0]: {10, 11}, names[1]: {12, 13}, names[2]: {20}, names[3]: {21}}}
	for r := 1; r <= 3; r++ {
		for _, v := range names {
			p.Samples = append(p.Samples, Sample{Round: r, Variant: v, Step: "s", Metric: "tps", Value: float64(r)})
		}
	}
	b, err := json.Marshal(p) // as the run store keeps it
	if err != nil {
		t.Fatal(err)
	}
	var stored Result
	if err := json.Unmarshal(b, &stored); err != nil {
		t.Fatal(err)
	}
	return s, Stored{ID: "20261130-010000-aaaa", Result: &stored}, in
}

// A resumed run keeps each variant's rounds up to its group's last
// complete one (a round cut short runs again whole), their times, and
// says where they came from.
func TestResumeKeeps(t *testing.T) {
	s, prev, _ := stoppedRun(t)
	v := prev.Result.Variants
	for _, c := range []struct {
		groups [][]string
		want   []int // rounds kept of each variant, in order
	}{
		{[][]string{v[:2], v[2:]}, []int{2, 2, 1, 1}}, // the groups it ran in
		{[][]string{v}, []int{1, 1, 1, 1}},            // every lab at once now: the fewest
		{[][]string{{v[0], v[2]}, {v[1], v[3]}}, []int{1, 1, 1, 1}},
	} {
		res := &Result{Study: s, Variants: v}
		resumeFrom(res, prev, c.groups)
		var got []int
		for _, name := range v {
			got = append(got, res.Resumed.Rounds[name])
			n := 0
			for _, x := range res.Samples {
				if x.Variant == name {
					n++
					if x.Round > res.Resumed.Rounds[name] {
						t.Errorf("%v: kept %s's round %d", c.groups, name, x.Round)
					}
				}
			}
			if n != res.Resumed.Rounds[name] || len(res.RoundTimes[name]) != res.Resumed.Rounds[name] {
				t.Errorf("%v: %s: %d samples and %d round times for %d rounds", c.groups, name, n, len(res.RoundTimes[name]), res.Resumed.Rounds[name])
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("groups %v: kept %v, want %v", c.groups, got, c.want)
		}
		if !strings.Contains(res.Resumed.says(), "rounds kept from run 20261130-010000-aaaa (stopped: round 3") {
			t.Errorf("says %q", res.Resumed.says())
		}
	}
	// a run stored before runs counted rounds per variant: its Rounds
	prev.Result.Completed = nil
	res := &Result{Study: s, Variants: v}
	resumeFrom(res, prev, [][]string{v})
	if res.Resumed.Rounds[v[0]] != 1 || res.Design != nil {
		t.Errorf("an older run: kept %v, design %v", res.Resumed.Rounds, res.Design)
	}
}

// Only a stopped run of the same study, scale, variants, design and
// software resumes; every difference is named at once.
func TestCheckResume(t *testing.T) {
	s, prev, in := stoppedRun(t)
	v := prev.Result.Variants
	o := Options{Scale: "quick"}
	if err := checkResume(prev, s, o, v, in); err != nil {
		t.Fatalf("the same study: %v", err)
	}
	other, _ := Embedded("seed000-binlog")
	if err := checkResume(prev, other, o, v, in); err == nil || !strings.Contains(err.Error(), "is study seed002-wan's, not seed000-binlog's") {
		t.Errorf("another study: %v", err)
	}
	changed := *s
	changed.Steps = slices.Clone(s.Steps)
	changed.Steps[0].Name += "-renamed"
	done := *prev.Result
	done.Interrupted = false
	newer := in
	newer.Server = "MariaDB 10.11.20"
	err := checkResume(Stored{ID: prev.ID, Result: &done}, &changed, Options{Scale: "full", Decide: true, Budget: time.Hour}, v[:2], newer)
	for _, want := range []string{
		"--resume: run 20261130-010000-aaaa ran to its end: nothing to resume",
		"--scale: run 20261130-010000-aaaa ran at quick scale, not full",
		"--variants: run 20261130-010000-aaaa ran " + strings.Join(v[:3], ", ") + " and " + v[3] + ", not " + v[0] + " and " + v[1],
		"--decide: run 20261130-010000-aaaa ran without a two-look design",
		"--resume: study seed002-wan's steps changed since run",
		"--resume: run 20261130-010000-aaaa ran the server MariaDB 10.11.19, here MariaDB 10.11.20",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q missing from\n%v", want, err)
		}
	}
	prev.Result.Design = &Design{Pilot: 3, Rounds: 9, Budget: time.Hour}
	if err := checkResume(prev, s, Options{Scale: "quick", Decide: true, Budget: 2 * time.Hour}, v, in); err == nil || !strings.Contains(err.Error(), "--budget: run 20261130-010000-aaaa's design fixed its rounds already (9, under a budget of 1h0m0s)") {
		t.Errorf("another budget after the design: %v", err)
	}
	if err := checkResume(prev, s, Options{Scale: "quick", Decide: true}, v, in); err != nil {
		t.Errorf("the design's own: %v", err)
	}
}

// Every embedded study reads back from the run store as the study it was:
// a stopped run of it can be resumed.
func TestEveryStudyResumable(t *testing.T) {
	for _, name := range Names() {
		s, err := Embedded(name)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(&Result{Study: s})
		if err != nil {
			t.Fatal(err)
		}
		var back Result
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, scale := range []string{"quick", "full"} {
			if changed := studyChanged(back.Study, s, scale); changed != "" {
				t.Errorf("%s at %s scale: its %s read back differ", name, scale, changed)
			}
		}
	}
}
