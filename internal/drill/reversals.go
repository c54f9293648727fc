package drill

import (
	"context"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/plan"
)

// logMarks are how long each Galera member's error log was when the drill
// began (what it writes from there is the drill's).
func (d *drill) logMarks(ctx context.Context) map[string]int {
	marks := map[string]int{}
	for _, n := range d.nodes {
		if n.Role != plan.RoleGalera {
			continue
		}
		b, _ := d.l.Host(n.Host).ReadFile(ctx, n.LogFile)
		marks[n.Name] = len(b)
	}
	return marks
}

// reversals are the times, during the drill, a Galera member left its
// cluster because the primary component it was rejoining had applied
// fewer write sets than it had: Galera's own "Data loss is possible", each
// with the member's name, from what its error log gained since marks.
func (d *drill) reversals(ctx context.Context, marks map[string]int) []string {
	var out []string
	for _, n := range d.nodes {
		from, ok := marks[n.Name]
		if !ok {
			continue
		}
		b, err := d.l.Host(n.Host).ReadFile(ctx, n.LogFile)
		if err != nil {
			continue
		}
		if len(b) < from { // a log begun again (a node rebuilt)
			from = 0
		}
		for _, r := range mariadb.Reversals(string(b[from:])) {
			out = append(out, n.Name+" "+r)
		}
	}
	return out
}
