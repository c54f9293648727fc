package backup

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
)

func TestArchiveCopiesOnlyWhatIsNew(t *testing.T) {
	dir := t.TempDir()
	n := &plan.Node{Name: "db1", DataDir: filepath.Join(dir, "data")}
	arch := filepath.Join(dir, "archive", "db1")
	if err := ArchiveBinlogs(n, arch); err != nil {
		t.Fatalf("no datadir yet: %v", err)
	}
	must(t, os.MkdirAll(n.DataDir, 0o755))
	write := func(name, text string) { must(t, os.WriteFile(filepath.Join(n.DataDir, name), []byte(text), 0o640)) }
	write("binlog.000001", "abc")
	write("binlog.index", "./binlog.000001\n")
	write("binlog.state", "x")
	write("ibdata1", "not a binlog")
	must(t, ArchiveBinlogs(n, arch))
	write("binlog.000001", "abcdef") // the server appended
	write("binlog.000002", "gh")
	must(t, ArchiveBinlogs(n, arch))
	got, err := Binlogs(arch)
	if err != nil || strings.Join(got, ",") != "binlog.000001,binlog.000002" {
		t.Fatalf("archived %v (%v)", got, err)
	}
	if b, _ := os.ReadFile(filepath.Join(arch, "binlog.000001")); string(b) != "abcdef" {
		t.Errorf("archive copy %q, want the whole file", b)
	}
	// the archive never shrinks or rewrites what it has
	must(t, os.WriteFile(filepath.Join(arch, "binlog.000002"), []byte("GH"), 0o640))
	must(t, ArchiveBinlogs(n, arch))
	if b, _ := os.ReadFile(filepath.Join(arch, "binlog.000002")); string(b) != "GH" {
		t.Errorf("archived bytes were copied again: %q", b)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

type labs struct{ existing map[string]bool }

func (l labs) Exists(name string) bool { return l.existing[name] }
func (labs) Up(context.Context, *spec.Spec, string) (*plan.Node, Servers, error) {
	panic("a refused restore must create nothing")
}
func (labs) Down(context.Context, string) error { return nil }

func TestRestoreRefusesBeforeCreating(t *testing.T) {
	p := &plan.Plan{Lab: "src", Dir: t.TempDir(), Clusters: []plan.Cluster{{Name: "db", Nodes: []string{"db1"}}},
		Nodes: []plan.Node{{Name: "db1", Cluster: "db", Profile: "durable"}}}
	plan.Complete(p)
	l := &Lab{Plan: p}
	ctx := context.Background()
	// every problem at once: a bad target, a taken name, an unknown cluster
	_, err := l.Restore(ctx, labs{existing: map[string]bool{"taken": true}}, RestoreOptions{To: "yesterday-ish", As: "taken", Cluster: "nope"})
	if !hderr.IsUser(err) {
		t.Fatalf("want a user error, got %v", err)
	}
	for _, want := range []string{"--to", `--as: lab "taken" exists`, `--cluster: unknown cluster "nope"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in %v", want, err)
		}
	}
	_, err = l.Restore(ctx, labs{}, RestoreOptions{To: "2026-01-01 00:00:00", As: "BAD/NAME"})
	if !hderr.IsUser(err) || !strings.Contains(err.Error(), "--as") {
		t.Errorf("a lab name that is a path: %v", err)
	}
	_, err = l.Restore(ctx, labs{}, RestoreOptions{To: "2026-01-01 00:00:00", Cluster: "db"})
	if !hderr.IsUser(err) || !strings.Contains(err.Error(), "no backup") {
		t.Errorf("no backup yet: %v", err)
	}
	if s := l.restoreSpec("db", "srcr"); s.Clusters[0].Kind != spec.KindStandalone || s.Clusters[0].Profile != "durable" {
		t.Errorf("restored lab: %+v", s.Clusters[0])
	}
}

// A cluster without a binary log has nothing to replay: neither a backup
// (the start of a point-in-time restore) nor a restore is taken.
func TestNoBinlogRefused(t *testing.T) {
	p := &plan.Plan{Lab: "src", Dir: t.TempDir(), Clusters: []plan.Cluster{{Name: "db", Nodes: []string{"db1"}, NoBinlog: true}},
		Nodes: []plan.Node{{Name: "db1", Cluster: "db"}}}
	plan.Complete(p)
	l := &Lab{Plan: p}
	_, err := l.Backup(context.Background(), "db1")
	if !hderr.IsUser(err) || !strings.Contains(err.Error(), "runs without a binary log") {
		t.Errorf("backup: %v", err)
	}
	_, err = l.Restore(context.Background(), labs{}, RestoreOptions{To: "2026-01-01 00:00:00", Cluster: "db"})
	if !hderr.IsUser(err) || !strings.Contains(err.Error(), `--cluster: cluster "db" runs without a binary log`) {
		t.Errorf("restore: %v", err)
	}
}
