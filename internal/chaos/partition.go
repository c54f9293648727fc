package chaos

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/iptables"
	"github.com/hadrill/hadrill/internal/plan"
)

// Partition cuts hosts (or regions) off from everyone else, or from From;
// with To instead of Targets, only the packets from From to To are dropped
// (one way). The rules are iptables' in each host's own namespace.
type Partition struct {
	Targets, From, To []string
}

// partitionFaults are the fault kinds of this file and their heal (families lists them in heal order).
var partitionFaults = family{heal: lift, kinds: []Kind{{
	Name: fault.Partition, Use: "partition TARGET... [--from OTHER,...] | --from A,... --to B,...",
	Short: "Cut hosts or a region off from everyone else (or from --from), or one way (--from --to), with iptables in their namespaces",
	Long: `With --to instead of TARGET, the cut is one way: packets from the hosts (or regions) of
--from to those of --to are dropped, and only those (a TCP connection then fails both ways,
its replies lost; datagrams and probes show the asymmetry).`,
	MinArgs: 0, MaxArgs: -1, ArgsWhat: "node, host or region names (or --from with --to)",
	Parse: func(fs *pflag.FlagSet) func([]string) (Fault, error) {
		var f Partition
		fs.StringSliceVar(&f.From, "from", nil, "hosts or regions on the other side (default: every other host); with --to, whose packets are dropped")
		fs.StringSliceVar(&f.To, "to", nil, "a one-way cut: the hosts or regions that stop receiving --from's packets")
		return func(a []string) (Fault, error) {
			if len(f.To) > 0 && len(a) > 0 {
				return nil, hderr.User("TARGET: a one-way cut takes --from and --to, not targets (got %s)", strings.Join(a, " "))
			}
			f.Targets = a
			return f, nil
		}
	},
}}}

// Inject resolves the cut (refused without a firewall), applies it, says
// so and records it.
func (f Partition) Inject(ctx context.Context, l Lab) error {
	p := l.Plan()
	if why := p.WithoutFirewall(); why != "" {
		return hderr.User("fault partition: a network fault %s", why)
	}
	var cut Cut
	var err error
	if len(f.To) > 0 || len(f.Targets) == 0 {
		cut, err = NewOneWay(p, f.From, f.To)
	} else {
		cut, err = NewCut(p, f.Targets, f.From)
	}
	if err != nil || fault.IsDry(ctx) {
		return err
	}
	at := time.Now().UTC()
	if err := cut.Apply(ctx, l); err != nil {
		return err
	}
	side, from := strings.Join(Names(cut.Side), ","), strings.Join(Names(cut.From), ",")
	rec := fault.Record{Fault: fault.Partition, Targets: Names(cut.Side), From: Names(cut.From), At: at}
	if cut.OneWay {
		l.Logf("packets from %s to %s dropped (one way)", from, side)
		rec.Value = "one way"
	} else {
		l.Logf("partitioned %s from %s", side, from)
	}
	return l.Record(rec)
}

// lift removes every partition (heal).
func lift(ctx context.Context, l Lab) error {
	p := l.Plan()
	if p.WithoutFirewall() != "" {
		return nil
	}
	return Lift(ctx, l, ChainOf(p), p.Hosts)
}

// Cut is a partition: no packet passes between a host of Side and a host of From.
type Cut struct {
	Side []plan.Host
	From []plan.Host
	// Chain holds its rules on the side's hosts (ChainOf; empty: Chain).
	Chain string
	// OneWay: only packets from From to Side are dropped; Side's packets
	// still reach From (a TCP connection fails either way: its replies do
	// not come back; datagrams and probes show the asymmetry).
	OneWay bool
}

// NewOneWay resolves `fault partition --from A... --to B...`: packets from
// the hosts (or regions) of from to those of to are dropped, and only
// those. Problems are named all at once.
func NewOneWay(p *plan.Plan, from, to []string) (Cut, error) {
	var problems []string
	if len(from) == 0 {
		problems = append(problems, "--from: name the hosts or regions whose packets are dropped (with --to)")
	}
	if len(to) == 0 {
		problems = append(problems, "--to: name the hosts or regions that stop receiving them")
	}
	src, badFrom := resolve(p, from)
	dst, badTo := resolve(p, to)
	for _, b := range badFrom {
		problems = append(problems, fmt.Sprintf("--from: %q is neither a host nor a region of lab %s (hosts: %s)", b, p.Lab, strings.Join(hostNames(p.Hosts), ", ")))
	}
	for _, b := range badTo {
		problems = append(problems, fmt.Sprintf("--to: %q is neither a host nor a region of lab %s (hosts: %s)", b, p.Lab, strings.Join(hostNames(p.Hosts), ", ")))
	}
	for _, h := range dst {
		if has(src, h.Name) {
			problems = append(problems, fmt.Sprintf("--to: %s is on both sides of the cut", h.Name))
		}
	}
	if err := hderr.Users(problems); err != nil {
		return Cut{}, err
	}
	return Cut{Side: dst, From: src, Chain: ChainOf(p), OneWay: true}, nil
}

