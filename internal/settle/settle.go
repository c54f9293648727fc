// Package settle waits, after a heal, until a lab serves again as before
// the fault, and says what it waits for: every cluster that takes writes
// commits one (a Galera cluster paused by flow control, a member that found
// its disk full retrying once a minute), and every primary cluster's
// replicas have caught up with their primary (one whose connections a cut
// left dead answering nothing until TCP gives up on them). Its rooms are
// the lab's servers, seen through Lab.
package settle

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/galera"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/replication"
	"github.com/hadrill/hadrill/internal/server"
	"github.com/hadrill/hadrill/internal/spec"
)

// Lab is what settling needs of a lab.
type Lab interface {
	Plan() *plan.Plan
	// Admin is a node's administrative pool (the caller closes it).
	Admin(n *plan.Node) *sql.DB
	Alive(n *plan.Node) bool
	// Probe is a node's state and, for a Galera member, its wsrep status.
	Probe(ctx context.Context, n *plan.Node) server.Status
	Replication() *replication.Manager
	// Fenced are the primary clusters' nodes kept out of replication.
	Fenced() map[string]string
	// DiskFaults are the disk faults in force on a node's volumes.
	DiskFaults(n *plan.Node) map[string]string
	// ServerLog is a node's server error log ("" when unread).
	ServerLog(ctx context.Context, n *plan.Node) string
	// StartStopped starts every server that is not running, as the heal
	// did before settling.
	StartStopped(ctx context.Context) error
	Logf(format string, a ...any)
}

// restartsAfterHeal is how many times a cluster's members that stopped
// while its writes were awaited are started again.
const restartsAfterHeal = 2

// healWrites is how long a heal waits for every cluster to take writes
// again: a server that found its disk full retries the write once a
// minute, so its cluster may wait up to that long after the space is back.
const healWrites = 90 * time.Second

// Writes waits until every cluster that takes writes (not one a
// channel feeds: its own writes would be errant) commits one again, a
// heartbeat in hadrill's own schema on its writer, saying every 10 s what
// it waits for; an error when one still takes none at the deadline.
func Writes(ctx context.Context, l Lab) error {
	fed := map[string]bool{}
	for _, ch := range l.Plan().Channels {
		fed[ch.To] = true
	}
	repl := l.Replication()
	var errs []error
	for i := range l.Plan().Clusters {
		c := &l.Plan().Clusters[i]
		if fed[c.Name] || len(c.Nodes) == 0 {
			continue
		}
		writers := c.Nodes
		if c.Kind == spec.KindPrimary {
			writers = []string{repl.PrimaryOf(c)}
		}
		for _, w := range writers {
			if n, ok := l.Plan().Node(w); ok && l.Alive(n) { // a node left down is said by status
				errs = append(errs, waitWrite(ctx, l, c, n))
				break
			}
		}
	}
	return errors.Join(errs...)
}

