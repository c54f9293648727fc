package chaos

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/spf13/pflag"

	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/words"
)

// DisconnectKind is the fault log's word for a disconnect (no other room
// names it).
const DisconnectKind fault.Kind = "disconnect"

// Disconnect is `hadrill fault disconnect NODE... [--replication]`: every
// connection of the application's account to the nodes' servers killed
// (KILL CONNECTION), as a proxy restarting, a firewall losing its
// connection table or a mass kill by hand does. A transaction in flight
// rolls back; its client sees the connection lost (error 2013) and cannot
// tell whether a COMMIT it had sent took. With Replication, the
// replication account's connections too: an async or semi-sync primary's
// binary log dump threads, so its replicas reconnect (after their retry)
// and a semi-sync primary waits for an acknowledgement meanwhile.
// hadrill's own connections (the keeper's, the agents', the exporters')
// are left alone. Nothing to heal: clients connect again.
type Disconnect struct {
	Names       []string
	Replication bool
}

// connectionFaults are the fault kinds of this file; they need no heal.
var connectionFaults = family{kinds: []Kind{{
	Name: DisconnectKind, Use: "disconnect NODE... [--replication]",
	Short: "Kill every application connection to the servers of nodes (their transactions roll back, their clients see the connection lost)",
	Long: `As a proxy restarting, a firewall losing its connection table or a mass kill by hand: every
connection of the application's account (` + plan.AppUser + `) to each node's server killed with KILL CONNECTION.
A transaction in flight rolls back and its client sees error 2013, not knowing whether a COMMIT it
had sent took. --replication kills the replication account's (` + plan.ReplUser + `) connections too: a
primary's binary log dump threads, so its replicas reconnect. Nothing to heal: clients connect again.`,
	MinArgs: 1, MaxArgs: -1, ArgsWhat: "one or more node names",
	Parse: func(fs *pflag.FlagSet) func([]string) (Fault, error) {
		repl := fs.Bool("replication", false, "also kill the replication account's connections (a primary's binary log dump threads)")
		return func(a []string) (Fault, error) { return Disconnect{Names: a, Replication: *repl}, nil }
	},
}}}

// Inject checks every name is a node whose server runs (all problems at
// once), then kills the connections node by node and records the fault
// once any were killed, also when a node failed part-way.
func (f Disconnect) Inject(ctx context.Context, l Lab) error {
	p := l.Plan()
	var problems []string
	var nodes []*plan.Node
	for _, name := range f.Names {
		n, ok := p.Node(name)
		switch {
		case slices.Contains(p.LBHosts(), name):
			problems = append(problems, fmt.Sprintf("NODE: %s is a load balancer host: disconnect kills a database server's connections (kill %s restarts its proxy, which drops them too)", name, name))
		case !ok:
			problems = append(problems, fmt.Sprintf("NODE: %q is not a node (nodes: %s)", name, strings.Join(p.NodeNames(), ", ")))
		default:
			proc, err := l.Servers().Process(n)
			if err != nil {
				return err
			}
			if proc.Pid == 0 || proc.Paused {
				problems = append(problems, fmt.Sprintf("NODE: %s's server is %s: it holds no connections to kill", name, map[bool]string{true: "paused", false: "not running"}[proc.Paused]))
			}
			nodes = append(nodes, n)
		}
	}
	if len(f.Names) == 0 {
		problems = append(problems, fmt.Sprintf("NODE: name at least one node (nodes: %s)", strings.Join(p.NodeNames(), ", ")))
	}
	if err := hderr.Users(problems); err != nil || fault.IsDry(ctx) {
		return err
	}
	users := []string{plan.AppUser}
	if f.Replication {
		users = append(users, plan.ReplUser)
	}
	at := time.Now().UTC()
	var errs []error
	var done []string
	total := 0
	for _, n := range nodes {
		killed, err := disconnect(ctx, l, n, users)
		total += killed
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", n.Name, err))
			continue
		}
		done = append(done, n.Name)
		l.Logf("%s: %s of %s killed", n.Name, words.Count(killed, "connection"), words.And(users))
	}
	if len(done) > 0 || total > 0 {
		r := fault.Record{At: at, Fault: DisconnectKind, Targets: f.Names}
		if f.Replication {
			r.Value = "with replication"
		}
		errs = append(errs, l.Record(r))
	}
	return errors.Join(errs...)
}

// disconnect kills every connection of users on the node's server, and
// says how many it killed (one that ended by itself meanwhile is not
// counted).
func disconnect(ctx context.Context, l Lab, n *plan.Node, users []string) (int, error) {
	db := l.Servers().Admin(n)
	defer db.Close()
	q := "SELECT ID FROM information_schema.PROCESSLIST WHERE USER IN (?" + strings.Repeat(", ?", len(users)-1) + ") AND ID <> CONNECTION_ID()"
	args := make([]any, len(users))
	for i, u := range users {
		args[i] = u
	}
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, err
		}
		ids = append(ids, id)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return 0, err
	}
	killed := 0
	for _, id := range ids {
		_, err := db.ExecContext(ctx, fmt.Sprintf("KILL CONNECTION %d", id))
		var me *mysql.MySQLError
		switch {
		case err == nil:
			killed++
		case errors.As(err, &me) && me.Number == 1094: // unknown thread: it ended by itself
		default:
			return killed, err
		}
	}
	return killed, nil
}
