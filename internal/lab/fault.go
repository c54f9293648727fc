package lab

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hadrill/hadrill/internal/chaos"
	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/galera/boot"
	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/infra/disk"
	"github.com/hadrill/hadrill/internal/lb"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/server"
	"github.com/hadrill/hadrill/internal/settle"
	"github.com/hadrill/hadrill/internal/spec"
)

// Inject applies a fault (see package chaos): it checks it against the
// lab, every problem at once, and in a dry run (fault.Dry) stops there.
func (l *Lab) Inject(ctx context.Context, f chaos.Fault) error {
	return f.Inject(ctx, chaosLab{l})
}

// Heal undoes every fault: each kind's heal (chaos.Heal: partitions
// lifted, crashed hosts' NICs up, links at the spec's values with a dead
// WAN emulator restarted, disks and clocks healed, paused servers
// resumed), then every server and daemon that was killed, stopped or
// crashed started again (a cluster whose every node is down is recovered
// from its most advanced node).
func (l *Lab) Heal(ctx context.Context) (err error) {
	at := time.Now().UTC()
	defer func() {
		if err == nil {
			err = l.RecordFault(fault.Record{Fault: fault.Heal, At: at})
		}
	}()
	if err := chaos.Heal(ctx, chaosLab{l}); err != nil {
		return err
	}
	if err := l.stopVotedOut(ctx); err != nil {
		return err
	}
	if err := l.endStuckDonors(ctx); err != nil {
		return err
	}
	if err := l.startAll(ctx); err != nil {
		return err
	}
	// the links are back at the spec's figures: measured, and a link
	// whose round trip cannot be measured at all is not healed
	if _, err = l.wan.Check(ctx, false); err != nil {
		return err
	}
	if err := settle.Writes(ctx, settleLab{l}); err != nil {
		return err
	}
	return settle.Replicas(ctx, settleLab{l})
}

// settleLab is the lab as package settle sees it.
type settleLab struct{ *Lab }

func (s settleLab) Alive(n *plan.Node) bool { return s.alive(n) }
func (s settleLab) StartStopped(ctx context.Context) error {
	return s.startAll(ctx)
}
func (s settleLab) Logf(format string, a ...any) { s.logf(format, a...) }
func (s settleLab) DiskFaults(n *plan.Node) map[string]string {
	now, _ := disk.ReadFaults(s.p)
	cuts, _ := disk.Cuts(s.p)
	return chaos.DiskFaults(n, now, cuts)
}
func (s settleLab) ServerLog(ctx context.Context, n *plan.Node) string {
	b, _ := s.Host(n.Host).ReadFile(ctx, n.LogFile)
	return string(b)
}

// stopVotedOut stops, cleanly, every Galera member out of its cluster in
// state Inconsistent (voted out: it failed to apply a write set, say on a
// damaged page; or it left because the primary component it rejoined had
// applied fewer write sets than it had: its Galera state is then removed,
// boot.ForgetIfReversed), so that the start after the heal has it join
// again and catch up.
func (l *Lab) stopVotedOut(ctx context.Context) error {
	var errs []error
	for _, n := range l.outOfCluster(ctx) {
		l.logf("%s: %s: its server stopped, to join again", n.Name, server.WhyOut(ctx, l.Prov.Host(n.Host), n))
		if err := l.servers.Stop(n); err != nil {
			errs = append(errs, fmt.Errorf("%s: stopping the server its cluster voted out: %w", n.Name, err))
			continue
		}
		if _, err := boot.ForgetIfReversed(ctx, bootLab{l}, n); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", n.Name, err))
		}
	}
	return errors.Join(errs...)
}

