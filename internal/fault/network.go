package fault

import (
	"cmp"
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/hadrill/hadrill/internal/iptables"
	"github.com/hadrill/hadrill/internal/plan"
)

// Runner runs a command on one of a lab's hosts; a failure's error carries
// what it printed.
type Runner interface {
	Run(ctx context.Context, host string, argv ...string) error
}

// Chain is the iptables chain partitions add their rules to, in each host's
// own namespace (removed with it; Lift flushes it).
const Chain = "HDFAULT"

// ChainOf is the chain a lab's partitions go to on its hosts: Chain in a
// namespace of the lab's own; on a remote machine, whose tables other
// software shares, one named after the lab (at most 24 characters: lab
// names have 16), which Remove takes away when the lab goes.
func ChainOf(p *plan.Plan) string {
	if p.Mode == plan.ModeSSH {
		return Chain + "-" + p.Lab
	}
	return Chain
}

// Apply cuts the partition: on each host of the side, packets to and from
// each host of From are dropped (one way: only those from From). A host's rules go in as one command there
// (they take effect together, with the jumps to a new chain), every host
// at once. It takes effect whole or not at all: when a host fails (or ctx
// is cancelled), the hosts that took their rules have them removed again.
func (c Cut) Apply(ctx context.Context, hosts Runner) error {
	name := cmp.Or(c.Chain, Chain)
	var rules []iptables.Rule
	for _, o := range c.From {
		for _, addr := range o.Addresses() { // every NIC: a cut host is cut on every network
			rules = append(rules, iptables.Rule{"-s", addr, "-j", "DROP"})
			if !c.OneWay { // one way: only what arrives from From (the side's replies still leave)
				rules = append(rules, iptables.Rule{"-d", addr, "-j", "DROP"})
			}
		}
	}
	var mu sync.Mutex
	var added []string
	err := each(c.Side, func(h plan.Host) error {
		if err := hosts.Run(ctx, h.Name, iptables.Append("filter", name, rules, hooks...)...); err != nil {
			return err
		}
		mu.Lock()
		added = append(added, h.Name)
		mu.Unlock()
		return nil
	})
	if err == nil {
		return nil
	}
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	errs := []error{err}
	for _, h := range added {
		errs = append(errs, hosts.Run(uctx, h, iptables.Delete("filter", name, rules)...))
	}
	return errors.Join(errs...)
}

// hooks are where a host's packets go through its fault chain.
var hooks = []string{"INPUT", "OUTPUT"}

// Lift removes every partition rule of chain from the hosts.
func Lift(ctx context.Context, hosts Runner, chain string, on []plan.Host) error {
	return each(on, func(h plan.Host) error {
		if err := hosts.Run(ctx, h.Name, "iptables", "-w", "-F", chain); err != nil && !noChain(err) {
			return err
		}
		return nil
	})
}

// Remove takes chain away from the hosts: its jumps, its rules, the chain
// itself (a host that never had it is fine). Every host is tried.
func Remove(ctx context.Context, hosts Runner, chain string, on []plan.Host) error {
	return each(on, func(h plan.Host) error {
		return hosts.Run(ctx, h.Name, iptables.Remove("filter", chain, hooks...)...)
	})
}

// noChain says iptables found no such chain.
func noChain(err error) bool { return strings.Contains(err.Error(), "No chain") }

// each runs f for every host at once and returns every failure.
func each(on []plan.Host, f func(plan.Host) error) error {
	errs := make([]error, len(on))
	var wg sync.WaitGroup
	for i, h := range on {
		wg.Go(func() { errs[i] = f(h) })
	}
	wg.Wait()
	return errors.Join(errs...)
}
