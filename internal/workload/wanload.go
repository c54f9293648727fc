package workload

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/plan"
)

// Galera sends at most evs.send_window messages at a time (evs.user_send_window
// of them the clients' write sets) before a reply: its defaults, 4 and 2,
// hold replication across a 100 ms link to about 1 MB/s, so 20 tables of
// 1,000,000 rows (4 GB) took some two hours to load on seed002-wan's
// two-site cluster; with 512 each, 6 MB/s here. A bulk load into a cluster
// that spans regions widens them on the node it loads, for the load only:
// the measured runs keep the cluster's own. Both are set at run time (no
// restart), so a load that is killed leaves them wide until the server
// restarts.
const loadWindow = 512

// widenForLoad widens the send windows of n, a Galera node whose cluster
// spans regions, and returns what puts them back (a no-op when n is not one,
// or its windows could not be read); said is what the log says of it.
func widenForLoad(ctx context.Context, l Lab, n *plan.Node) (restore func(), said string) {
	restore = func() {}
	if n == nil || n.Role != plan.RoleGalera || !spansRegions(l.Plan(), n.Cluster) {
		return restore, ""
	}
	db := l.Admin(n)
	if db == nil {
		return restore, ""
	}
	send, user, ok := sendWindows(ctx, db)
	if !ok {
		db.Close()
		return restore, ""
	}
	if _, err := db.ExecContext(ctx, fmt.Sprintf("SET GLOBAL wsrep_provider_options='evs.send_window=%d;evs.user_send_window=%d'", loadWindow, loadWindow)); err != nil {
		db.Close()
		return restore, ""
	}
	return func() {
		defer db.Close()
		// the user window first: it may not exceed the send window
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_, _ = db.ExecContext(ctx, fmt.Sprintf("SET GLOBAL wsrep_provider_options='evs.user_send_window=%s;evs.send_window=%s'", user, send))
	}, fmt.Sprintf("; Galera's send windows on %s %d for the load, then back to %s and %s", n.Name, loadWindow, send, user)
}

// spansRegions: the cluster's nodes are in more than one region.
func spansRegions(p *plan.Plan, cluster string) bool {
	seen := ""
	for _, n := range p.Nodes {
		if n.Cluster != cluster {
			continue
		}
		if seen != "" && n.Region != seen {
			return true
		}
		seen = n.Region
	}
	return false
}

// sendWindows reads a node's evs.send_window and evs.user_send_window from
// its wsrep_provider_options.
func sendWindows(ctx context.Context, db *sql.DB) (send, user string, ok bool) {
	var name, opts string
	if err := db.QueryRowContext(ctx, "SHOW GLOBAL VARIABLES LIKE 'wsrep_provider_options'").Scan(&name, &opts); err != nil {
		return "", "", false
	}
	send, user = providerOption(opts, "evs.send_window"), providerOption(opts, "evs.user_send_window")
	return send, user, send != "" && user != ""
}

// providerOption is one option's value in wsrep_provider_options ("a = 1;
// b = 2"; "" when absent).
func providerOption(opts, key string) string {
	for _, kv := range strings.Split(opts, ";") {
		k, v, found := strings.Cut(kv, "=")
		if found && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
