package fault

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

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

// TestSplitAndEnded (the labs review's findings 4 and 9): faults over are
// told from those in force, and the fault that ended a server is named.
func TestSplitAndEnded(t *testing.T) {
	at := time.Date(2026, 11, 27, 4, 0, 0, 0, time.Local)
	recs := []Record{{At: at, Fault: Partition, Targets: []string{"db1"}, From: []string{"db2"}}, {At: at.Add(time.Second), Fault: Kill, Targets: []string{"db2"}},
		{At: at.Add(2 * time.Second), Fault: Kill, Targets: []string{"db3"}}, {At: at.Add(3 * time.Second), Fault: Clock, Targets: []string{"db1"}, Value: "+1m"}}
	still, over := Split(recs, func(r Record) bool { return true }, map[string]bool{"db2": true})
	if len(still) != 2 || still[0].Targets[0] != "db3" || len(over) != 2 || over[0].Fault != Partition {
		t.Errorf("still %v, over %v", still, over)
	}
	if got := Ended(recs, "db3", at); got != "ended by hadrill's fault kill db3 at 04:00:02" {
		t.Errorf("%q", got)
	}
	if got := Ended(recs, "db3", at.Add(time.Minute)); got != "" {
		t.Errorf("a kill before the server's start: %q", got)
	}
	if LastHeal(append(recs, Record{At: at.Add(time.Hour), Fault: Heal})) != at.Add(time.Hour) || !LastHeal(recs).IsZero() {
		t.Error("LastHeal")
	}
}
