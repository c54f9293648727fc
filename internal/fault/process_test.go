package fault

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/supervise"
)

// sleepers stands in for a lab's servers: each node is a sleep process.
type sleepers struct {
	pids    map[string]int
	stopped []string
}

func (s *sleepers) Process(n *plan.Node) (host.Process, error) {
	pid := s.pids[n.Name]
	if !supervise.Alive(pid) {
		return host.Process{}, nil
	}
	return host.Process{Pid: pid, Paused: supervise.Paused(pid)}, nil
}

func (s *sleepers) Kill(n *plan.Node) error { return supervise.Kill(s.pids[n.Name]) }

func (s *sleepers) Signal(n *plan.Node, sig syscall.Signal) error {
	return syscall.Kill(s.pids[n.Name], sig)
}

func (s *sleepers) Stop(n *plan.Node) error {
	s.stopped = append(s.stopped, n.Name)
	return supervise.Stop(s.pids[n.Name], time.Second)
}

func startSleepers(t *testing.T, names ...string) *sleepers {
	s := &sleepers{pids: map[string]int{}}
	for _, name := range names {
		cmd := exec.Command("sleep", "60")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { _ = cmd.Wait() }()
		s.pids[name] = cmd.Process.Pid
		t.Cleanup(func() { _ = cmd.Process.Kill() })
	}
	return s
}

func TestProcessFaults(t *testing.T) {
	p := &plan.Plan{Lab: "t", Nodes: []plan.Node{{Name: "db1"}, {Name: "db2"}, {Name: "db3"}}}
	log := Log(filepath.Join(t.TempDir(), "faults.jsonl"))
	s := startSleepers(t, "db1", "db2")
	ctx := context.Background()

	// refused, all problems at once, nothing done and nothing recorded
	err := Process(ctx, p, s, log, Resume, []string{"db1", "db3", "db9"}, nil)
	if !hderr.IsUser(err) || !strings.Contains(err.Error(), "db9") {
		t.Fatalf("unknown node: %v", err)
	}
	err = Process(ctx, p, s, log, Resume, []string{"db1", "db3"}, nil)
	if !hderr.IsUser(err) || !strings.Contains(err.Error(), "db1 is not paused") || !strings.Contains(err.Error(), "db3 is not running") {
		t.Fatalf("want both problems, got %v", err)
	}
	if err := Process(ctx, p, s, log, Heal, []string{"db1"}, nil); err == nil {
		t.Fatal("heal is not a process fault")
	}
	if got := log.Between(time.Time{}, time.Now()); len(got) != 0 {
		t.Fatalf("refused faults were recorded: %v", got)
	}

	if err := Process(ctx, p, s, log, Pause, []string{"db1"}, nil); err != nil || !eventually(func() bool { return supervise.Paused(s.pids["db1"]) }) {
		t.Fatalf("pause: %v", err)
	}
	if err := Process(ctx, p, s, log, Pause, []string{"db1"}, nil); !hderr.IsUser(err) {
		t.Fatalf("pausing a paused server: %v", err)
	}
	if err := Process(ctx, p, s, log, Resume, []string{"db1"}, nil); err != nil || !eventually(func() bool { return !supervise.Paused(s.pids["db1"]) }) {
		t.Fatalf("resume: %v", err)
	}
	if err := Process(ctx, p, s, log, Stop, []string{"db2"}, nil); err != nil || len(s.stopped) != 1 {
		t.Fatalf("stop went through %v: %v", s.stopped, err)
	}
	if err := Process(ctx, p, s, log, Kill, []string{"db1"}, nil); err != nil || supervise.Alive(s.pids["db1"]) {
		t.Fatalf("kill: %v", err)
	}
	var kinds []string
	for _, r := range log.Between(time.Time{}, time.Now()) {
		kinds = append(kinds, r.Label())
	}
	if got := strings.Join(kinds, "; "); got != "pause db1; resume db1; stop db2; kill db1" {
		t.Fatalf("fault log: %s", got)
	}
}

func TestKindsTable(t *testing.T) {
	seen := map[Kind]bool{}
	for _, e := range Kinds {
		if seen[e.Kind] || !strings.HasPrefix(e.Use, string(e.Kind)+" ") || e.Short == "" {
			t.Errorf("entry %+v: duplicate, or its usage does not start with its kind", e)
		}
		seen[e.Kind] = true
	}
	if len(Of(OnProcess)) != 4 || len(Of(OnNetwork)) != 1 || len(Of(OnLink)) != 5 {
		t.Errorf("classes: %d process, %d network, %d link", len(Of(OnProcess)), len(Of(OnNetwork)), len(Of(OnLink)))
	}
}

// eventually: a signal takes effect a moment after it was sent.
func eventually(f func() bool) bool {
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if f() {
			return true
		}
	}
	return false
}
