package backup

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/pitr"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/replication"
	"github.com/hadrill/hadrill/internal/spec"
)

// The archive copies only what is new in a node's binary logs, read where
// they are on this computer or pulled from the node's host in one round
// trip (a binary log's bytes may hold anything, newlines and the pull's
// header shape included).
func TestArchiveCopiesOnlyWhatIsNew(t *testing.T) {
	ctx := context.Background()
	for name, archive := range map[string]func(n *plan.Node, dir string) error{
		"read here":            ArchiveBinlogs,
		"pulled from its host": func(n *plan.Node, dir string) error { return PullBinlogs(ctx, shHost{}, n, dir) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			n := &plan.Node{Name: "db1", DataDir: filepath.Join(dir, "data")}
			arch := filepath.Join(dir, "archive", "db1")
			if err := archive(n, arch); err != nil {
				t.Fatalf("no datadir yet: %v", err)
			}
			must(t, os.MkdirAll(n.DataDir, 0o755))
			write := func(name, text string) { must(t, os.WriteFile(filepath.Join(n.DataDir, name), []byte(text), 0o640)) }
			write("binlog.000001", "ab\nc")
			write("binlog.index", "./binlog.000001\n")
			write("binlog.state", "x")
			write("ibdata1", "not a binlog")
			must(t, archive(n, arch))
			write("binlog.000001", "ab\ncdef 7\n") // the server appended
			write("binlog.000002", "gh")
			must(t, archive(n, arch))
			got, err := Binlogs(arch)
			if err != nil || strings.Join(got, ",") != "binlog.000001,binlog.000002" {
				t.Fatalf("archived %v (%v)", got, err)
			}
			if b, _ := os.ReadFile(filepath.Join(arch, "binlog.000001")); string(b) != "ab\ncdef 7\n" {
				t.Errorf("archive copy %q, want the whole file", b)
			}
			// the archive never shrinks or rewrites what it has
			must(t, os.WriteFile(filepath.Join(arch, "binlog.000002"), []byte("GH"), 0o640))
			must(t, archive(n, arch))
			if b, _ := os.ReadFile(filepath.Join(arch, "binlog.000002")); string(b) != "GH" {
				t.Errorf("archived bytes were copied again: %q", b)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

type labs struct {
	existing map[string]bool
	place    error // what Check says
}

func (l labs) Exists(name string) bool { return l.existing[name] }
func (l labs) Check(*spec.Spec) error  { return l.place }
func (labs) Up(context.Context, *spec.Spec, string) (*Restored, error) {
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
	// where the new lab would go is checked with the rest
	_, err = l.Restore(ctx, labs{place: hderr.User("--inventory: hosts.db1: required")}, RestoreOptions{To: "soon", Cluster: "db"})
	if !hderr.IsUser(err) || !strings.Contains(err.Error(), "--to") || !strings.Contains(err.Error(), "hosts.db1") {
		t.Errorf("a bad target and a bad place: %v", err)
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

// shHost runs a host's commands on this computer (the pull script is
// shell, tested as such).
type shHost struct{ host.Host }

func (shHost) Name() string { return "h1" }
func (shHost) Run(ctx context.Context, argv []string, _ io.Reader) ([]byte, error) {
	return exec.CommandContext(ctx, argv[0], argv[1:]...).Output()
}

func TestParsePull(t *testing.T) {
	for _, c := range []struct {
		out, want, err string
	}{
		{out: "", want: ""},
		{out: "binlog.000001 0\nbinlog.000002 3\na\nb", want: "binlog.000001=;binlog.000002=a\nb"},
		{out: "binlog.000001 5\nabc", err: "5 bytes announced, 3 came"},
		{out: "../etc/passwd 1\nx", err: "not a binary log's name"},
		{out: "binlog.000001 x\n", err: `expected "NAME COUNT"`},
		{out: "binlog.000001 -1\n", err: `expected "NAME COUNT"`},
		{out: "binlog.000001 1", err: "without its end"},
	} {
		chunks, err := parsePull([]byte(c.out))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.out, err, c.err)
			}
			continue
		}
		var got []string
		for _, ch := range chunks {
			got = append(got, ch.name+"="+string(ch.data))
		}
		if err != nil || strings.Join(got, ";") != c.want {
			t.Errorf("%q: %q (%v), want %q", c.out, strings.Join(got, ";"), err, c.want)
		}
	}
}

// Attach runs argv here with its standard streams.
func (shHost) Attach(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer) error {
	c := exec.CommandContext(ctx, argv[0], argv[1:]...)
	c.Stdin, c.Stdout, c.Stderr = stdin, stdout, stderr
	return c.Run()
}

// A copy goes from one host's command into another's; when either fails
// the other ends and the error names the one that failed, with what it said.
func TestPipe(t *testing.T) {
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "copy")
	var log strings.Builder
	if err := pipe(ctx, shHost{}, []string{"sh", "-c", "seq 1 100000; echo done >&2"}, shHost{}, []string{"sh", "-c", `cat > "$1"`, "sh", out}, &log); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); !strings.HasSuffix(string(b), "\n100000\n") || log.String() != "done\n" {
		t.Errorf("copied %d bytes, log %q", len(b), log.String())
	}
	err := pipe(ctx, shHost{}, []string{"sh", "-c", "echo half; echo no room >&2; exit 3"}, shHost{}, []string{"cat"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "sh on h1: exit status 3") || !strings.Contains(err.Error(), "no room") {
		t.Errorf("a failing source: %v", err)
	}
	// a failing destination ends a source that would write for ever
	err = pipe(ctx, shHost{}, []string{"yes"}, shHost{}, []string{"sh", "-c", "head -c 10 >/dev/null; echo broken >&2; exit 4"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "sh on h1: exit status 4") || !strings.Contains(err.Error(), "broken") {
		t.Errorf("a failing destination: %v", err)
	}
}

func TestClockWarnings(t *testing.T) {
	log := filepath.Join(t.TempDir(), "faults.jsonl")
	p := &plan.Plan{Lab: "t", FaultLog: log, Clusters: []plan.Cluster{{Name: "db", Nodes: []string{"db1", "db2"}}, {Name: "dr", Nodes: []string{"dr1"}}}}
	at := func(s int) time.Time { return time.Unix(1_800_000_000+int64(s), 0) }
	for _, r := range []fault.Record{
		{At: at(10), Fault: fault.Clock, Targets: []string{"db2"}, Value: "+1m0s"},
		{At: at(10), Fault: fault.Clock, Targets: []string{"dr1"}, Value: "+1h0m0s"}, // another cluster's node
		{At: at(30), Fault: fault.Heal},
	} {
		if err := fault.Log(log).Append(r); err != nil {
			t.Fatal(err)
		}
	}
	l := &Lab{Plan: p}
	gtid, _ := replication.ParsePosition("1-101-50")
	b := pitr.Backup{ID: "b1", Cluster: "db", Finished: at(0), GTID: gtid}
	w := l.clockWarnings("db", "db2", b, pitr.Target{Time: at(20)})
	if len(w) != 1 || !strings.Contains(w[0], "db2's clock was +1m0s") || !strings.Contains(w[0], "written through it carry that time") || !strings.Contains(w[0], "(the archive replayed is its binary log)") ||
		!strings.Contains(w[0], "--to 1-101-50") {
		t.Errorf("a time target over the archive node's clock fault: %q", w)
	}
	if w := l.clockWarnings("db", "db1", b, pitr.Target{Time: at(20)}); len(w) != 1 || !strings.Contains(w[0], "may land off") || strings.Contains(w[0], "the archive replayed") {
		t.Errorf("a time target over another node's clock fault: %q", w)
	}
	// a target before the fault, a GTID target, a backup after the heal: nothing to say
	for _, c := range []struct {
		b pitr.Backup
		t pitr.Target
	}{{b, pitr.Target{Time: at(5)}}, {b, pitr.Target{GTID: gtid}}, {pitr.Backup{Finished: at(40)}, pitr.Target{Time: at(50)}}} {
		if w := l.clockWarnings("db", "db2", c.b, c.t); len(w) != 0 {
			t.Errorf("%+v to %v: %q", c.b, c.t, w)
		}
	}
}
