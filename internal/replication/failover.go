package replication

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/server"
)

// ReplicaView is what the failover manager read of one replica of a
// primary cluster while its primary did not answer.
type ReplicaView struct {
	Node      string
	Reachable bool   // answered the manager
	Fenced    bool   // kept out of replication (never a candidate)
	Source    string // the node its replication connection reads ("" without one)
	IO        string // its IO thread: Yes, Connecting, No
	SQL       string // its SQL thread: Yes, No
	SQLError  string
	Received  Position // gtid_io_pos: what it received from the primary
	Applied   Position // gtid_slave_pos: what it applied
}

// has is everything the replica holds or will hold: what it received, and
// what it applied (which a restarted replica may not have received anew).
func (v ReplicaView) has() Position {
	out := Position{}
	for _, p := range []Position{v.Applied, v.Received} {
		for d, g := range p {
			if cur, ok := out[d]; !ok || cur.Seq < g.Seq {
				out[d] = g
			}
		}
	}
	return out
}

// Sight is what the manager saw of a primary as its clients and
// replicas see it, all at once.
type Sight struct {
	Answers bool   // it answers as its clients see it
	Why     string // how it failed when it does not
	// Gone: no server process runs (killed, or its host crashed): nothing
	// a slow network or a busy machine could explain.
	Gone bool
	// Isolated: it was looked at from the hosts of its clients and of its
	// replicas, and none of them reached its host. Its replicas' IO threads
	// may still show connected (they notice after slave_net_timeout), but
	// nothing can reach them from it any more.
	Isolated bool
}

// PrimaryDown decides whether a primary that did not answer the manager
// (or that its clients cannot reach) is down for its replicas too. Some
// replica must answer (else there is nothing to promote and nothing
// confirms the failure). Unless no host of its clients or replicas reaches
// the primary (isolated), no replica may still be connected to it: if one
// is, the manager alone is cut off from it (a partition), and promoting
// would make two primaries.
func PrimaryDown(primary string, views []ReplicaView, isolated bool) (bool, string) {
	if r := Receiving(primary, views); r != "" && !isolated {
		return false, fmt.Sprintf("%s still receives from %s", r, primary)
	}
	answering := 0
	for _, v := range views {
		if v.Reachable {
			answering++
		}
	}
	if answering == 0 {
		return false, "no replica answers"
	}
	if isolated {
		return true, fmt.Sprintf("no host of its clients or replicas reaches %s", primary)
	}
	return true, fmt.Sprintf("no replica receives from %s", primary)
}

// Receiving is the first replica that answers and still receives from
// primary (its IO thread connected), "" when none does.
func Receiving(primary string, views []ReplicaView) string {
	for _, v := range views {
		if v.Reachable && v.Source == primary && v.IO == "Yes" {
			return v.Node
		}
	}
	return ""
}

// Choice is a failover's decision.
type Choice struct {
	Node string // the replica to promote ("" : none)
	// Wait is what it must apply before it takes writes (what it received).
	Wait   Position
	Reason string
}