// waitWrite commits a heartbeat on n until it succeeds or healWrites
// passes.
func waitWrite(ctx context.Context, l Lab, c *plan.Cluster, n *plan.Node) error {
	db := l.Admin(n)
	defer db.Close()
	start, said, restarts := time.Now(), time.Time{}, 0
	running := map[string]bool{} // what the heal left running (a node it left down stays so)
	for _, name := range c.Nodes {
		if m, ok := l.Plan().Node(name); ok && l.Alive(m) {
			running[name] = true
		}
	}
	for {
		// a member that stopped since the heal started it (a joiner whose
		// donor left, a rejoin Galera aborted) is started again, as a DBA
		// would, rather than waited for
		if stopped := stoppedMembers(ctx, l, c, running); len(stopped) > 0 && restarts < restartsAfterHeal && ctx.Err() == nil {
			restarts++
			l.Logf("cluster %s: %s stopped after the heal started it: started again", c.Name, strings.Join(stopped, "; "))
			if err := l.StartStopped(ctx); err != nil {
				return fmt.Errorf("cluster %s: starting again what stopped after the heal: %w", c.Name, err)
			}
			continue
		}
		actx, cancel := context.WithTimeout(ctx, 15*time.Second) // a semi-sync commit waits out its ack timeout
		err := mariadb.Exec(actx, db, "CREATE DATABASE IF NOT EXISTS hd_meta",
			"CREATE TABLE IF NOT EXISTS hd_meta.heal (cluster VARCHAR(16) PRIMARY KEY, at DATETIME(6) NOT NULL) ENGINE=InnoDB",
			"REPLACE INTO hd_meta.heal VALUES ('"+c.Name+"', NOW(6))")
		cancel()
		switch {
		case err == nil:
			if !said.IsZero() {
				l.Logf("cluster %s takes writes again, %s after the heal", c.Name, time.Since(start).Round(100*time.Millisecond))
			}
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case !canTakeWrites(ctx, l, c, n):
			l.Logf("cluster %s takes no writes: %s", c.Name, whyNoWrites(ctx, l, c, err))
			return nil // not a heal's to give: recover, or promote
		case time.Since(start) > healWrites:
			return fmt.Errorf("cluster %s takes no writes %s after the heal: %s", c.Name, healWrites, whyNoWrites(ctx, l, c, err))
		case time.Since(said) >= 10*time.Second:
			l.Logf("cluster %s takes no writes yet (%s): waiting, at most %s", c.Name, whyNoWrites(ctx, l, c, err), healWrites)
			said = time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// stoppedMembers are the cluster's members that were running and whose
// server no longer is, each with why when its log says ("db1 (its donor
// left the group …)").
func stoppedMembers(ctx context.Context, l Lab, c *plan.Cluster, running map[string]bool) []string {
	var out []string
	for _, name := range c.Nodes {
		n, ok := l.Plan().Node(name)
		if !ok || !running[name] || l.Alive(n) {
			continue
		}
		if why := mariadb.JoinAborted(l.ServerLog(ctx, n)); why != "" {
			name += " (" + why + ")"
		}
		out = append(out, name)
	}
	return out
}

// canTakeWrites says whether a cluster could take writes once what holds
// them passes: a Galera member in a primary component, a primary not
// read-only. One with no primary component needs hadrill recover, a
// read-only primary a promotion: no wait brings writes back.
func canTakeWrites(ctx context.Context, l Lab, c *plan.Cluster, n *plan.Node) bool {
	st := l.Probe(ctx, n)
	switch c.Kind {
	case spec.KindGalera:
		for _, name := range c.Nodes {
			if m, ok := l.Plan().Node(name); ok && l.Probe(ctx, m).Primary() {
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
func whyNoWrites(ctx context.Context, l Lab, c *plan.Cluster, err error) string {
	for _, name := range c.Nodes {
		n, _ := l.Plan().Node(name)
		if f := galera.FlowOf(l.Probe(ctx, n).Status); f.Requested {
			why := name + " " + f.Holding(l.DiskFaults(n))
			if mariadb.WaitsForSpace(l.ServerLog(ctx, n)) {
				why += "; it found its disk full and waits: the server tries the write again once a minute, whatever space it has back"
			}
			return why
		}
	}
	for _, name := range c.Nodes {
		if m, ok := l.Plan().Node(name); ok && c.Kind == spec.KindGalera && l.Probe(ctx, m).Primary() {
			return strings.SplitN(err.Error(), "\n", 2)[0]
		}
	}
	if c.Kind == spec.KindGalera {
		return "none of its members is in a primary component (hadrill recover gives it one)"
	}
	return strings.SplitN(err.Error(), "\n", 2)[0]
}

// Replicas waits until each primary cluster's replicas (those not
// fenced) have applied what their primary had logged when the heal ended,
// at most healWrites, saying every 10 s what it waits for. A primary whose
// connections to its replicas a cut left dead stops answering once a
// replica connects again (the new connection waits until the primary ends
// the old one, which it does only when TCP gives up retransmitting into
// it): the wait says how long it answered nothing.
func Replicas(ctx context.Context, l Lab) error {
	repl := l.Replication()
	fenced := l.Fenced()
	var errs []error
	for i := range l.Plan().Clusters {
		c := &l.Plan().Clusters[i]
		if c.Kind != spec.KindPrimary {
			continue
		}
		primary, ok := l.Plan().Node(repl.PrimaryOf(c))
		if !ok || !l.Alive(primary) {
			continue
		}
		var replicas []*plan.Node
		for _, name := range c.Nodes {
			if n, ok := l.Plan().Node(name); ok && n != primary && fenced[name] == "" && l.Alive(n) {
				replicas = append(replicas, n)
			}
		}
		errs = append(errs, waitCaughtUp(ctx, l, c, primary, replicas))
	}
	return errors.Join(errs...)
}

// waitCaughtUp is Replicas for one cluster.
func waitCaughtUp(ctx context.Context, l Lab, c *plan.Cluster, primary *plan.Node, replicas []*plan.Node) error {
	repl := l.Replication()
	start, said := time.Now(), time.Now()
	target := ""
	var silentFrom, silentTo time.Time // when the primary answered nothing
	stuck := map[string]time.Time{}    // replica behind -> since when its position has not moved
	last := map[string]string{}        // replica -> its position when last read
	ended := map[string]time.Time{}    // replica -> when its stale dump connections were last ended
	tries := map[string]int{}          // replica -> IO thread restarts
	restarted := map[string]string{}   // replica -> what its restarts did, for a message
	for {
		d := repl.Detail(ctx, primary)
		switch {
		case d.ReadOnly == nil: // no answer within a second
			if silentFrom.IsZero() {
				silentFrom = time.Now()
			}
			silentTo = time.Now()
		case target == "":
			target = d.GTIDBinlogPos
		}
		var behind []string
		for _, n := range replicas {
			rd := repl.Detail(ctx, n)
			at, io, why := "", "not read", ""
			for _, r := range rd.Replication {
				if r.Channel == "" {
					at, io, why = r.GTIDSlavePos, r.IO, ioWhy(r)
				}
			}
			if target == "" || io != "Yes" || !caughtUp(at, target) {
				behind = append(behind, fmt.Sprintf("%s at %s (connection %s%s%s)", n.Name, cmpOr(at, "?"), io, why, restarted[n.Name]))
			}
			switch {
			case io == "not read" || (target != "" && caughtUp(at, target)) || at != last[n.Name]:
				delete(stuck, n.Name)
				delete(ended, n.Name)
			case stuck[n.Name].IsZero():
				stuck[n.Name] = time.Now()
			case time.Since(stuck[n.Name]) >= staleAfter && ended[n.Name].IsZero():
				ended[n.Name] = time.Now()
				if k := endStaleDumps(ctx, l, primary, n); k > 0 {
					l.Logf("cluster %s: %s has received nothing for %s (connection %s%s): ended %d binlog dump connection(s) of it on %s, one a cut may have left dead", c.Name, n.Name, time.Since(stuck[n.Name]).Round(time.Second), io, why, k, primary.Name)
				}
				freeStuck(ctx, l, c, primary, n)
			case time.Since(ended[n.Name]) >= staleAfter:
				// Its new connection got nowhere either (it may have been
				// made while the path was still cut, its handshake lost
				// and waiting out slave_net_timeout), or it still holds
				// one the primary no longer has (connection Yes, nothing
				// arriving: no dump of it left to end there; seen after
				// the WAN emulator was killed and started again): start
				// it again.
				ended[n.Name] = time.Now()
				tries[n.Name]++
				freeStuck(ctx, l, c, primary, n)
				err := restartIO(ctx, l, n)
				if err == nil {
					l.Logf("cluster %s: %s still received nothing %s after its dump connections were ended (connection %s%s): its IO thread started again", c.Name, n.Name, time.Since(stuck[n.Name]).Round(time.Second), io, why)
					restarted[n.Name] = fmt.Sprintf("; its IO thread restarted %d time(s), to no avail", tries[n.Name])
				} else {
					restarted[n.Name] = fmt.Sprintf("; restarting its IO thread failed %d time(s), last: %v", tries[n.Name], err)
				}
			}
			last[n.Name] = at
		}
		silent := ""
		if !silentFrom.IsZero() {
			silent = fmt.Sprintf("; %s answered nothing for %s", primary.Name, silentTo.Sub(silentFrom).Round(100*time.Millisecond))
		}
		switch {
		case len(behind) == 0:
			if time.Since(start) > 2*time.Second {
				l.Logf("cluster %s: its replicas caught up with %s %s after the heal%s", c.Name, primary.Name, time.Since(start).Round(100*time.Millisecond), silent)
			}
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case time.Since(start) > healWrites:
			return fmt.Errorf("cluster %s: its replicas have not caught up with %s (at %s) %s after the heal: %s%s", c.Name, primary.Name, target, healWrites, strings.Join(behind, ", "), silent)
		case time.Since(said) >= 10*time.Second:
			why := ""
			if !silentFrom.IsZero() && silentTo.After(time.Now().Add(-2*time.Second)) {
				why = fmt.Sprintf(" (%s does not answer: a replica's new connection waits until it ends the one the cut left dead, which it does when TCP gives up retransmitting into it)", primary.Name)
			}
			l.Logf("cluster %s: replicas not caught up with %s (at %s) yet: %s%s; waiting, at most %s", c.Name, primary.Name, cmpOr(target, "?"), strings.Join(behind, ", "), why, healWrites)
			said = time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// ioWhy is what a replica's IO thread does or last failed on, how far it
// received when its applier is behind, and an applier that is not running,
// for a message ("" when it reads events and applies them).
func ioWhy(r replication.ReplicaInfo) string {
	var parts []string
	if r.IO != "Yes" && r.IOState != "" {
		parts = append(parts, r.IOState)
	}
	if r.GTIDIOPos != "" && r.GTIDIOPos != r.GTIDSlavePos {
		parts = append(parts, "received up to "+r.GTIDIOPos)
	}
	if r.SQL != "" && r.SQL != "Yes" {
		parts = append(parts, "applier "+r.SQL)
	}
	if r.LastError != "" {
		parts = append(parts, "last error: "+r.LastError)
	}
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, "; ")
}

// restartIO stops and starts a replica's IO thread (its own replication
// connection), at most 5 s.
func restartIO(ctx context.Context, l Lab, n *plan.Node) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	db := l.Admin(n)
	defer db.Close()
	if _, err := db.ExecContext(ctx, "STOP SLAVE '' IO_THREAD"); err != nil {
		return err
	}
	_, err := db.ExecContext(ctx, "START SLAVE '' IO_THREAD")
	return err
}

// staleAfter is how long a replica behind its primary may receive nothing
// after a heal before its dump connections on the primary are ended as
// stale.
const staleAfter = 10 * time.Second

// endStaleDumps ends, on the primary, the binlog dump connections from a
// replica that receives nothing: one a cut left dead holds
// its thread in a write until TCP gives up retransmitting into it, and the
// replica's new connection waits behind it. KILL shuts its socket at once.
// It returns how many it ended (0 when the primary does not answer).
func endStaleDumps(ctx context.Context, l Lab, primary, replica *plan.Node) int {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	db := l.Admin(primary)
	defer db.Close()
	rows, err := db.QueryContext(ctx, "SELECT ID, HOST FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'")
	if err != nil {
		return 0
	}
	var ids []int64
	for rows.Next() {
		var id int64
		var host string
		if rows.Scan(&id, &host) == nil && fromHost(host, replica) {
			ids = append(ids, id)
		}
	}
	rows.Close()
	n := 0
	for _, id := range ids {
		if _, err := db.ExecContext(ctx, fmt.Sprintf("KILL CONNECTION %d", id)); err == nil {
			n++
		}
	}
	return n
}

// stuckDumpState is the state of a semi-sync primary's binlog dump thread
// that failed to send (seen after the WAN emulator was killed under load:
// "Semi-sync master failed on net_flush() before waiting for slave
// reply"), was killed, and then waits for ever: MariaDB 10.11 ends it only
// when semi-sync on the primary is turned off. Until then each new dump
// connection of that replica waits for it and gives up ("A slave with the
// same server_uuid/server_id is already connected"): the replica's IO
// thread says Yes and receives nothing.
const stuckDumpState = "Waiting to finalize termination"

// freeStuckDumps ends such threads of replica on primary: semi-sync turned
// off on the primary until they are gone (at most 5 s), then on again. It
// returns how many there were; nothing is changed when there are none or
// semi-sync is off there.
func freeStuckDumps(ctx context.Context, l Lab, primary, replica *plan.Node) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 8*time.Second)
	defer cancel()
	db := l.Admin(primary)
	defer db.Close()
	stuck := func() (int, error) {
		rows, err := db.QueryContext(ctx, "SELECT HOST FROM information_schema.PROCESSLIST WHERE COMMAND = 'Killed' AND STATE = ?", stuckDumpState)
		if err != nil {
			return 0, err
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			var host string
			if rows.Scan(&host) == nil && fromHost(host, replica) {
				n++
			}
		}
		return n, rows.Err()
	}
	n, err := stuck()
	if err != nil || n == 0 {
		return 0, err
	}
	var on int
	if err := db.QueryRowContext(ctx, "SELECT @@rpl_semi_sync_master_enabled").Scan(&on); err != nil || on != 1 {
		return n, err
	}
	if _, err := db.ExecContext(ctx, "SET GLOBAL rpl_semi_sync_master_enabled = OFF"); err != nil {
		return n, err
	}
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if left, err := stuck(); err != nil || left == 0 {
			break
		}
	}
	_, err = db.ExecContext(context.WithoutCancel(ctx), "SET GLOBAL rpl_semi_sync_master_enabled = ON")
	return n, err
}

// freeStuck is freeStuckDumps, said in the lab's log when it found some.
func freeStuck(ctx context.Context, l Lab, c *plan.Cluster, primary, replica *plan.Node) {
	if k, err := freeStuckDumps(ctx, l, primary, replica); k > 0 || err != nil {
		l.Logf("cluster %s: %s: %d semi-sync binlog dump thread(s) of it on %s killed and never ending (%s), which keeps every new one of it waiting: semi-sync turned off and on again there to end them%s",
			c.Name, replica.Name, k, primary.Name, stuckDumpState, errText(err))
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return " (" + err.Error() + ")"
}

// fromHost says whether a processlist HOST (address:port) is one of a
// node's addresses.
func fromHost(host string, n *plan.Node) bool {
	addr := host
	if i := strings.LastIndexByte(host, ':'); i > 0 {
		addr = host[:i]
	}
	return addr != "" && (addr == n.Address || addr == n.ClusterAddress)
}

// caughtUp says whether a replica's GTID position has reached the
// primary's in every domain the primary logged.
func caughtUp(replica, primary string) bool {
	have, err1 := replication.ParsePosition(replica)
	want, err2 := replication.ParsePosition(primary)
	return err1 == nil && err2 == nil && have.Covers(want)
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
