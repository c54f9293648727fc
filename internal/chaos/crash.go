package chaos

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/plan"
)

// Crash crashes hosts as machines that lose power: every process of each
// killed at once (a node's server and health agent, a load balancer
// host's proxy and keepalived, an arbitrator's garbd) and the host cut
// off the network, so it vanishes with the addresses it held instead of
// refusing connections: its NICs down in a namespace; on a remote machine,
// whose NIC also carries the controller's SSH, every packet between it and
// the lab's other hosts dropped. The client host is the observer and does
// not crash. Heal brings them back.
type Crash []string

// crashFaults are the fault kinds of this file and their heal (families lists them in heal order).
var crashFaults = family{heal: nicsUp, kinds: []Kind{{
	Name: fault.Crash, Use: "crash HOST...", MinArgs: 1, MaxArgs: -1, ArgsWhat: "one or more hosts",
	Short: "Crash hosts as machines losing power: every process killed at once, their NICs down (heal brings them back)",
	Parse: func(*pflag.FlagSet) func([]string) (Fault, error) {
		return func(a []string) (Fault, error) { return Crash(a), nil }
	},
}}}

// Inject checks every name first, then crashes the hosts.
func (names Crash) Inject(ctx context.Context, l Lab) error {
	p := l.Plan()
	var problems []string
	if why := p.WithoutFirewall(); why != "" {
		problems = append(problems, "fault crash: a crash cuts a host off the network, which "+why)
	}
	var crashable []string
	for _, h := range p.Hosts {
		if h.Name != p.Client.Host {
			crashable = append(crashable, h.Name)
		}
	}
	if len(names) == 0 {
		problems = append(problems, "HOST: name at least one host (hosts: "+strings.Join(crashable, ", ")+")")
	}
	for _, name := range names {
		if !slices.Contains(crashable, name) {
			problems = append(problems, fmt.Sprintf("HOST: %q is not a host that can crash (hosts: %s; the client is the observer)", name, strings.Join(crashable, ", ")))
		}
	}
	if err := hderr.Users(problems); err != nil || fault.IsDry(ctx) {
		return err
	}
	at := time.Now().UTC()
	// off the network first: a machine that loses power says nothing more,
	// while a process killed on a live host has its kernel close its
	// connections (the peers would learn of the crash at once)
	if err := cutOff(ctx, l, names); err != nil {
		return err
	}
	var errs []error
	for _, name := range names {
		errs = append(errs, l.KillHost(ctx, name))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if _, err := powerCuts(ctx, l, names); err != nil {
		return err
	}
	how := "NICs down"
	if p.Mode == plan.ModeSSH {
		how = "cut off the lab's other hosts"
	}
	l.Logf("crashed %s (every process killed, %s)", strings.Join(names, ", "), how)
	return errors.Join(l.SaveDerived(), l.Record(fault.Record{Fault: fault.Crash, Targets: names, At: at}))
}

// cutOff takes crashing hosts off the network: their NICs down, or on
// remote machines a partition from every other host of the lab (heal
// lifts both).
func cutOff(ctx context.Context, l Lab, names []string) error {
	p := l.Plan()
	if p.Mode != plan.ModeSSH {
		var errs []error
		for _, name := range names {
			errs = append(errs, nics(ctx, l, name, "down"))
		}
		return errors.Join(errs...)
	}
	cut, err := NewCut(p, names, nil)
	if err != nil {
		return err
	}
	return cut.Apply(ctx, l)
}

// nics sets every NIC of a host up or down.
func nics(ctx context.Context, l Lab, name, state string) error {
	for _, h := range l.Plan().Hosts {
		if h.Name != name {
			continue
		}
		var errs []error
		for _, nic := range h.NICs {
			errs = append(errs, l.Run(ctx, h.Name, "ip", "link", "set", nic.Name, state))
		}
		return errors.Join(errs...)
	}
	return nil
}

// nicsUp brings every NIC of every host up (what a crash took down).
func nicsUp(ctx context.Context, l Lab) error {
	if l.Plan().Mode != plan.ModeNetns {
		return nil
	}
	var errs []error
	for _, h := range l.Plan().Hosts {
		errs = append(errs, nics(ctx, l, h.Name, "up"))
	}
	return errors.Join(errs...)
}
