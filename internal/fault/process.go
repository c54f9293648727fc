package fault

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/supervise"
)

// Servers is what process faults need of a lab's servers.
type Servers interface {
	Pid(n *plan.Node) int    // the server's pid while it runs, else 0
	Stop(n *plan.Node) error // a clean shutdown
}

// Process kills (SIGKILL), stops (clean shutdown), pauses (SIGSTOP) or
// resumes (SIGCONT) the servers of nodes, after checking every node can
// take it (all problems at once, nothing done). It records the fault once
// it took effect, also when it failed part-way (what was done is in the log).
func Process(ctx context.Context, p *plan.Plan, s Servers, log Log, kind Kind, names []string, progress func(string)) error {
	if kind != Kill && kind != Stop && kind != Pause && kind != Resume {
		return fmt.Errorf("%s is not a process fault", kind)
	}
	if len(names) == 0 {
		return hderr.User("NODE: name at least one node (nodes: %s)", strings.Join(p.NodeNames(), ", "))
	}
	if err := p.CheckNodes(names); err != nil {
		return err
	}
	var nodes []*plan.Node
	for _, name := range names {
		n, _ := p.Node(name)
		nodes = append(nodes, n)
	}
	var problems []string
	for _, n := range nodes {
		pid := s.Pid(n)
		switch {
		case pid == 0:
			problems = append(problems, fmt.Sprintf("NODE: %s is not running", n.Name))
		case kind == Resume && !supervise.Paused(pid):
			problems = append(problems, fmt.Sprintf("NODE: %s is not paused", n.Name))
		case kind == Pause && supervise.Paused(pid):
			problems = append(problems, fmt.Sprintf("NODE: %s is paused already", n.Name))
		}
	}
	if err := hderr.Users(problems); err != nil {
		return err
	}
	at := time.Now().UTC()
	var done []string
	for _, n := range nodes {
		pid := s.Pid(n)
		var err error
		switch kind {
		case Kill:
			err = syscall.Kill(pid, syscall.SIGKILL)
			supervise.WaitGone(pid, 10*time.Second)
		case Stop:
			err = s.Stop(n)
		case Pause:
			err = supervise.Pause(pid)
		case Resume:
			err = supervise.Resume(pid)
		}
		if err != nil {
			ferr := fmt.Errorf("%s %s: %w", kind, n.Name, err)
			if len(done) == 0 {
				return ferr
			}
			return errors.Join(ferr, log.Append(Record{Fault: kind, Targets: done, At: at}))
		}
		done = append(done, n.Name)
		if progress != nil {
			progress(fmt.Sprintf("%s: %s", n.Name, kind))
		}
	}
	return log.Append(Record{Fault: kind, Targets: done, At: at})
}