// ChooseFailover picks the replica to promote after primary died: one
// that followed it, answers, is not fenced, can apply (its SQL thread has
// not stopped on an error) and holds everything any other replica holds
// (promoting a replica that lags another would drop what only the other
// received). Of several, the first that applied all it received (no wait),
// else the first in the cluster's order. No candidate, or replicas that
// diverged (none holds all the others hold): no choice, and Reason says
// why.
func ChooseFailover(primary string, views []ReplicaView) Choice {
	var cands []ReplicaView
	var why []string
	for _, v := range views {
		switch {
		case !v.Reachable:
			why = append(why, v.Node+" does not answer")
		case v.Fenced:
			why = append(why, v.Node+" is fenced")
		case v.Source != primary:
			why = append(why, fmt.Sprintf("%s does not replicate from %s", v.Node, primary))
		case v.SQL != "Yes" && v.SQLError != "":
			why = append(why, fmt.Sprintf("%s stopped applying: %s", v.Node, v.SQLError))
		default:
			cands = append(cands, v)
		}
	}
	if len(cands) == 0 {
		return Choice{Reason: "no replica can take over: " + strings.Join(why, "; ")}
	}
	var covering []ReplicaView
	for _, c := range cands {
		all := true
		for _, o := range cands {
			if !c.has().Covers(o.has()) {
				all = false
			}
		}
		if all {
			covering = append(covering, c)
		}
	}
	if len(covering) == 0 {
		var pos []string
		for _, c := range cands {
			pos = append(pos, fmt.Sprintf("%s has %s", c.Node, c.has()))
		}
		return Choice{Reason: "the replicas diverged, none holds what all the others hold: " + strings.Join(pos, "; ")}
	}
	pick := covering[0]
	for _, c := range covering {
		if c.Applied.Covers(c.Received) {
			pick = c
			break
		}
	}
	reason := fmt.Sprintf("%s holds everything the other replicas received (%s)", pick.Node, pick.has())
	if len(cands) == 1 {
		reason = fmt.Sprintf("%s is the only replica that can take over (%s)", pick.Node, pick.has())
	}
	return Choice{Node: pick.Node, Wait: pick.Received, Reason: reason}
}

// LagVerdict judges the chosen replica's copy once it applied what it
// received: its newest heartbeat (written on the primary every 0.5 s) may
// be at most maxLag older than the moment the primary was last seen alive,
// else what the primary committed in between would be given up.
func LagVerdict(lastSeen, heartbeat time.Time, maxLag time.Duration) (bool, string) {
	if heartbeat.IsZero() {
		return false, "its copy holds no heartbeat of the primary: how far behind it is cannot be told"
	}
	behind := lastSeen.Sub(heartbeat)
	if behind > maxLag {
		return false, fmt.Sprintf("its copy is %.1fs older than the primary's last sign of life (failover_max_lag %v)", behind.Seconds(), maxLag)
	}
	return true, fmt.Sprintf("its copy is at most %.1fs older than the primary's last sign of life", max(behind, 0).Seconds())
}

// Views reads every replica of a primary cluster (all nodes but primary)
// over conns, each within timeout.
func (m *Manager) Views(ctx context.Context, conns *server.Conns, c *plan.Cluster, primary string, timeout time.Duration) []ReplicaView {
	fenced := m.roles().Fenced
	var out []ReplicaView
	for _, name := range c.Nodes {
		if name == primary {
			continue
		}
		n, _ := m.Plan.Node(name)
		v := ReplicaView{Node: name, Fenced: fenced[name] != ""}
		out = append(out, v)
		if !m.Servers.Alive(n) {
			continue
		}
		qctx, cancel := context.WithTimeout(ctx, timeout)
		out[len(out)-1] = m.view(qctx, conns.DB(n), v)
		cancel()
	}
	return out
}

func (m *Manager) view(ctx context.Context, db *sql.DB, v ReplicaView) ReplicaView {
	chans, err := mariadb.Replicas(ctx, db)
	if err != nil {
		return v
	}
	var applied string
	if err := db.QueryRowContext(ctx, "SELECT @@gtid_slave_pos").Scan(&applied); err != nil {
		return v
	}
	v.Reachable = true
	v.Applied, _ = ParsePosition(applied)
	for _, ch := range chans {
		if ch["connection_name"] != "" {
			continue
		}
		c := Channel(ch)
		v.Source, v.IO, v.SQL, v.SQLError = m.nodeAt(ch["master_host"]), ch["slave_io_running"], ch["slave_sql_running"], ch["last_sql_error"]
		v.Received, _ = ParsePosition(c["gtid_io_pos"])
	}
	return v
}

// Outcome is what a failover attempt did: the node promoted, or why none
// was.
type Outcome struct {
	Promoted string
	Why      string
}

