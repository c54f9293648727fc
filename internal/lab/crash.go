package lab

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/agent"
	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/server"
)

// CrashHosts crashes hosts as machines that lose power: every process of
// each killed at once (a node's server and health agent, a load balancer
// host's HAProxy and keepalived, an arbitrator's garbd) and the host cut
// off the network, so it vanishes with the addresses it held instead of
// refusing connections: its NICs down in a namespace; on a remote machine,
// whose NIC also carries the controller's SSH, every packet between it and
// the lab's other hosts dropped. Every name is checked first; the client
// host is the observer and does not crash. Heal brings them back.
func (l *Lab) CrashHosts(ctx context.Context, names []string) error {
	var problems []string
	if why := l.p.WithoutFirewall(); why != "" {
		problems = append(problems, "fault crash: a crash cuts a host off the network, which "+why)
	}
	var crashable []string
	for _, h := range l.p.Hosts {
		if h.Name != l.p.Client.Host {
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
	if err := hderr.Users(problems); err != nil {
		return err
	}
	if fault.IsDry(ctx) {
		return nil
	}
	at := time.Now().UTC()
	// off the network first: a machine that loses power says nothing more,
	// while a process killed on a live host has its kernel close its
	// connections (the peers would learn of the crash at once)
	if err := l.cutOff(ctx, names); err != nil {
		return err
	}
	var errs []error
	for _, name := range names {
		errs = append(errs, l.killHost(ctx, name))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if _, err := l.powerCuts(ctx, names); err != nil {
		return err
	}
	how := "NICs down"
	if l.p.Mode == plan.ModeSSH {
		how = "cut off the lab's other hosts"
	}
	l.logf("crashed %s (every process killed, %s)", strings.Join(names, ", "), how)
	return errors.Join(l.saveDerived(), l.RecordFault(fault.Record{Fault: fault.Crash, Targets: names, At: at}))
}

// cutOff takes crashing hosts off the network: their NICs down, or on
// remote machines a partition from every other host of the lab (Heal lifts
// both).
func (l *Lab) cutOff(ctx context.Context, names []string) error {
	if l.p.Mode != plan.ModeSSH {
		var errs []error
		for _, name := range names {
			errs = append(errs, l.nics(ctx, name, "down"))
		}
		return errors.Join(errs...)
	}
	cut, err := fault.NewCut(l.p, names, nil)
	if err != nil {
		return err
	}
	return cut.Apply(ctx, l.hosts)
}

// killHost kills every daemon of a host with SIGKILL.
func (l *Lab) killHost(ctx context.Context, name string) error {
	var errs []error
	if n, ok := l.p.Node(name); ok {
		h := l.Prov.Host(name)
		errs = append(errs, h.Kill(ctx, server.Daemon(n)), h.Kill(ctx, agent.Daemon(l.p, n, h.Exe())))
	}
	if slices.Contains(l.lbHosts(), name) {
		errs = append(errs, l.balancerOf(name).Kill(ctx, name, true))
	}
	for _, c := range l.p.Clusters {
		if a := c.Arbitrator; a != nil && a.Name == name {
			errs = append(errs, l.Prov.Host(a.Name).Kill(ctx, garbd(a)))
		}
	}
	return errors.Join(errs...)
}

// nics sets every NIC of a host up or down.
func (l *Lab) nics(ctx context.Context, name, state string) error {
	for _, h := range l.p.Hosts {
		if h.Name != name {
			continue
		}
		var errs []error
		for _, nic := range h.NICs {
			errs = append(errs, l.hosts.Run(ctx, h.Name, "ip", "link", "set", nic.Name, state))
		}
		return errors.Join(errs...)
	}
	return nil
}

// nicsUp brings every NIC of every host up (what a crash took down).
func (l *Lab) nicsUp(ctx context.Context) error {
	if l.p.Mode != plan.ModeNetns {
		return nil
	}
	var errs []error
	for _, h := range l.p.Hosts {
		errs = append(errs, l.nics(ctx, h.Name, "up"))
	}
	return errors.Join(errs...)
}
