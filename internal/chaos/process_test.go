package chaos

import (
	"context"
	"database/sql"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/sqlfake"
	"github.com/hadrill/hadrill/internal/supervise"
)

// sleepers stands in for a lab's servers: each node is a sleep process.
type sleepers struct {
	pids    map[string]int
	stopped []string
	sql     *sqlfake.Servers // the servers' answers over SQL (nil: none)
}

func (s *sleepers) Admin(n *plan.Node) *sql.DB {
	if s.sql == nil {
		s.sql = &sqlfake.Servers{}
	}
	return s.sql.DB(n.Name)
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
	s := startSleepers(t, "db1", "db2")
	l := newFakeLab(t, p, s)
	ctx := context.Background()
	inject := func(k fault.Kind, names ...string) error { return Process{Kind: k, Names: names}.Inject(ctx, l) }

	// refused, all problems at once, nothing done and nothing recorded
	if err := inject(fault.Resume, "db1", "db3", "db9"); !hderr.IsUser(err) || !strings.Contains(err.Error(), "db9") {
		t.Fatalf("unknown node: %v", err)
	}
	err := inject(fault.Resume, "db1", "db3")
	if !hderr.IsUser(err) || !strings.Contains(err.Error(), "db1 is not paused") || !strings.Contains(err.Error(), "db3 is not running") {
		t.Fatalf("want both problems, got %v", err)
	}
	if err := inject(fault.Heal, "db1"); err == nil {
		t.Fatal("heal is not a process fault")
	}
	// a dry kill checks and changes nothing
	if err := (Process{Kind: fault.Kill, Names: []string{"db1"}}).Inject(fault.Dry(ctx), l); err != nil || !supervise.Alive(s.pids["db1"]) {
		t.Fatalf("a dry kill of a running node: %v", err)
	}
	if got := l.labels(); got != "" {
		t.Fatalf("refused faults were recorded: %v", got)
	}

	if err := inject(fault.Pause, "db1"); err != nil || !eventually(func() bool { return supervise.Paused(s.pids["db1"]) }) {
		t.Fatalf("pause: %v", err)
	}
	if err := inject(fault.Pause, "db1"); !hderr.IsUser(err) {
		t.Fatalf("pausing a paused server: %v", err)
	}
	if err := inject(fault.Resume, "db1"); err != nil || !eventually(func() bool { return !supervise.Paused(s.pids["db1"]) }) {
		t.Fatalf("resume: %v", err)
	}
	if err := inject(fault.Stop, "db2"); err != nil || len(s.stopped) != 1 {
		t.Fatalf("stop went through %v: %v", s.stopped, err)
	}
	if err := inject(fault.Pause, "db1"); err != nil {
		t.Fatal(err)
	}
	if err := Heal(ctx, l); err != nil || !eventually(func() bool { return !supervise.Paused(s.pids["db1"]) }) {
		t.Fatalf("heal resumes a paused server: %v", err)
	}
	if err := inject(fault.Kill, "db1"); err != nil || supervise.Alive(s.pids["db1"]) {
		t.Fatalf("kill: %v", err)
	}
	if got := l.labels(); got != "pause db1; resume db1; stop db2; pause db1; kill db1" {
		t.Fatalf("fault log: %s", got)
	}
	if got := strings.Join(l.did, ","); got != "save,save" {
		t.Errorf("the lab's state is saved after a stop and a kill: %s", got)
	}
}

// Load balancer hosts take kill (their proxy) and nothing else, never
// in the same command as nodes.
func TestProcessFaultsOnBalancers(t *testing.T) {
	p := &plan.Plan{Lab: "t", Nodes: []plan.Node{{Name: "db1"}}, LoadBalancers: []plan.LB{{Name: "lb", Instances: []plan.LBInstance{{Host: "lb1"}, {Host: "lb2"}}}}}
	l := newFakeLab(t, p, &sleepers{})
	ctx := context.Background()
	for _, c := range []struct {
		f    Fault
		want string
	}{
		{Process{Kind: fault.Pause, Names: []string{"lb1"}}, "lb1 is a load balancer host: it takes kill"},
		{Process{Kind: fault.Kill, Names: []string{"db1", "lb1"}}, "in two commands"},
		{KillBalancers{"lb1", "db1"}, `"db1" is not a load balancer host`},
	} {
		if err := c.f.Inject(ctx, l); !hderr.IsUser(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%#v: %v, want %q", c.f, err, c.want)
		}
	}
	if err := (Process{Kind: fault.Kill, Names: []string{"lb2"}}).Inject(ctx, l); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(l.did, ","); got != "kill proxy lb2" || l.labels() != "kill lb2" {
		t.Errorf("did %s, log %q", got, l.labels())
	}
}

// eventually: a signal takes effect a moment after it was sent.
func eventually(f func() bool) bool {
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if f() {
			return true
		}
	}
	return false
}
