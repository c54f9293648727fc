package fault

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/plan"
)

// Servers is what process faults need of a lab's servers.
type Servers interface {
	Process(n *plan.Node) (host.Process, error)    // the server's process, from its host
	Stop(n *plan.Node) error                       // a clean shutdown
	Kill(n *plan.Node) error                       // SIGKILL, returning once it has gone
	Signal(n *plan.Node, sig syscall.Signal) error // SIGSTOP, SIGCONT
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
		proc, err := s.Process(n)
		switch {
		case err != nil:
			return err
		case proc.Pid == 0:
			problems = append(problems, fmt.Sprintf("NODE: %s is not running", n.Name))
		case kind == Resume && !proc.Paused:
			problems = append(problems, fmt.Sprintf("NODE: %s is not paused", n.Name))
		case kind == Pause && proc.Paused:
			problems = append(problems, fmt.Sprintf("NODE: %s is paused already", n.Name))
		}
	}
	if err := hderr.Users(problems); err != nil {
		return err
	}
	if IsDry(ctx) {
		return nil
	}
	at := time.Now().UTC()
	var done []string
	for _, n := range nodes {
		var err error
		switch kind {
		case Kill:
			err = s.Kill(n)
		case Stop:
			err = s.Stop(n)
		case Pause:
			err = s.Signal(n, syscall.SIGSTOP)
		case Resume:
			err = s.Signal(n, syscall.SIGCONT)
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
