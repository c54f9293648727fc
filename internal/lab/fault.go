package lab

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/lb"
	"github.com/hadrill/hadrill/internal/netem"
	"github.com/hadrill/hadrill/internal/plan"
)

// ProcessFault kills, stops, pauses or resumes the servers of nodes (see
// fault.Process).
func (l *Lab) ProcessFault(ctx context.Context, kind fault.Kind, names []string) error {
	var nodes, lbs []string
	for _, name := range names {
		switch {
		case !slices.Contains(l.lbHosts(), name):
			nodes = append(nodes, name)
		case kind != fault.Kill:
			return hderr.User("NODE: %s is a load balancer host: it takes kill (its HAProxy) or crash (the whole host), not %s", name, kind)
		default:
			lbs = append(lbs, name)
		}
	}
	if len(lbs) > 0 {
		if len(nodes) > 0 {
			return hderr.User("NODE: kill nodes (%s) and load balancer hosts (%s) in two commands", strings.Join(nodes, ", "), strings.Join(lbs, ", "))
		}
		return l.LBFault(ctx, lbs)
	}
	err := fault.Process(ctx, l.p, l.servers, fault.Log(l.p.FaultLog), kind, names, func(s string) { l.logf("%s", s) })
	if fault.IsDry(ctx) {
		return err
	}
	if kind == fault.Kill && err == nil {
		_, err = l.powerCuts(ctx, names)
	}
	if kind == fault.Kill || kind == fault.Stop {
		if serr := l.saveDerived(); err == nil {
			err = serr
		}
	}
	return err
}

// Partition cuts hosts off: no packet passes between a host of the side and
// a host of from (default: everyone else).
func (l *Lab) Partition(ctx context.Context, targets, from []string) error {
	return l.applyCut(ctx, func() (fault.Cut, error) { return fault.NewCut(l.p, targets, from) })
}

// OneWayCut drops the packets from the hosts (or regions) of from to those
// of to, and only those.
func (l *Lab) OneWayCut(ctx context.Context, from, to []string) error {
	return l.applyCut(ctx, func() (fault.Cut, error) { return fault.NewOneWay(l.p, from, to) })
}

// applyCut resolves a cut (refused without a firewall), applies it, says
// so and records it.
func (l *Lab) applyCut(ctx context.Context, resolve func() (fault.Cut, error)) error {
	if why := l.p.WithoutFirewall(); why != "" {
		return hderr.User("fault partition: a network fault %s", why)
	}
	cut, err := resolve()
	if err != nil {
		return err
	}
	if fault.IsDry(ctx) {
		return nil
	}
	at := time.Now().UTC()
	if err := cut.Apply(ctx, l.hosts); err != nil {
		return err
	}
	side, from := strings.Join(fault.Names(cut.Side), ","), strings.Join(fault.Names(cut.From), ",")
	rec := fault.Record{Fault: fault.Partition, Targets: fault.Names(cut.Side), From: fault.Names(cut.From), At: at}
	if cut.OneWay {
		l.logf("packets from %s to %s dropped (one way)", from, side)
		rec.Value = "one way"
	} else {
		l.logf("partitioned %s from %s", side, from)
	}
	return l.RecordFault(rec)
}

// Heal undoes every fault: partitions are lifted, paused servers resumed,
// servers that were killed or stopped started again (a cluster whose every
// node is down is recovered from its most advanced node), links get the
// spec's values and a dead WAN emulator is restarted.
func (l *Lab) Heal(ctx context.Context) (err error) {
	at := time.Now().UTC()
	defer func() {
		if err == nil {
			err = l.RecordFault(fault.Record{Fault: fault.Heal, At: at})
		}
	}()
	if l.p.WithoutFirewall() == "" {
		if err := fault.Lift(ctx, l.hosts, fault.ChainOf(l.p), l.p.Hosts); err != nil {
			return err
		}
	}
	if err := l.nicsUp(ctx); err != nil { // a crashed host's NICs come back
		return err
	}
	if err := l.wan.Heal(ctx); err != nil {
		return err
	}
	if err := l.healDisks(ctx); err != nil {
		return err
	}
	if err := l.healClocks(ctx); err != nil {
		return err
	}
	for _, n := range l.Nodes(nil) {
		if p, _ := l.Process(n); p.Paused {
			if err := l.servers.Signal(n, syscall.SIGCONT); err != nil {
				return err
			}
			l.logf("%s: resumed", n.Name)
		}
	}
	if err := l.startAll(ctx); err != nil {
		return err
	}
	// the links are back at the spec's figures: measured, and a link
	// whose round trip cannot be measured at all is not healed
	_, err = l.wan.Check(ctx, false)
	return err
}

// LBFault kills the HAProxy of load balancer hosts (kill -9), every name
// checked first. Heal starts them again.
func (l *Lab) LBFault(ctx context.Context, hosts []string) error {
	var problems []string
	for _, h := range hosts {
		if !slices.Contains(l.lbHosts(), h) {
			problems = append(problems, fmt.Sprintf("HOST: %q is not a load balancer host (hosts: %s)", h, strings.Join(l.lbHosts(), ", ")))
		}
	}
	if err := hderr.Users(problems); err != nil {
		return err
	}
	if fault.IsDry(ctx) {
		return nil
	}
	at := time.Now().UTC()
	for _, h := range hosts {
		if err := l.balancerOf(h).Kill(ctx, h, false); err != nil {
			return err
		}
		l.logf("%s: haproxy killed (kill -9)", h)
	}
	return l.RecordFault(fault.Record{Fault: fault.Kill, Targets: hosts, At: at})
}

// balancerOf is the load balancer a host belongs to.
func (l *Lab) balancerOf(host string) lb.Balancer {
	for i := range l.p.LoadBalancers {
		if b := l.Balancer(&l.p.LoadBalancers[i]); slices.ContainsFunc(b.LB.Instances, func(in plan.LBInstance) bool { return in.Host == host }) {
			return b
		}
	}
	return lb.Balancer{LB: &plan.LB{}}
}

// LBHolder is the host holding a load balancer's address now.
func (l *Lab) LBHolder(ctx context.Context, b *plan.LB) (string, error) {
	return l.Balancer(b).Holder(ctx)
}

// LBInstances says how each host of a load balancer is: HAProxy and
// keepalived running, which holds the address.
func (l *Lab) LBInstances(ctx context.Context, b *plan.LB) []lb.Instance {
	return l.Balancer(b).Instances(ctx)
}

// lbHosts are the hosts the load balancers run on.
func (l *Lab) lbHosts() []string {
	var out []string
	for _, lb := range l.p.LoadBalancers {
		for _, in := range lb.Instances {
			out = append(out, in.Host)
		}
	}
	return out
}

func (l *Lab) needFirewall(kind fault.Kind) error {
	if why := l.p.WithoutFirewall(); why != "" {
		return hderr.User("fault %s: a network fault %s", kind, why)
	}
	return nil
}

// LinkFault changes a link's delay, loss or bandwidth (recorded as a fault;
// heal restores the spec's values).
func (l *Lab) LinkFault(ctx context.Context, ch netem.Change) error {
	if err := l.needFirewall(ch.Verb); err != nil {
		return err
	}
	if fault.IsDry(ctx) {
		return l.wan.Validate(ch)
	}
	rec := fault.Record{Fault: ch.Verb, Targets: []string{ch.Link}, Value: ch.Value, At: time.Now().UTC()}
	if err := l.wan.Change(ctx, ch); err != nil {
		return err
	}
	return l.RecordFault(rec)
}
