package lab

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/netem"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/supervise"
)

// faultChain is the iptables chain partitions add their rules to, in each
// host's own namespace (removed with it; `heal` flushes it).
const faultChain = "HDFAULT"

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
	var added []rule
	for _, h := range cut.Side {
		if err := l.chain(ctx, h); err != nil {
			return l.undoRules(added, err)
		}
		for _, o := range cut.From {
			for _, dir := range [][]string{{"-s", o.Address}, {"-d", o.Address}} {
				r := append(append([]string{faultChain}, dir...), "-j", "DROP")
				if err := l.iptables(ctx, h, append([]string{"-A"}, r...)...); err != nil {
					return l.undoRules(added, err)
				}
				added = append(added, rule{h, r})
			}
		}
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
		for _, h := range l.Plan.Hosts {
			if err := l.iptables(ctx, h, "-F", faultChain); err != nil && !strings.Contains(err.Error(), "No chain") {
				return err
			}
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

// rule is an iptables rule added to a host's fault chain.
type rule struct {
	h    plan.Host
	args []string
}

// undoRules removes the rules a partition added before it failed (or was
// interrupted): a fault takes effect whole or not at all.
func (l *Lab) undoRules(added []rule, cause error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	errs := []error{cause}
	for i := len(added) - 1; i >= 0; i-- {
		errs = append(errs, l.iptables(ctx, added[i].h, append([]string{"-D"}, added[i].args...)...))
	}
	return errors.Join(errs...)
}

func (l *Lab) needNetns(verb string) error {
	if l.Plan.Mode != plan.ModeNetns {
		return hderr.User("fault %s: network faults need network namespaces (run as root); lab %s runs rootless", verb, l.Plan.Lab)
	}
	return nil
}

// chain makes sure the host's fault chain exists and is jumped to.
func (l *Lab) chain(ctx context.Context, h plan.Host) error {
	if err := l.iptables(ctx, h, "-N", faultChain); err != nil && !strings.Contains(err.Error(), "exists") {
		return err
	}
	for _, hook := range []string{"INPUT", "OUTPUT"} {
		if l.iptables(ctx, h, "-C", hook, "-j", faultChain) != nil {
			if err := l.iptables(ctx, h, "-I", hook, "-j", faultChain); err != nil {
				return err
			}
		}
	}
	return nil
}

func (l *Lab) iptables(ctx context.Context, h plan.Host, args ...string) error {
	return l.hosts.Run(ctx, h.Name, append([]string{"iptables", "-w"}, args...)...)
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

func (l *Lab) faultsFile() string { return filepath.Join(l.Plan.Dir, "faults.jsonl") }

// RecordFault appends a fault (or a drill step) to the lab's fault log, once
// it took effect; At is when it began (now when not given). Faults are
// recorded under the lab's writer lock, so the log's order is the order in
// which they took effect.
func (l *Lab) RecordFault(r fault.Record) error {
	if r.At.IsZero() {
		r.At = time.Now().UTC()
	}
	f, err := os.OpenFile(l.faultsFile(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return err
	}
	defer f.Close()
	return json.NewEncoder(f).Encode(r)
}

// Faults lists the faults injected between from and to.
func (l *Lab) Faults(from, to time.Time) []fault.Record {
	f, err := os.Open(l.faultsFile())
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []fault.Record
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r fault.Record
		if json.Unmarshal(sc.Bytes(), &r) == nil && !r.At.Before(from) && !r.At.After(to) {
			out = append(out, r)
		}
	}
	return out
}