// Failover promotes a replica of c, whose primary (old) stopped answering
// the keeper at lastSeen (look: how it is seen now, by its clients and its
// replicas' hosts), if the failure is confirmed (PrimaryDown), a
// replica holds what all others hold (ChooseFailover), applies it within
// the cluster's failover_max_lag and then lags at most that much
// (LagVerdict). An old primary that still runs, cut off from its clients
// and replicas, is made read-only first (fenced through its own machine,
// as a manager with a path of its own to it does); it gets its role back
// from Reconcile, which checks what it holds. An isolated primary's
// replicas stop receiving before they are read, so what they hold is final
// when one is chosen (bytes still in a socket could otherwise reach one
// after another was chosen); they receive again when none is promoted. Its
// Outcome is the promoted node, or why none was. It holds the roles lock
// and re-reads the record first: a promotion meanwhile (another keeper
// tick, `promote`) is never repeated.
func (m *Manager) Failover(ctx context.Context, conns *server.Conns, c *plan.Cluster, old string, lastSeen time.Time,
	look func(context.Context) Sight) (out Outcome, err error) {
	unlock, err := m.lock(ctx)
	if err != nil {
		return Outcome{}, err
	}
	defer unlock()
	if cur := m.PrimaryOf(c); cur != old {
		return Outcome{Why: fmt.Sprintf("%s is the primary already", cur)}, nil
	}
	oldNode, _ := m.Plan.Node(old)
	seen := look(ctx)
	if seen.Answers {
		return Outcome{Why: old + " answers again"}, nil // it came back while the lock was awaited
	}
	if seen.Isolated {
		m.stopReceiving(ctx, c, old, true)
		defer func() {
			if out.Promoted == "" {
				m.receiveAgain(ctx, c, old)
			}
		}()
	}
	views := m.Views(ctx, conns, c, old, time.Second)
	down, downWhy := PrimaryDown(old, views, seen.Isolated)
	if !down {
		return Outcome{Why: downWhy}, nil
	}
	downWhy = seen.Why + " and " + downWhy
	choice := ChooseFailover(old, views)
	if choice.Node == "" {
		return Outcome{Why: choice.Reason}, nil
	}
	n, _ := m.Plan.Node(choice.Node)
	limit := c.FailoverMaxLag
	if err := m.waitApplied(ctx, n, choice.Wait.String(), limit); err != nil {
		return Outcome{Why: fmt.Sprintf("%s chosen (%s), but %v", n.Name, choice.Reason, err)}, nil
	}
	hb, err := m.heartbeat(ctx, conns.DB(n), c.Name)
	if err != nil {
		return Outcome{}, fmt.Errorf("%s: %w", n.Name, err)
	}
	if lastSeen.IsZero() || lastSeen.Before(hb) {
		lastSeen = hb // the keeper restarted meanwhile: the newest sign of life is the heartbeat itself
	}
	ok, lag := LagVerdict(lastSeen, hb, limit)
	if !ok {
		return Outcome{Why: fmt.Sprintf("%s chosen (%s), but %s", n.Name, choice.Reason, lag)}, nil
	}
	m.logf("automatic failover of cluster %s: %s; %s; %s", c.Name, downWhy, choice.Reason, lag)
	fenced := m.fence(ctx, conns, oldNode)
	if !seen.Isolated {
		m.stopReceiving(ctx, c, old, false)
	}
	if err := m.takeOver(ctx, c, n, oldNode, false); err != nil {
		return Outcome{}, err
	}
	<-fenced
	return Outcome{Promoted: n.Name, Why: choice.Reason}, nil
}

// probeWait bounds a failover's own probe of the old primary.
const probeWait = time.Second / 2

