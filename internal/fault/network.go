package fault

import (
	"cmp"
	"context"
	"errors"
	"strings"
	"time"

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

// rule is an iptables rule added to a host's fault chain.
type rule struct {
	host string
	args []string
}

// Apply cuts the partition: on each host of the side, packets to and from
// each host of From are dropped. It takes effect whole or not at all: the
// rules added before a failure (or a cancelled ctx) are removed again.
func (c Cut) Apply(ctx context.Context, hosts Runner) error {
	name := cmp.Or(c.Chain, Chain)
	var added []rule
	undo := func(cause error) error {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		errs := []error{cause}
		for i := len(added) - 1; i >= 0; i-- {
			errs = append(errs, iptables(uctx, hosts, added[i].host, append([]string{"-D"}, added[i].args...)...))
		}
		return errors.Join(errs...)
	}
	for _, h := range c.Side {
		if err := iptables(ctx, hosts, h.Name, "-N", name); err != nil && !strings.Contains(err.Error(), "exists") {
			return undo(err)
		}
		for _, o := range c.From {
			for _, addr := range o.Addresses() { // every NIC: a cut host is cut on every network
				for _, dir := range [][]string{{"-s", addr}, {"-d", addr}} {
					r := append(append([]string{name}, dir...), "-j", "DROP")
					if err := iptables(ctx, hosts, h.Name, append([]string{"-A"}, r...)...); err != nil {
						return undo(err)
					}
					added = append(added, rule{h.Name, r})
				}
			}
		}
		// jumped to last: a new chain's rules take effect together (a
		// remote host's commands are a round trip each)
		if err := hook(ctx, hosts, name, h.Name); err != nil {
			return undo(err)
		}
	}
	return nil
}

// Lift removes every partition rule of chain from the hosts.
func Lift(ctx context.Context, hosts Runner, chain string, on []plan.Host) error {
	for _, h := range on {
		if err := iptables(ctx, hosts, h.Name, "-F", chain); err != nil && !noChain(err) {
			return err
		}
	}
	return nil
}

// Remove takes chain away from the hosts: its jumps, its rules, the chain
// itself (a host that never had it is fine). Every host is tried.
func Remove(ctx context.Context, hosts Runner, chain string, on []plan.Host) error {
	var errs []error
	for _, h := range on {
		for _, hook := range []string{"INPUT", "OUTPUT"} {
			for iptables(ctx, hosts, h.Name, "-C", hook, "-j", chain) == nil {
				if err := iptables(ctx, hosts, h.Name, "-D", hook, "-j", chain); err != nil {
					errs = append(errs, err)
					break
				}
			}
		}
		for _, op := range []string{"-F", "-X"} {
			if err := iptables(ctx, hosts, h.Name, op, chain); err != nil && !noChain(err) {
				errs = append(errs, err)
				break
			}
		}
	}
	return errors.Join(errs...)
}

// noChain says iptables found no such chain.
func noChain(err error) bool { return strings.Contains(err.Error(), "No chain") }

// hook makes sure the host's fault chain is jumped to.
func hook(ctx context.Context, hosts Runner, name, host string) error {
	for _, hook := range []string{"INPUT", "OUTPUT"} {
		if iptables(ctx, hosts, host, "-C", hook, "-j", name) != nil {
			if err := iptables(ctx, hosts, host, "-I", hook, "-j", name); err != nil {
				return err
			}
		}
	}
	return nil
}

func iptables(ctx context.Context, hosts Runner, host string, args ...string) error {
	return hosts.Run(ctx, host, append([]string{"iptables", "-w"}, args...)...)
}
