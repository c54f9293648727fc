package chaos

import (
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/infra/disk"
	"github.com/hadrill/hadrill/internal/plan"
)

func volumesPlan() *plan.Plan {
	return &plan.Plan{Lab: "dk", Disks: plan.NewDisks("/tmp/dk"), Nodes: []plan.Node{
		{Name: "db1", Volumes: []plan.Volume{{Name: "data", Device: "db1-data"}, {Name: "logs", Device: "db1-logs"}}},
		{Name: "db2"},
	}}
}

func TestDiskFaultResolve(t *testing.T) {
	p := volumesPlan()
	f := Disk{Node: "db1", EIO: []string{"fsync"}, Share: "1%", Volumes: []string{"logs"}}
	vols, err := f.Resolve(p)
	if err != nil || len(vols) != 1 || vols[0].Name != "logs" || f.Rate != 0.01 {
		t.Fatalf("resolve: %v %v rate %g", vols, err, f.Rate)
	}
	if vols, _ := (&Disk{Node: "db1", Full: true}).Resolve(p); len(vols) != 2 {
		t.Errorf("without --volume every volume: %v", vols)
	}
	for _, c := range []struct {
		f    Disk
		want []string
	}{
		{Disk{Node: "db9"}, []string{`NODE: "db9" is not a node of lab dk (nodes: db1, db2)`, "give at least one of --eio, --full, --stall, --slow, --lose-unsynced"}},
		{Disk{Node: "db2", Full: true}, []string{"NODE: db2 has no emulated volume (its data is on this computer's own disk)"}},
		{Disk{Node: "db1", Share: "150%", Slow: 0.5, Stall: -time.Second, Volumes: []string{"tmp"}, EIO: []string{"trim"}},
			[]string{`--rate: expected a share above 0 and at most 100%, got "150%"`, `--volume: db1 has no volume "tmp" (volumes: data, logs)`,
				"--stall: expected a duration", `--eio: expected read, write or fsync, got "trim"`, "--slow: expected a factor from 1 to 1000, got 0.5"}},
		{Disk{Node: "db1", Share: "5%", Full: true}, []string{"--rate: the share of IOs --eio fails; give --eio too"}},
	} {
		_, err := c.f.Resolve(p)
		if !hderr.IsUser(err) {
			t.Fatalf("%+v: want a user error, got %v", c.f, err)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: %q missing from\n%v", c.f, w, err)
			}
		}
	}
}

func TestDiskFaultApply(t *testing.T) {
	at := time.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC)
	now := disk.Faults{EIO: []string{"read"}, Slow: 3}
	got := Disk{EIO: []string{"fsync", "read"}, Rate: 0.5, Stall: 10 * time.Second, LoseUnsynced: true}.Apply(now, at)
	if strings.Join(got.EIO, ",") != "read,fsync" || got.Rate != 0.5 || got.Slow != 3 || !got.StallUntil.Equal(at.Add(10*time.Second)) || !got.LoseUnsynced {
		t.Errorf("faults add to those in force: %+v", got)
	}
	if s := (Disk{EIO: []string{"fsync"}, Rate: 0.01, Full: true, Slow: 4, LoseUnsynced: true, Volumes: []string{"logs"}}).String(); s != "eio fsync 1%, full, slow ×4, lose-unsynced on logs" {
		t.Errorf("label %q", s)
	}
}