// NewCut resolves `fault partition TARGET... [--from OTHER...]`: each
// target is a host or a region (all its hosts); from defaults to every
// other host of the lab. Problems are named all at once.
func NewCut(p *plan.Plan, targets, from []string) (Cut, error) {
	var problems []string
	if len(targets) == 0 {
		problems = append(problems, "TARGET: name the nodes or the region to cut off")
	}
	side, bad := resolve(p, targets)
	for _, b := range bad {
		problems = append(problems, fmt.Sprintf("TARGET: %q is neither a host nor a region of lab %s (hosts: %s; regions: %s)", b, p.Lab, strings.Join(hostNames(p.Hosts), ", "), strings.Join(regions(p), ", ")))
	}
	var other []plan.Host
	if len(from) > 0 {
		var badFrom []string
		other, badFrom = resolve(p, from)
		for _, b := range badFrom {
			problems = append(problems, fmt.Sprintf("--from: %q is neither a host nor a region of lab %s", b, p.Lab))
		}
	} else {
		for _, h := range p.Hosts {
			if !has(side, h.Name) {
				other = append(other, h)
			}
		}
	}
	for _, h := range other {
		if has(side, h.Name) {
			problems = append(problems, fmt.Sprintf("--from: %s is on both sides of the partition", h.Name))
		}
	}
	if len(problems) == 0 && (len(side) == 0 || len(other) == 0) {
		problems = append(problems, "TARGET: the partition cuts no one off (one side is empty)")
	}
	if err := hderr.Users(problems); err != nil {
		return Cut{}, err
	}
	return Cut{Side: side, From: other, Chain: ChainOf(p)}, nil
}

func resolve(p *plan.Plan, names []string) (hosts []plan.Host, bad []string) {
	for _, n := range names {
		found := false
		for _, h := range p.Hosts {
			if (h.Name == n || h.Region == n) && !has(hosts, h.Name) {
				hosts = append(hosts, h)
			}
			found = found || h.Name == n || h.Region == n
		}
		if !found {
			bad = append(bad, n)
		}
	}
	return hosts, bad
}

func has(hosts []plan.Host, name string) bool {
	for _, h := range hosts {
		if h.Name == name {
			return true
		}
	}
	return false
}

func hostNames(hs []plan.Host) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.Name)
	}
	return out
}

func regions(p *plan.Plan) []string {
	seen := map[string]bool{}
	var out []string
	for _, h := range p.Hosts {
		if !seen[h.Region] {
			seen[h.Region] = true
			out = append(out, h.Region)
		}
	}
	sort.Strings(out)
	return out
}

// Names lists host names.
func Names(hs []plan.Host) []string { return hostNames(hs) }

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

// hooks are where a host's packets go through its fault chain: those it
// receives and sends, and those it forwards (a load balancer of kind
// iptables passes its clients' packets on; cut off, it must not).
var hooks = []string{"INPUT", "OUTPUT", "FORWARD"}

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

// PartitionInForce says whether a recorded partition's rules are still on
// its side's hosts (a drill killed before it lifted its cut may have left
// them, or they may be gone with a host's restart): its first side host's
// chain still drops packets of a host of its other side. read runs argv on
// a host and returns what it printed.
func PartitionInForce(ctx context.Context, read func(host string, argv []string) ([]byte, error), p *plan.Plan, r fault.Record) bool {
	if r.Fault != fault.Partition || len(r.Targets) == 0 {
		return false
	}
	out, err := read(r.Targets[0], []string{"iptables", "-w", "-S", ChainOf(p)})
	if err != nil {
		return false
	}
	from, _ := resolve(p, r.From)
	for _, h := range from {
		for _, addr := range h.Addresses() {
			if strings.Contains(string(out), "-s "+addr+"/32 -j DROP") {
				return true
			}
		}
	}
	return false
}

// InForce splits the faults since the last heal into those that may still
// be in force and those that are over (fault.Split): a partition whose
// rules are gone from its hosts, nodes that run again (running).
func InForce(ctx context.Context, hosts HostReader, p *plan.Plan, recs []fault.Record, running map[string]bool) (still, over []fault.Record) {
	read := func(host string, argv []string) ([]byte, error) { return hosts.Host(host).Run(ctx, argv, nil) }
	return fault.Split(recs, func(r fault.Record) bool { return !PartitionInForce(ctx, read, p, r) }, running)
}

// HostReader gives a lab's hosts.
type HostReader interface{ Host(name string) host.Host }

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