// fence turns a failed primary that still runs (cut off from its clients
// and replicas) read-only through its own machine, as a manager with a
// path of its own to it does, beside the promotion: the statement waits
// for commits in progress, and a semi-sync commit waits out its
// acknowledgement timeout first. Before that, at once and whether it
// answers or not, it is marked deposed on its host (depose): a cut that
// heals within that timeout would otherwise find it writable, and a load
// balancer that asks its agent would send it writes again. The channel
// closes when both are done, or after followWait, the statement left to
// finish in the server.
func (m *Manager) fence(ctx context.Context, conns *server.Conns, old *plan.Node) <-chan struct{} {
	deposed := make(chan struct{})
	go func() { // at once, whether it answers or not: it may be reachable again any moment
		defer close(deposed)
		m.depose(ctx, old)
	}()
	if !conns.Probe(ctx, old, probeWait).State.Answering() {
		return deposed
	}
	done := make(chan struct{})
	result := make(chan error, 1)
	go func() {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		result <- m.execOn(fctx, old, "SET GLOBAL read_only=ON")
	}()
	go func() {
		defer close(done)
		defer func() { <-deposed }()
		select {
		case err := <-result:
			if err != nil {
				m.logf("%s still runs, cut off, and could not be made read-only: %v", old.Name, err)
				return
			}
			m.logf("%s still runs, cut off: read-only now; it rejoins once what it holds is checked", old.Name)
		case <-time.After(followWait):
			m.logf("%s still runs, cut off: read-only requested, waiting for its commits in progress", old.Name)
		}
	}()
	return done
}

// heartbeat is the newest heartbeat of a cluster a node holds (zero: none).
func (m *Manager) heartbeat(ctx context.Context, db *sql.DB, cluster string) (time.Time, error) {
	var ts sql.NullString
	err := db.QueryRowContext(ctx, "SELECT DATE_FORMAT(ts, '%Y-%m-%d %H:%i:%s.%f') FROM "+HeartbeatTable+" WHERE cluster = ?", cluster).Scan(&ts)
	var me *mysql.MySQLError
	if errors.Is(err, sql.ErrNoRows) || (errors.As(err, &me) && (me.Number == 1146 || me.Number == 1049)) || (err == nil && !ts.Valid) {
		return time.Time{}, nil // no heartbeat written yet (no table, no database, no row)
	}
	if err != nil {
		return time.Time{}, err
	}
	return ParseHeartbeat(ts.String)
}

// HeartbeatLayout is how a heartbeat's time is written: the keeper's own
// clock, in UTC, never a server's NOW(): a server whose clock is off (a
// clock fault, a host without NTP) would shift every lag measured from it.
const HeartbeatLayout = "2006-01-02 15:04:05.000000"

// FormatHeartbeat is t as a heartbeat row holds it.
func FormatHeartbeat(t time.Time) string { return t.UTC().Format(HeartbeatLayout) }

// ParseHeartbeat reads a heartbeat row's time.
func ParseHeartbeat(s string) (time.Time, error) {
	t, err := time.ParseInLocation(HeartbeatLayout, s, time.UTC)
	if err != nil {
		return time.Time{}, fmt.Errorf("heartbeat time %q: %w", s, err)
	}
	return t, nil
}