// endStuckDonors ends the state transfer script of every Galera member
// still donating to a joiner whose server is gone: the donor's script can
// wait on the transfer's connection long after (MariaDB's MDEV-15442), the
// member stays Donor/Desynced, and no other joiner finds a donor ("No donor
// candidates temporarily available"). Ended, the transfer fails and the
// member serves again, as a DBA would make it.
func (l *Lab) endStuckDonors(ctx context.Context) error {
	var errs []error
	for _, n := range l.galeraIn(ctx, server.DonorDesynced) {
		h := l.Prov.Host(n.Host)
		joiner := server.DonatingTo(ctx, h, n)
		j, ok := l.p.Node(joiner)
		if joiner == "" || !ok || l.alive(j) {
			continue
		}
		if p, err := h.Process(ctx, server.DonorScript(n)); err != nil || p.Pid == 0 {
			continue
		}
		l.logf("%s: still donating a state transfer to %s, whose server is gone: its transfer script ended, so that it serves again", n.Name, joiner)
		if err := h.Kill(ctx, server.DonorScript(n)); err != nil {
			errs = append(errs, fmt.Errorf("%s: ending its state transfer to %s, whose server is gone: %w", n.Name, joiner, err))
		}
	}
	return errors.Join(errs...)
}

// outOfCluster are the running Galera members out of their cluster
// (boot.IsOut: in state Inconsistent, or too busy to answer the probe in
// time while their log's last run says they left it or were voted out).
func (l *Lab) outOfCluster(ctx context.Context) []*plan.Node {
	var out []*plan.Node
	for i := range l.p.Nodes {
		n := &l.p.Nodes[i]
		if n.Kind != spec.KindGalera || !l.alive(n) {
			continue
		}
		if boot.IsOut(ctx, bootLab{l}, n) {
			out = append(out, n)
		}
	}
	return out
}

// galeraIn are the Galera members whose server runs and is in state st.
func (l *Lab) galeraIn(ctx context.Context, st server.State) []*plan.Node {
	var out []*plan.Node
	for i := range l.p.Nodes {
		if n := &l.p.Nodes[i]; n.Kind == spec.KindGalera && l.alive(n) && l.Probe(ctx, n).State == st {
			out = append(out, n)
		}
	}
	return out
}

// balancerOf is the load balancer a host belongs to (one of no instance
// when it is none's).
func (l *Lab) balancerOf(host string) lb.Balancer {
	if b, ok := l.p.LBOn(host); ok {
		return l.Balancer(b)
	}
	return lb.Balancer{LB: &plan.LB{}}
}

// LBWriter is the node a load balancer sends writes to now.
func (l *Lab) LBWriter(ctx context.Context, b *plan.LB) (string, error) {
	return l.Balancer(b).Writer(ctx)
}

// LBHolder is the host holding a load balancer's address now.
func (l *Lab) LBHolder(ctx context.Context, b *plan.LB) (string, error) {
	return l.Balancer(b).Holder(ctx)
}

// LBInstances says how each host of a load balancer is: its proxy and
// keepalived running, which holds the address.
func (l *Lab) LBInstances(ctx context.Context, b *plan.LB) []lb.Instance {
	return l.Balancer(b).Instances(ctx)
}

// chaosLab is the lab as faults see it (chaos.Lab).
type chaosLab struct{ l *Lab }

func (c chaosLab) Plan() *plan.Plan             { return c.l.p }
func (c chaosLab) Host(name string) host.Host   { return c.l.Prov.Host(name) }
func (c chaosLab) Servers() chaos.Servers       { return c.l.servers }
func (c chaosLab) Links() chaos.Links           { return c.l.wan }
func (c chaosLab) DisksLost() string            { return c.l.disksLost() }
func (c chaosLab) SaveDerived() error           { return c.l.saveDerived() }
func (c chaosLab) Record(r fault.Record) error  { return c.l.RecordFault(r) }
func (c chaosLab) Logf(format string, a ...any) { c.l.logf(format, a...) }
func (c chaosLab) Restart(ctx context.Context, names []string) error {
	return c.l.Restart(ctx, names)
}
func (c chaosLab) Run(ctx context.Context, host string, argv ...string) error {
	return c.l.hosts.Run(ctx, host, argv...)
}
func (c chaosLab) KillBalancer(ctx context.Context, host string, whole bool) error {
	if whole { // as when its whole host dies
		return c.l.killDaemons(ctx, host, roleKeepalived, roleProxy)
	}
	return c.l.killDaemons(ctx, host, roleProxy)
}
func (c chaosLab) KillHost(ctx context.Context, name string) error { return c.l.killHost(ctx, name) }

// killHost kills every daemon of a host with SIGKILL (a crash).
func (l *Lab) killHost(ctx context.Context, name string) error { return l.killDaemons(ctx, name) }
