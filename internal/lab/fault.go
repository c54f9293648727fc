package lab

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/chaos"
	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/galera"
	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/infra/disk"
	"github.com/hadrill/hadrill/internal/lb"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/server"
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
	if err := l.startAll(ctx); err != nil {
		return err
	}
	// the links are back at the spec's figures: measured, and a link
	// whose round trip cannot be measured at all is not healed
	if _, err = l.wan.Check(ctx, false); err != nil {
		return err
	}
	return l.takesWrites(ctx)
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

// healWrites is how long a heal waits for every cluster to take writes
// again: a server that found its disk full retries the write once a
// minute, so its cluster may wait up to that long after the space is back.
const healWrites = 90 * time.Second

// takesWrites waits until every cluster that takes writes (not one a
// channel feeds: its own writes would be errant) commits one again, a
// heartbeat in hadrill's own schema on its writer, saying every 10 s what
// it waits for; an error when one still takes none at the deadline.
func (l *Lab) takesWrites(ctx context.Context) error {
	fed := map[string]bool{}
	for _, ch := range l.p.Channels {
		fed[ch.To] = true
	}
	repl := l.Replication()
	var errs []error
	for i := range l.p.Clusters {
		c := &l.p.Clusters[i]
		if fed[c.Name] || len(c.Nodes) == 0 {
			continue
		}
		writers := c.Nodes
		if c.Kind == spec.KindPrimary {
			writers = []string{repl.PrimaryOf(c)}
		}
		for _, w := range writers {
			if n, ok := l.p.Node(w); ok && l.alive(n) { // a node left down is said by status
				errs = append(errs, l.waitWrite(ctx, c, n))
				break
			}
		}
	}
	return errors.Join(errs...)
}

// waitWrite commits a heartbeat on n until it succeeds or healWrites
// passes.
func (l *Lab) waitWrite(ctx context.Context, c *plan.Cluster, n *plan.Node) error {
	db := l.Admin(n)
	defer db.Close()
	start, said := time.Now(), time.Time{}
	for {
		actx, cancel := context.WithTimeout(ctx, 15*time.Second) // a semi-sync commit waits out its ack timeout
		err := mariadb.Exec(actx, db, "CREATE DATABASE IF NOT EXISTS hd_meta",
			"CREATE TABLE IF NOT EXISTS hd_meta.heal (cluster VARCHAR(16) PRIMARY KEY, at DATETIME(6) NOT NULL) ENGINE=InnoDB",
			"REPLACE INTO hd_meta.heal VALUES ('"+c.Name+"', NOW(6))")
		cancel()
		switch {
		case err == nil:
			if !said.IsZero() {
				l.logf("cluster %s takes writes again, %s after the heal", c.Name, time.Since(start).Round(100*time.Millisecond))
			}
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case !l.canTakeWrites(ctx, c, n):
			l.logf("cluster %s takes no writes: %s", c.Name, l.whyNoWrites(ctx, c, err))
			return nil // not a heal's to give: recover, or promote
		case time.Since(start) > healWrites:
			return fmt.Errorf("cluster %s takes no writes %s after the heal: %s", c.Name, healWrites, l.whyNoWrites(ctx, c, err))
		case time.Since(said) >= 10*time.Second:
			l.logf("cluster %s takes no writes yet (%s): waiting, at most %s", c.Name, l.whyNoWrites(ctx, c, err), healWrites)
			said = time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// canTakeWrites says whether a cluster could take writes once what holds
// them passes: a Galera member in a primary component, a primary not
// read-only. One with no primary component needs hadrill recover, a
// read-only primary a promotion: no wait brings writes back.
func (l *Lab) canTakeWrites(ctx context.Context, c *plan.Cluster, n *plan.Node) bool {
	st := l.Probe(ctx, n)
	switch c.Kind {
	case spec.KindGalera:
		for _, name := range c.Nodes {
			if m, ok := l.p.Node(name); ok && l.Probe(ctx, m).Primary() {
				return true
			}
		}
		return false
	case spec.KindPrimary:
		return st.Status[server.KeyReadOnly] != "1"
	}
	return true
}

// whyNoWrites says what keeps a cluster's writes waiting: a member that
// asks for flow control (with its full volumes), else the write's error.
func (l *Lab) whyNoWrites(ctx context.Context, c *plan.Cluster, err error) string {
	diskFaults, _ := disk.ReadFaults(l.p)
	for _, name := range c.Nodes {
		n, _ := l.p.Node(name)
		if f := galera.FlowOf(l.Probe(ctx, n).Status); f.Requested {
			why := name + " " + holdsBack(f, chaos.DiskFaults(n, diskFaults))
			if b, err := l.Host(n.Host).ReadFile(ctx, n.LogFile); err == nil && mariadb.WaitsForSpace(string(b)) {
				why += "; it found its disk full and waits: the server tries the write again once a minute, whatever space it has back"
			}
			return why
		}
	}
	for _, name := range c.Nodes {
		if m, ok := l.p.Node(name); ok && c.Kind == spec.KindGalera && l.Probe(ctx, m).Primary() {
			return strings.SplitN(err.Error(), "\n", 2)[0]
		}
	}
	if c.Kind == spec.KindGalera {
		return "none of its members is in a primary component (hadrill recover gives it one)"
	}
	return strings.SplitN(err.Error(), "\n", 2)[0]
}
