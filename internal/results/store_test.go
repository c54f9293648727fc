package results

import (
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/hderr"
)

func TestStoreRoundTrip(t *testing.T) {
	home := t.TempDir()
	now := time.Date(2026, 11, 22, 4, 35, 12, 0, time.UTC)
	r := &Run{ID: NewID(now), Kind: Drill, Lab: "x", Started: now}
	if !strings.HasPrefix(r.ID, "20261122-043512-") || !validID(r.ID) {
		t.Fatalf("id %q", r.ID)
	}
	if err := Save(home, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteCSV(home, r.ID, "ops.csv", []string{"op", "id"}, [][]string{{"w", "1"}, {"w", "2"}}); err != nil {
		t.Fatal(err)
	}
	got, err := Load(home, r.ID)
	if err != nil || got.Kind != Drill || got.Lab != "x" {
		t.Fatalf("load: %+v %v", got, err)
	}
	if rows := ReadCSV(home, r.ID, "ops.csv"); len(rows) != 2 || rows[1][1] != "2" {
		t.Errorf("rows %v", rows)
	}
	if rows := ReadCSV(home, r.ID, "missing.csv"); rows != nil {
		t.Errorf("a missing file reads as no rows, got %v", rows)
	}
	if ids := List(home); len(ids) != 1 || ids[0] != r.ID {
		t.Errorf("list %v", ids)
	}
	for _, bad := range []string{"nosuch", "../../etc", "..", "a/b", ""} {
		if _, err := Load(home, bad); !hderr.IsUser(err) {
			t.Errorf("Load(%q): want a user error, got %v", bad, err)
		}
	}
}