// Reconcile gives a primary cluster's nodes their roles again when one
// has strayed from its role: a node that takes writes without being the
// recorded primary (a former primary resumed after a pause, or started by
// hand: two writers would diverge) turns read-only at once; a node that
// answers but follows no one, or someone else, and is not fenced (it did
// not answer when the primary changed) is given its role as every start
// does: a replica of the primary, or fenced when it holds what the primary
// never received. It returns the nodes it found astray.
func (m *Manager) Reconcile(ctx context.Context, conns *server.Conns, c *plan.Cluster, timeout time.Duration) ([]string, error) {
	astray := func(primary string) (writers, orphans []*plan.Node) {
		p, _ := m.Plan.Node(primary)
		fenced := m.roles().Fenced
		for _, name := range c.Nodes {
			n, _ := m.Plan.Node(name)
			if name == primary {
				continue
			}
			st := conns.Probe(ctx, n, timeout)
			switch {
			case st.Writable():
				writers = append(writers, n)
			case st.State == server.Running && fenced[name] == "" && m.Servers.Alive(p) &&
				st.Status[server.KeySource] != p.PeerAddress() && st.Status[server.KeySource] != p.Address:
				orphans = append(orphans, n)
			}
		}
		return writers, orphans
	}
	if w, o := astray(m.PrimaryOf(c)); len(w)+len(o) == 0 {
		return nil, nil
	}
	unlock, err := m.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	primary := m.PrimaryOf(c) // a promotion may have finished meanwhile
	writers, orphans := astray(primary)
	var names []string
	for _, n := range writers {
		if err := m.execOn(ctx, n, "SET GLOBAL read_only=ON"); err != nil {
			return names, err
		}
		m.logf("%s took writes without being the primary of cluster %s (%s is): read-only now", n.Name, c.Name, primary)
		names = append(names, n.Name)
	}
	for _, n := range orphans {
		names = append(names, n.Name)
	}
	if len(names) == 0 {
		return nil, nil
	}
	return names, m.ensurePrimaryCluster(ctx, c)
}

// stopReceiving stops the IO thread of every other running node at once,
// once the failover is decided: a thread still trying to reach a crashed
// host holds up STOP SLAVE for seconds (until its connection attempt
// fails), which would otherwise be paid once per node, one after another.
// A semi-sync replica's IO thread stops at once, but STOP SLAVE then
// connects to the primary to end its dump thread there, which for a
// primary out of reach takes until the connection attempt fails: at most
// rpl_semi_sync_slave_kill_conn_timeout, 1 s in every semi-sync node's
// my.cnf (5 by default). With abort (the primary isolated: nothing reaches
// it) and servers that can (Aborter), that attempt is ended as it starts:
// the replica's host's connections to the primary are aborted every
// abortEvery until STOP SLAVE returns.
func (m *Manager) stopReceiving(ctx context.Context, c *plan.Cluster, old string, abort bool) {
	ab, _ := m.Servers.(Aborter)
	oldNode, _ := m.Plan.Node(old)
	to := oldNode.PeerAddress()
	var wg sync.WaitGroup
	for _, name := range c.Nodes {
		n, _ := m.Plan.Node(name)
		if name == old || !m.Servers.Alive(n) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sctx, cancel := context.WithTimeout(ctx, followWait)
			defer cancel()
			stopped := make(chan struct{})
			go func() {
				defer close(stopped)
				_ = m.execOn(sctx, n, "STOP SLAVE '' IO_THREAD") // a node without the connection, or one that does not answer, is dealt with by takeOver
			}()
			if !abort || ab == nil {
				<-stopped
				return
			}
			t := time.NewTicker(abortEvery)
			defer t.Stop()
			for {
				select {
				case <-stopped:
					return
				case <-t.C:
					_ = ab.AbortConnections(sctx, n, to) // failing, STOP SLAVE still ends within its bound
				}
			}
		}()
	}
	wg.Wait()
}

// abortEvery is how often a stopping replica's connections to an isolated
// primary are aborted.
const abortEvery = 50 * time.Millisecond

// Aborter is what a lab's servers may also do: abort every TCP connection
// from a node's host to an address, attempts included, at once (as root
// on the host: ss -K).
type Aborter interface {
	AbortConnections(ctx context.Context, n *plan.Node, addr string) error
}

// receiveAgain starts the IO threads stopReceiving stopped, when no
// failover followed.
func (m *Manager) receiveAgain(ctx context.Context, c *plan.Cluster, old string) {
	for _, name := range c.Nodes {
		n, _ := m.Plan.Node(name)
		if name == old || !m.Servers.Alive(n) || m.roles().Fenced[name] != "" {
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, followWait)
		_ = m.execOn(sctx, n, "START SLAVE '' IO_THREAD") // one that does not answer is given its role by Reconcile
		cancel()
	}
}
