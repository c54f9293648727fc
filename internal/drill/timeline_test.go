package drill

import (
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/consistency"
)

// TestPlaceFirst: the first forbidden anomaly (a permitted one only when
// none is forbidden) placed on the timeline: before the first fault,
// during a step's hold, while its heal ran, between steps, after the last
// heal, or after a single fault.
func TestPlaceFirst(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	start := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	faultAt := start.Add(5 * time.Second) // the history began 5 s before the first fault
	steps := []Applied{
		{Step: 1, Says: "kill db2", AtS: 0, HealS: 4, HealedS: 10},
		{Step: 2, Says: "partition-one db3", AtS: 13, HealS: 16, HealedS: 17},
	}
	res := func(first float64, forbidden bool) *consistency.Result {
		r := &consistency.Result{Anomalies: []consistency.Anomaly{
			{Type: "G2-item", First: f(1)}, // permitted, and earlier
			{Type: "G-single", First: f(first), Forbidden: forbidden},
		}}
		if forbidden {
			r.Forbidden = []string{"G-single"}
		}
		return r
	}
	for _, c := range []struct {
		first float64
		want  string
	}{
		{3, "first G-single at -2.0 s: 2.0 s before the first fault"},
		{7, "first G-single at 2.0 s: during step 1 (kill db2), 2.0 s into its hold of 4.0 s"},
		{12, "first G-single at 7.0 s: while step 1's heal ran (kill db2), 3.0 s after its hold ended"},
		{16, "first G-single at 11.0 s: 1.0 s after step 1's heal returned, 2.0 s before step 2 (partition-one db3)"},
		{25, "first G-single at 20.0 s: 3.0 s after the last heal returned (step 2's)"},
	} {
		if p := placeFirst(res(c.first, true), start, faultAt, steps); p == nil || p.Where != c.want || p.Type != "G-single" {
			t.Errorf("first at %g s: %+v, want %q", c.first, p, c.want)
		}
	}
	late := []Applied{{Step: 1, Says: "kill db2", AtS: 1.5, HealS: 4, HealedS: 10}}
	if p := placeFirst(res(5.5, true), start, faultAt, late); p == nil || p.Where != "first G-single at 0.5 s: 1.0 s before step 1 (kill db2) began" {
		t.Errorf("before a late first step: %+v", p)
	}
	if p := placeFirst(res(7, false), start, faultAt, nil); p == nil || p.Where != "first G2-item at -4.0 s: 4.0 s before the first fault" {
		t.Errorf("nothing forbidden: the earliest of all: %+v", p)
	}
	if p := placeFirst(res(9, true), start, faultAt, nil); p == nil || p.Where != "first G-single at 4.0 s: 4.0 s after the fault" {
		t.Errorf("a single fault: %+v", p)
	}
	if placeFirst(&consistency.Result{}, start, faultAt, steps) != nil || placeFirst(res(7, true), start, time.Time{}, steps) != nil {
		t.Error("placed with no anomaly, or no fault")
	}
}

// Checksums that differ are read again, up to checksumReads readings: a
// commit that landed between two nodes' readings settles (passes); a
// difference that stays is the finding (fails), after every reading.
func TestSettledChecksums(t *testing.T) {
	same := Checksums{Read: map[string]map[string]string{"db1": {"app.t": "1"}, "db2": {"app.t": "1"}}, Agree: true}
	differ := Checksums{Read: map[string]map[string]string{"db1": {"app.t": "1"}, "db2": {"app.t": "2"}}, Differ: []string{"app.t"}}
	for _, c := range []struct {
		name     string
		readings []Checksums
		reads    int
		agree    bool
	}{
		{"agree at once", []Checksums{same}, 1, true},
		{"settled at the second reading", []Checksums{differ, same}, 2, true},
		{"a difference that stays", []Checksums{differ, differ, differ, same}, checksumReads, false},
	} {
		reads, waits, said := 0, 0, 0
		got := settledChecksums(func() Checksums { reads++; return c.readings[reads-1] }, func() { waits++ }, func(string, ...any) { said++ })
		if reads != c.reads || waits != c.reads-1 || said != c.reads-1 || (len(got.Differ) == 0) != c.agree {
			t.Errorf("%s: %d readings, %d waits, %d said, differ %v", c.name, reads, waits, said, got.Differ)
		}
	}
}
