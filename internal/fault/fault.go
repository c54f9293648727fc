// Package fault injects network partitions and keeps the fault log: which
// hosts a partition cuts from which (pure), the iptables rules that cut and
// lift it on the hosts (through a narrow Runner), and the record of every
// injected fault.
package fault

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/plan"
)

// Record is one injected fault, as kept in <lab>/faults.jsonl and copied
// into the runs whose time span it falls in (the report marks it).
type Record struct {
	At      time.Time `json:"at"`
	Fault   Kind      `json:"fault"`   // see kinds.go
	Targets []string  `json:"targets"` // nodes, or a partition's side
	From    []string  `json:"from,omitempty"`
	Value   string    `json:"value,omitempty"` // a link fault's new value
}

// Label is the marker text of a fault.
func (r Record) Label() string {
	s := string(r.Fault)
	if len(r.Targets) > 0 {
		s += " " + strings.Join(r.Targets, ",")
	}
	if r.Value != "" {
		s += " " + r.Value
	}
	return s
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

type dryKey struct{}

// Dry marks ctx for a dry run: a fault applied with it checks everything it
// would check (the targets, the values, what the lab can take) and stops
// there, changing nothing. A drill checks its fault this way before its
// traffic starts.
func Dry(ctx context.Context) context.Context { return context.WithValue(ctx, dryKey{}, true) }

// IsDry reports whether ctx is a dry run's.
func IsDry(ctx context.Context) bool { return ctx.Value(dryKey{}) != nil }
