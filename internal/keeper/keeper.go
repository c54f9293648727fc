// Package keeper is `hadrill keeper`, one daemon per lab: it writes
// heartbeats on every replicated cluster (replica lag is how old their copy
// is), re-points a DR channel whose source node stopped being a healthy
// member of its Galera cluster, fails a primary cluster with `failover:
// auto` over to a replica when its primary dies, turns a second writer of a
// primary cluster read-only at once and gives a node that strayed from its
// role that role again, and archives every node's binary
// logs. It keeps nothing it needs across a restart to itself: the
// roles are in the lab's roles.json, the lag in the servers. A keeper
// whose lab's directory is gone (removed by hand under it) ends.
package keeper

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/replication"
	"github.com/hadrill/hadrill/internal/server"
	"github.com/hadrill/hadrill/internal/spec"
	"github.com/hadrill/hadrill/internal/supervise"
)

// Tick is the keeper's rhythm: channels are checked every tick, heartbeats
// written every other tick (the lag it measures has this resolution),
// binary logs archived every ArchiveEvery beside.
const Tick = 250 * time.Millisecond

// ArchiveEvery is how often binary logs are archived (how far behind the
// last recoverable moment trails).
const ArchiveEvery = time.Second

// Daemon is a lab's keeper under supervision (exe: the hadrill binary).
func Daemon(p *plan.Plan, home, exe string) supervise.Daemon {
	return p.Keeper.Named("keeper", []string{exe, "keeper", "--home", home, "--name", p.Lab, "--lab-dir", p.Dir})
}

// Keeper watches one lab.
type Keeper struct {
	Repl *replication.Manager
	Log  io.Writer
	// Archive copies what is new in a node's binary logs into the lab's
	// archive (nil: nothing is archived).
	Archive func(ctx context.Context, n *plan.Node) error

	conns  *server.Conns
	mu     sync.Mutex        // last is shared with the archiver
	last   map[string]string // last error per subject, logged once
	tables map[string]bool   // heartbeat table created on this node
	guards map[string]*guard // per primary cluster with automatic failover
}

// guard is what the keeper saw of a primary cluster's primary.
type guard struct {
	primary  string
	lastSeen time.Time // it last answered
	missed   time.Time // it first did not, since it last answered
	misses   int       // ticks in a row it did not
	isolated int       // looks in a row no host of its clients or replicas reached it
}

// Misses is how many ticks in a row the primary must not answer before
// the keeper looks for a failover (a primary killed a moment ago is gone
// for good; one answer lost to a busy machine is not). One whose server
// still runs must also have been out of reach for the cluster's
// failover_after (Due).
const Misses = 2

// Due reports whether a primary out of reach since it was last seen (or,
// never seen by this keeper, since it first missed) is due for a failover:
// Misses ticks in a row, and, unless its server is gone, at least after.
func Due(misses int, gone bool, lastSeen, missed, now time.Time, after time.Duration) bool {
	if misses < Misses {
		return false
	}
	if gone {
		return true
	}
	since := lastSeen
	if since.IsZero() {
		since = missed
	}
	return now.Sub(since) >= after
}

// probeTimeout bounds the primary's answer to the keeper.
const probeTimeout = 300 * time.Millisecond

