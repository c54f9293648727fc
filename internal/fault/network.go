package fault

import (
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

// rule is an iptables rule added to a host's fault chain.
type rule struct {
	host string
	args []string
}

// Apply cuts the partition: on each host of the side, packets to and from
// each host of From are dropped. It takes effect whole or not at all: the
// rules added before a failure (or a cancelled ctx) are removed again.
func (c Cut) Apply(ctx context.Context, hosts Runner) error {
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
		if err := chain(ctx, hosts, h.Name); err != nil {
			return undo(err)
		}
		for _, o := range c.From {
			for _, addr := range o.Addresses() { // every NIC: a cut host is cut on every network
				for _, dir := range [][]string{{"-s", addr}, {"-d", addr}} {
					r := append(append([]string{Chain}, dir...), "-j", "DROP")
					if err := iptables(ctx, hosts, h.Name, append([]string{"-A"}, r...)...); err != nil {
						return undo(err)
					}
					added = append(added, rule{h.Name, r})
				}
			}
		}
	}
	return nil
}

// Lift removes every partition rule from the hosts.
func Lift(ctx context.Context, hosts Runner, on []plan.Host) error {
	for _, h := range on {
		if err := iptables(ctx, hosts, h.Name, "-F", Chain); err != nil && !strings.Contains(err.Error(), "No chain") {
			return err
		}
	}
	return nil
}

// chain makes sure the host's fault chain exists and is jumped to.
func chain(ctx context.Context, hosts Runner, host string) error {
	if err := iptables(ctx, hosts, host, "-N", Chain); err != nil && !strings.Contains(err.Error(), "exists") {
		return err
	}
	for _, hook := range []string{"INPUT", "OUTPUT"} {
		if iptables(ctx, hosts, host, "-C", hook, "-j", Chain) != nil {
			if err := iptables(ctx, hosts, host, "-I", hook, "-j", Chain); err != nil {
				return err
			}
		}
	}
	return nil
}

func iptables(ctx context.Context, hosts Runner, host string, args ...string) error {
	return hosts.Run(ctx, host, append([]string{"iptables", "-w"}, args...)...)
}
