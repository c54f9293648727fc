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