// Run keeps the lab until ctx is cancelled.
func (k *Keeper) Run(ctx context.Context) error {
	p := k.Repl.Plan
	k.conns = server.NewConns(k.Repl.Servers)
	defer k.conns.Close()
	k.last, k.tables, k.guards = map[string]string{}, map[string]bool{}, map[string]*guard{}
	if k.Archive != nil {
		actx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		defer func() { <-done }()
		defer stop() // first: the keeper may end before its context does (its lab gone)
		go func() { defer close(done); k.archive(actx) }()
	}
	if p.Mode != plan.ModeSSH { // clock faults run on this computer only
		sctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		defer func() { <-done }()
		defer stop() // first: the keeper may end before its context does
		go func() { defer close(done); k.strobes(sctx) }()
	}
	t := time.NewTicker(Tick)
	defer t.Stop()
	for i := 0; ; i++ {
		for j := range p.Clusters {
			c := &p.Clusters[j]
			if c.AutoFailover {
				k.guard(ctx, c)
			}
			if c.Kind == spec.KindPrimary {
				_, err := k.Repl.Reconcile(ctx, k.conns, c, probeTimeout)
				k.logOnce("roles "+c.Name, err)
			}
		}
		for _, ch := range p.Channels {
			k.watch(ctx, ch)
		}
		if i%2 == 0 {
			k.heartbeats(ctx)
		}
		if _, err := os.Stat(p.Dir); errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(k.Log, "the lab's directory %s is gone: nothing left to keep\n", p.Dir)
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// archive copies every node's new binary log events into the archive
// every ArchiveEvery until ctx ends, beside the keeper's rhythm (a remote
// host slow to answer delays no failover).
func (k *Keeper) archive(ctx context.Context) {
	p := k.Repl.Plan
	t := time.NewTicker(ArchiveEvery)
	defer t.Stop()
	for {
		for j := range p.Nodes {
			n := &p.Nodes[j]
			actx, cancel := context.WithTimeout(ctx, 10*ArchiveEvery)
			err := k.Archive(actx, n)
			cancel()
			if ctx.Err() != nil {
				return
			}
			k.logOnce("archive "+n.Name, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// StrobeTick is how often the keeper looks at the nodes' clock strobes.
const StrobeTick = 100 * time.Millisecond

// strobes writes each node's clock file from its strobe file while it has
// one (hadrill fault clock --strobe): the offset and the real time in
// turn.
func (k *Keeper) strobes(ctx context.Context) {
	p := k.Repl.Plan
	written := map[string]string{}
	t := time.NewTicker(StrobeTick)
	defer t.Stop()
	for {
		for j := range p.Nodes {
			n := &p.Nodes[j]
			if _, err := os.Stat(server.StrobeFile(n)); err != nil {
				delete(written, n.Name)
				continue
			}
			k.logOnce("clock strobe "+n.Name, k.strobe(n, written))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// strobe writes a node's clock file as its strobe wants it now, unless
// written says it already holds that, with its clock locked (a fault or
// a heal changing it waits).
func (k *Keeper) strobe(n *plan.Node, written map[string]string) error {
	unlock, err := server.LockClock(n)
	if err != nil {
		return err
	}
	defer unlock()
	b, err := os.ReadFile(server.StrobeFile(n))
	st, ok := server.ParseStrobe(string(b))
	if err != nil || !ok { // ended while the lock was awaited
		delete(written, n.Name)
		return nil
	}
	want := st.At(time.Now())
	if written[n.Name] == want {
		return nil
	}
	if err := os.WriteFile(server.ClockFile(n), []byte(want+"\n"), 0o644); err != nil {
		return err
	}
	written[n.Name] = want
	return nil
}

func (k *Keeper) logOnce(subject string, err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	if k.last[subject] != msg {
		k.last[subject] = msg
		if err != nil && k.Log != nil {
			fmt.Fprintf(k.Log, "%s: %v\n", subject, err)
		}
	}
}

// heartbeats writes the heartbeat row on each source cluster's writer.
func (k *Keeper) heartbeats(ctx context.Context) {
	p := k.Repl.Plan
	for i := range p.Clusters {
		c := &p.Clusters[i]
		if !Replicated(p, c) {
			continue
		}
		w := k.writer(ctx, c)
		if w == nil {
			continue
		}
		db := k.conns.DB(w)
		qctx, cancel := context.WithTimeout(ctx, time.Second)
		var err error
		if !k.tables[w.Name] {
			err = mariadb.Exec(qctx, db, "CREATE DATABASE IF NOT EXISTS hd_meta",
				"CREATE TABLE IF NOT EXISTS "+replication.HeartbeatTable+" (cluster VARCHAR(16) PRIMARY KEY, ts DATETIME(6) NOT NULL, node VARCHAR(16) NOT NULL) ENGINE=InnoDB")
			k.tables[w.Name] = err == nil
		}
		if err == nil {
			// not on a writer turned read-only (a switchover waiting for its
			// candidate to catch up): the keeper's privileges would pass
			// read_only, and a heartbeat written then is one the candidate lacks
			_, err = db.ExecContext(qctx, "REPLACE INTO "+replication.HeartbeatTable+" SELECT ?, ?, ? FROM DUAL WHERE @@global.read_only = 0", c.Name, replication.FormatHeartbeat(time.Now()), w.Name)
		}
		cancel()
		k.logOnce("heartbeat "+c.Name, err)
	}
}

// Replicated reports whether a cluster has replicas (a primary cluster) or
// feeds a channel: its writer then carries a heartbeat.
func Replicated(p *plan.Plan, c *plan.Cluster) bool {
	if c.Kind == spec.KindPrimary {
		return true
	}
	for _, ch := range p.Channels {
		if ch.From == c.Name {
			return true
		}
	}
	return false
}

// writer is where a cluster's heartbeat is written: its primary, a
// standalone server itself, or a healthy Galera member.
func (k *Keeper) writer(ctx context.Context, c *plan.Cluster) *plan.Node {
	p := k.Repl.Plan
	if c.Kind != spec.KindGalera {
		name := k.Repl.PrimaryOf(c)
		if c.Kind == spec.KindStandalone && len(c.Nodes) > 0 {
			name = c.Nodes[0]
		}
		n, _ := p.Node(name)
		if g := k.guards[c.Name]; g != nil && g.primary == name && g.misses > 0 {
			// its clients cannot reach it: a heartbeat written into it now may never
			// reach a replica (one whose IO thread still shows connected may only not
			// have noticed the cut yet), and would make it hold what no replica has
			return nil
		}
		if k.Repl.Servers.Alive(n) {
			return n
		}
		return nil
	}
	for _, cand := range k.Repl.Candidates(ctx, k.conns, c) {
		if cand.Healthy {
			n, _ := p.Node(cand.Node)
			return n
		}
	}
	return nil
}

// watch re-points a channel from a Galera cluster when its source node is
// no longer a healthy member.
func (k *Keeper) watch(ctx context.Context, ch plan.Channel) {
	p := k.Repl.Plan
	from, _ := p.Cluster(ch.From)
	recv, _ := p.Node(ch.Receiver)
	if from.Kind != spec.KindGalera || !k.Repl.Servers.Alive(recv) {
		return
	}
	choice, err := k.Repl.ChooseSource(ctx, k.conns.DB(recv), ch, k.Repl.Candidates(ctx, k.conns, from), nil)
	if err != nil || !choice.Repoint {
		k.logOnce("channel "+ch.Name, err)
		return
	}
	k.logOnce("channel "+ch.Name, k.Repl.Move(ctx, k.conns.DB(recv), ch, choice))
}

// guard watches a primary cluster's primary and fails the cluster over
// once it has not answered for Misses ticks (replication.Manager.Failover
// confirms the failure with the replicas and chooses).
func (k *Keeper) guard(ctx context.Context, c *plan.Cluster) {
	g := k.guards[c.Name]
	primary := k.Repl.PrimaryOf(c)
	if g == nil || g.primary != primary {
		g = &guard{primary: primary}
		k.guards[c.Name] = g
	}
	n, _ := k.Repl.Plan.Node(primary)
	seen := k.look(ctx, c, n)
	if seen.Answers {
		g.lastSeen, g.misses, g.isolated = time.Now(), 0, 0
		k.logOnce("failover "+c.Name, nil)
		return
	}
	if g.misses++; g.misses == 1 {
		g.missed = time.Now()
	}
	// isolation stands in for the replicas' own word that the primary is
	// gone: one look's timeouts (a keeper starved of CPU) are not enough
	if seen.Isolated {
		g.isolated++
	} else {
		g.isolated = 0
	}
	seen.Isolated = g.isolated >= Misses
	if !Due(g.misses, seen.Gone, g.lastSeen, g.missed, time.Now(), c.FailoverAfter) {
		return
	}
	// the failover looks again once it holds the roles lock; what the
	// keeper saw a moment ago is that look unless the lock kept it waiting
	at, fresh := time.Now(), true
	out, err := k.Repl.Failover(ctx, k.conns, c, primary, g.lastSeen, func(ctx context.Context) replication.Sight {
		if fresh && time.Since(at) < Tick/2 {
			fresh = false
			return seen
		}
		again := k.look(ctx, c, n)
		again.Isolated = again.Isolated && seen.Isolated
		return again
	})
	switch {
	case err != nil:
		k.logOnce("failover "+c.Name, err)
	case out.Promoted == "":
		k.logOnce("failover "+c.Name, fmt.Errorf("%s; no failover: %s", seen.Why, out.Why))
	default:
		k.logOnce("failover "+c.Name, nil)
	}
}

// look sees a primary cluster's node as its clients and its replicas do,
// all at once: it answers as its clients see it when it answers the keeper
// and, where the lab has the hosts (Vantage), its host takes a connection
// from one of them (a node cut off by a partition still answers on its own
// machine; its clients cannot reach it). It is isolated when the hosts of
// its clients and of its replicas (Lookouts) all fail to reach its host.
func (k *Keeper) look(ctx context.Context, c *plan.Cluster, n *plan.Node) replication.Sight {
	p := k.Repl.Plan
	clients, all := Vantage(p, c, n.Name), Lookouts(p, c, n.Name)
	// its health agent's port, on the same host and address: a connection
	// to mariadbd closed before logging in would be an aborted connect in
	// its statistics, four a second
	port := n.Port
	if n.AgentPort != 0 {
		port = n.AgentPort
	}
	addr := net.JoinHostPort(n.Address, strconv.Itoa(port))
	reached := make([]bool, len(all))
	var wg sync.WaitGroup
	for i, h := range all {
		wg.Add(1)
		go func() { defer wg.Done(); reached[i] = server.Reachable(ctx, h.Netns, addr, probeTimeout) }()
	}
	st := k.conns.Probe(ctx, n, probeTimeout)
	wg.Wait()
	var s replication.Sight
	s.Gone = st.State == server.Down
	s.Isolated = len(all) > 0 && !slices.Contains(reached, true)
	clientSees := len(clients) == 0
	for i, h := range all {
		if reached[i] && slices.ContainsFunc(clients, func(o plan.Host) bool { return o.Name == h.Name }) {
			clientSees = true
		}
	}
	switch {
	case !st.State.Answering():
		s.Why = fmt.Sprintf("%s does not answer (%s)", n.Name, st.State)
	case !clientSees:
		var names []string
		for _, h := range clients {
			names = append(names, h.Name)
		}
		s.Why = fmt.Sprintf("%s runs but cannot be reached at %s from %s", n.Name, addr, strings.Join(names, ", "))
	default:
		s.Answers = true
	}
	return s
}

// Vantage is where the keeper looks at a primary cluster's node from, as
// its clients do: the hosts of the load balancers in front of the cluster,
// else the hosts of its other nodes. Only a lab of namespaces has them
// here (a rootless lab's hosts share this machine's network, a remote
// lab's are on other machines); elsewhere there are none, and the node's
// own answer is all the keeper has.
func Vantage(p *plan.Plan, c *plan.Cluster, node string) []plan.Host {
	if lbs := labHosts(p, balancers(p, c)); len(lbs) > 0 {
		return lbs
	}
	return labHosts(p, others(p, c, node))
}

// Lookouts are the hosts the keeper looks at a primary cluster's node from
// before it fails over: its clients' (Vantage) and its replicas' (the
// cluster's other nodes). None outside a lab of namespaces.
func Lookouts(p *plan.Plan, c *plan.Cluster, node string) []plan.Host {
	return labHosts(p, append(balancers(p, c), others(p, c, node)...))
}

// balancers are the hosts of the load balancers in front of c.
func balancers(p *plan.Plan, c *plan.Cluster) []string {
	var out []string
	for _, lb := range p.LoadBalancers {
		if lb.Cluster == c.Name {
			for _, in := range lb.Instances {
				out = append(out, in.Host)
			}
		}
	}
	return out
}

// others are the hosts of c's nodes but node.
func others(p *plan.Plan, c *plan.Cluster, node string) []string {
	var out []string
	for _, name := range c.Nodes {
		if o, ok := p.Node(name); ok && name != node {
			out = append(out, o.Host)
		}
	}
	return out
}

// labHosts are the named hosts that are namespaces of this lab, once each
// (none but in a lab of namespaces).
func labHosts(p *plan.Plan, names []string) []plan.Host {
	if p.Mode != plan.ModeNetns {
		return nil
	}
	var out []plan.Host
	for _, name := range names {
		if h, ok := p.Host(name); ok && h.Netns != "" && !slices.ContainsFunc(out, func(o plan.Host) bool { return o.Name == name }) {
			out = append(out, *h)
		}
	}
	return out
}

// Stamped writes each line to w behind the time it was written (the
// keeper's log: what it did and when, to the millisecond a failover
// needs).
func Stamped(w io.Writer) io.Writer { return &stamped{w: w} }

type stamped struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *stamped) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now().UTC().Format("2006-01-02T15:04:05.000Z ")
	var out []byte
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		if len(line) > 0 {
			out = append(append(out, now...), line...)
		}
	}
	if _, err := s.w.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}
