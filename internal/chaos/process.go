package chaos

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/lb"
	"github.com/hadrill/hadrill/internal/plan"
)

// Process kills (SIGKILL), stops (a clean shutdown), pauses (SIGSTOP) or
// resumes (SIGCONT) the servers of nodes; a kill of load balancer hosts
// kills their proxy. A kill of a node whose disks were armed with
// lose-unsynced is a power cut of them too (see Disk).
type Process struct {
	Kind  fault.Kind // fault.Kill, Stop, Pause or Resume
	Names []string
}

// processFaults are the fault kinds of this file and their heal (families lists them in heal order).
var processFaults = func() family {
	kind := func(k fault.Kind, use, short string) Kind {
		return Kind{Name: k, Use: use, Short: short, MinArgs: 1, MaxArgs: -1, ArgsWhat: "one or more node names",
			Parse: func(*pflag.FlagSet) func([]string) (Fault, error) {
				return func(a []string) (Fault, error) { return Process{Kind: k, Names: a}, nil }
			}}
	}
	return family{heal: resumeAll, kinds: []Kind{
		kind(fault.Kill, "kill NODE|LB_HOST...", "Kill -9 the servers of nodes (a crash), or the proxy of load balancer hosts"),
		kind(fault.Stop, "stop NODE...", "Stop the servers of nodes cleanly (they leave their cluster)"),
		kind(fault.Pause, "pause NODE...", "Freeze the servers of nodes (SIGSTOP): alive but silent, as under a long stall"),
		kind(fault.Resume, "resume NODE...", "Thaw paused servers (SIGCONT)"),
	}}
}()

// Inject checks every name can take the fault (all problems at once,
// nothing done), then applies it node by node. It records the fault once
// it took effect, also when it failed part-way (what was done is in the
// log).
func (f Process) Inject(ctx context.Context, l Lab) error {
	p := l.Plan()
	if f.Kind != fault.Kill && f.Kind != fault.Stop && f.Kind != fault.Pause && f.Kind != fault.Resume {
		return fmt.Errorf("%s is not a process fault", f.Kind)
	}
	var names, balancers []string
	for _, name := range f.Names {
		switch {
		case !slices.Contains(p.LBHosts(), name):
			names = append(names, name)
		case f.Kind != fault.Kill:
			return hderr.User("NODE: %s is a load balancer host: it takes kill (its proxy) or crash (the whole host), not %s", name, f.Kind)
		default:
			balancers = append(balancers, name)
		}
	}
	if len(balancers) > 0 {
		if len(names) > 0 {
			return hderr.User("NODE: kill nodes (%s) and load balancer hosts (%s) in two commands", strings.Join(names, ", "), strings.Join(balancers, ", "))
		}
		return KillBalancers(balancers).Inject(ctx, l)
	}
	err := f.apply(ctx, l)
	if fault.IsDry(ctx) {
		return err
	}
	if f.Kind == fault.Kill && err == nil {
		_, err = powerCuts(ctx, l, f.Names)
	}
	if f.Kind == fault.Kill || f.Kind == fault.Stop {
		err = errors.Join(err, l.SaveDerived())
	}
	return err
}

func (f Process) apply(ctx context.Context, l Lab) error {
	p, s := l.Plan(), l.Servers()
	if len(f.Names) == 0 {
		return hderr.User("NODE: name at least one node (nodes: %s)", strings.Join(p.NodeNames(), ", "))
	}
	if err := p.CheckNodes(f.Names); err != nil {
		return err
	}
	var nodes []*plan.Node
	for _, name := range f.Names {
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
		case f.Kind == fault.Resume && !proc.Paused:
			problems = append(problems, fmt.Sprintf("NODE: %s is not paused", n.Name))
		case f.Kind == fault.Pause && proc.Paused:
			problems = append(problems, fmt.Sprintf("NODE: %s is paused already", n.Name))
		}
	}
	if err := hderr.Users(problems); err != nil {
		return err
	}
	if fault.IsDry(ctx) {
		return nil
	}
	at := time.Now().UTC()
	var done []string
	for _, n := range nodes {
		var err error
		switch f.Kind {
		case fault.Kill:
			err = s.Kill(n)
		case fault.Stop:
			err = s.Stop(n)
		case fault.Pause:
			err = s.Signal(n, syscall.SIGSTOP)
		case fault.Resume:
			err = s.Signal(n, syscall.SIGCONT)
		}
		if err != nil {
			ferr := fmt.Errorf("%s %s: %w", f.Kind, n.Name, err)
			if len(done) == 0 {
				return ferr
			}
			return errors.Join(ferr, l.Record(fault.Record{Fault: f.Kind, Targets: done, At: at}))
		}
		done = append(done, n.Name)
		l.Logf("%s: %s", n.Name, f.Kind)
	}
	return l.Record(fault.Record{Fault: f.Kind, Targets: done, At: at})
}

// KillBalancers kills the proxy of load balancer hosts (kill -9), every
// name checked first. Heal starts them again.
type KillBalancers []string

// Inject checks every host is a load balancer's, then kills them.
func (hosts KillBalancers) Inject(ctx context.Context, l Lab) error {
	all := l.Plan().LBHosts()
	var problems []string
	for _, h := range hosts {
		if !slices.Contains(all, h) {
			problems = append(problems, fmt.Sprintf("HOST: %q is not a load balancer host (hosts: %s)", h, strings.Join(all, ", ")))
		}
	}
	if err := hderr.Users(problems); err != nil || fault.IsDry(ctx) {
		return err
	}
	at := time.Now().UTC()
	for _, h := range hosts {
		if err := l.KillBalancer(ctx, h, false); err != nil {
			return err
		}
		l.Logf("%s: %s killed (kill -9)", h, proxyOn(l.Plan(), h))
	}
	return l.Record(fault.Record{Fault: fault.Kill, Targets: hosts, At: at})
}

// proxyOn names the proxy software load balancer host h runs.
func proxyOn(p *plan.Plan, h string) string {
	if b, ok := p.LBOn(h); ok {
		return lb.KindOf(b).Name()
	}
	return "proxy"
}

// resumeAll thaws every paused server (heal).
func resumeAll(_ context.Context, l Lab) error {
	p, s := l.Plan(), l.Servers()
	for i := range p.Nodes {
		n := &p.Nodes[i]
		if proc, _ := s.Process(n); proc.Paused {
			if err := s.Signal(n, syscall.SIGCONT); err != nil {
				return err
			}
			l.Logf("%s: resumed", n.Name)
		}
	}
	return nil
}
