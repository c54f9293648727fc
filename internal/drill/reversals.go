package drill

import (
	"context"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
)

// logMarks are how long each Galera member's and each semi-sync primary
// cluster node's error log was when the drill began (what it writes from
// there is the drill's).
func (d *drill) logMarks(ctx context.Context) map[string]int {
	marks := map[string]int{}
	for _, n := range d.nodes {
		if n.Role != plan.RoleGalera && !d.semiSync(n) {
			continue
		}
		b, _ := d.l.Host(n.Host).ReadFile(ctx, n.LogFile)
		marks[n.Name] = len(b)
	}
	return marks
}

// semiSync reports whether n is a node of a semi-sync primary cluster.
func (d *drill) semiSync(n *plan.Node) bool {
	c, ok := d.l.Plan().Cluster(n.Cluster)
	return ok && c.Kind == spec.KindPrimary && c.Mode == spec.ModeSemiSync
}

// logsSince are what each marked node's error log gained since marks
// (a log begun again, a node rebuilt: all of it), read once for every
// question asked of them.
func (d *drill) logsSince(ctx context.Context, marks map[string]int) map[*plan.Node]string {
	out := map[*plan.Node]string{}
	for _, n := range d.nodes {
		from, ok := marks[n.Name]
		if !ok {
			continue
		}
		b, err := d.l.Host(n.Host).ReadFile(ctx, n.LogFile)
		if err != nil {
			continue
		}
		if len(b) < from {
			from = 0
		}
		out[n] = string(b[from:])
	}
	return out
}

// fallbacks are the times, during the drill, a semi-sync primary went on
// committing without a replica's acknowledgement (its
// rpl_semi_sync_master_timeout passed), each with its node, from what its
// error log gained (logs): a commit acknowledged then was on that node
// alone, which a failover gives up.
func (d *drill) fallbacks(logs map[*plan.Node]string) []string {
	var out []string
	for _, n := range d.nodes {
		if log, ok := logs[n]; ok && d.semiSync(n) {
			for _, f := range mariadb.SemiSyncFallbacks(log) {
				out = append(out, n.Name+" "+f.Text())
			}
		}
	}
	return out
}

// reversals are the times, during the drill, a Galera member left its
// cluster because the primary component it was rejoining had applied
// fewer write sets than it had: Galera's own "Data loss is possible", each
// with the member's name, from what its error log gained (logs).
func (d *drill) reversals(logs map[*plan.Node]string) []string {
	var out []string
	for _, n := range d.nodes {
		if log, ok := logs[n]; ok && n.Role == plan.RoleGalera {
			for _, r := range mariadb.Reversals(log) {
				out = append(out, n.Name+" "+r)
			}
		}
	}
	return out
}
