package lab

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/netem"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/supervise"
)

// ProcessFault kills (SIGKILL), stops (clean shutdown), pauses (SIGSTOP) or
// resumes (SIGCONT) the servers of nodes.
func (l *Lab) ProcessFault(ctx context.Context, verb string, names []string) error {
	if !contains([]string{"kill", "stop", "pause", "resume"}, verb) {
		return fmt.Errorf("unknown process fault %q", verb)
	}
	if len(names) == 0 {
		return hderr.User("NODE: name at least one node (nodes: %s)", strings.Join(l.Plan.NodeNames(), ", "))
	}
	if err := l.CheckNodes(names); err != nil {
		return err
	}
	var problems []string
	for _, n := range l.Nodes(names) {
		pid := l.Pid(n)
		switch {
		case pid == 0:
			problems = append(problems, fmt.Sprintf("NODE: %s is not running", n.Name))
		case verb == "resume" && !supervise.Paused(pid):
			problems = append(problems, fmt.Sprintf("NODE: %s is not paused", n.Name))
		case verb == "pause" && supervise.Paused(pid):
			problems = append(problems, fmt.Sprintf("NODE: %s is paused already", n.Name))
		}
	}
	if err := hderr.Users(problems); err != nil {
		return err
	}
	at := time.Now().UTC()
	for _, n := range l.Nodes(names) {
		pid := l.Pid(n)
		var err error
		switch verb {
		case "kill":
			err = syscall.Kill(pid, syscall.SIGKILL)
			supervise.WaitGone(pid, 10*time.Second)
		case "stop":
			err = l.stopServer(n, stopGrace)
		case "pause":
			err = supervise.Pause(pid)
		case "resume":
			err = supervise.Resume(pid)
		}
		if err != nil {
			return errors.Join(fmt.Errorf("%s %s: %w", verb, n.Name, err), l.RecordFault(fault.Record{Fault: verb, Targets: names, At: at}))
		}
		l.logf("%s: %s", n.Name, verb)
	}
	if err := l.RecordFault(fault.Record{Fault: verb, Targets: names, At: at}); err != nil {
		return err
	}
	if verb == "kill" || verb == "stop" {
		return l.saveDerived(ctx)
	}
	return nil
}

// Partition cuts hosts off: no packet passes between a host of the side and
// a host of from (default: everyone else).
func (l *Lab) Partition(ctx context.Context, targets, from []string) error {
	if err := l.needNetns("partition"); err != nil {
		return err
	}
	cut, err := fault.Partition(l.Plan, targets, from)
	if err != nil {
		return err
	}
	at := time.Now().UTC()
	if err := cut.Apply(ctx, l.hosts); err != nil {
		return err
	}
	l.logf("partitioned %s from %s", strings.Join(fault.Names(cut.Side), ","), strings.Join(fault.Names(cut.From), ","))
	return l.RecordFault(fault.Record{Fault: "partition", Targets: fault.Names(cut.Side), From: fault.Names(cut.From), At: at})
}

// Heal undoes every fault: partitions are lifted, paused servers resumed,
// servers that were killed or stopped started again (a cluster whose every
// node is down is recovered from its most advanced node), links get the
// spec's values and a dead WAN emulator is restarted.
func (l *Lab) Heal(ctx context.Context) (err error) {
	at := time.Now().UTC()
	defer func() {
		if err == nil {
			err = l.RecordFault(fault.Record{Fault: "heal", At: at})
		}
	}()
	if l.Plan.Mode == plan.ModeNetns {
		if err := fault.Lift(ctx, l.hosts, l.Plan.Hosts); err != nil {
			return err
		}
	}
	if err := l.wan.Heal(ctx); err != nil {
		return err
	}
	for _, n := range l.Nodes(nil) {
		if pid := l.Pid(n); pid != 0 && supervise.Paused(pid) {
			if err := supervise.Resume(pid); err != nil {
				return err
			}
			l.logf("%s: resumed", n.Name)
		}
	}
	return l.startAll(ctx)
}

func (l *Lab) needNetns(verb string) error {
	if l.Plan.Mode != plan.ModeNetns {
		return hderr.User("fault %s: network faults need network namespaces (run as root); lab %s runs rootless", verb, l.Plan.Lab)
	}
	return nil
}

// LinkFault changes a link's delay, loss or bandwidth (recorded as a fault;
// heal restores the spec's values).
func (l *Lab) LinkFault(ctx context.Context, ch netem.Change) error {
	if err := l.needNetns(ch.Verb); err != nil {
		return err
	}
	rec := fault.Record{Fault: ch.Verb, Targets: []string{ch.Link}, Value: ch.Value, At: time.Now().UTC()}
	if err := l.wan.Change(ctx, ch); err != nil {
		return err
	}
	return l.RecordFault(rec)
}

// RecordFault appends a fault (or a drill step) to the lab's fault log,
// once it took effect (see fault.Log).
func (l *Lab) RecordFault(r fault.Record) error { return fault.Log(l.Plan.FaultLog).Append(r) }

// Faults lists the faults injected between from and to.
func (l *Lab) Faults(from, to time.Time) []fault.Record {
	return fault.Log(l.Plan.FaultLog).Between(from, to)
}
