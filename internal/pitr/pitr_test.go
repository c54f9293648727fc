package pitr

import (
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/replication"
)

func pos(s string) replication.Position { p, _ := replication.ParsePosition(s); return p }

func TestParseTarget(t *testing.T) {
	if tt, err := ParseTarget("2026-11-22T10:04:05Z"); err != nil || tt.Time.IsZero() {
		t.Fatal(tt, err)
	}
	if tt, err := ParseTarget("2026-11-22 10:04:05"); err != nil || tt.Time.Location() != time.Local {
		t.Fatal(tt, err)
	}
	if tt, err := ParseTarget("1-100-57"); err != nil || tt.GTID[1].Seq != 57 {
		t.Fatal(tt, err)
	}
	for _, bad := range []string{"", "yesterday", "1-100", "2026-13-01 10:00:00"} {
		if _, err := ParseTarget(bad); !hderr.IsUser(err) {
			t.Fatalf("%q: %v", bad, err)
		}
	}
}

func TestChoose(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	bs := []Backup{
		{ID: "a", Finished: t0, GTID: pos("1-100-10")},
		{ID: "b", Finished: t0.Add(time.Hour), GTID: pos("1-100-50")},
	}
	last := t0.Add(2 * time.Hour)
	archived := pos("1-100-90")
	cases := []struct {
		name string
		to   Target
		want string // backup id, or "" for a refusal
	}{
		{"between backups: the earlier one", Target{Time: t0.Add(30 * time.Minute)}, "a"},
		{"after both: the later one", Target{Time: t0.Add(90 * time.Minute)}, "b"},
		{"exactly at a backup", Target{Time: t0.Add(time.Hour)}, "b"},
		{"before the oldest backup", Target{Time: t0.Add(-time.Minute)}, ""},
		{"after the last archived event", Target{Time: last.Add(time.Minute)}, ""},
		{"within the last archived second", Target{Time: last.Add(500 * time.Millisecond)}, "b"},
		{"GTID between backups", Target{GTID: pos("1-100-30")}, "a"},
		{"GTID after the later backup", Target{GTID: pos("1-100-60")}, "b"},
		{"GTID before the oldest backup", Target{GTID: pos("1-100-5")}, ""},
		{"GTID past the archive", Target{GTID: pos("1-100-91")}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := Choose(bs, c.to, last, archived)
			if c.want == "" {
				if !hderr.IsUser(err) {
					t.Fatalf("want a refusal, got %+v %v", b, err)
				}
				return
			}
			if err != nil || b.ID != c.want {
				t.Fatalf("got %+v %v, want %s", b, err, c.want)
			}
		})
	}
	if _, err := Choose(nil, Target{Time: t0}, last, archived); !hderr.IsUser(err) {
		t.Fatal("no backups must be refused")
	}
}
