package lab

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/hadrill/hadrill/internal/facts"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/inventory"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/preflight"
	"github.com/hadrill/hadrill/internal/spec"
)

// preflightFacts checks the inventory's machines before anything is made on
// them (preflight: every problem of every host at once, as bad input) and
// returns what a plan needs of them: each host's address for the lab's
// traffic, hadrill's directory there, its memory.
func preflightFacts(ctx context.Context, s *spec.Spec, name string, inv *inventory.Resolved, log io.Writer) (plan.Facts, error) {
	needs, err := preflight.NeedsOf(s, name, inv)
	if err != nil {
		return plan.Facts{}, err
	}
	t0 := time.Now()
	rep := preflight.Run(ctx, inv, needs, preflight.Options{Arch: runtime.GOARCH})
	if err := ctx.Err(); err != nil {
		return plan.Facts{}, err
	}
	fmt.Fprintf(log, "preflight of %d hosts (%.1fs)\n", len(rep.Hosts), time.Since(t0).Seconds())
	for _, h := range rep.Hosts {
		for _, w := range h.Warnings {
			fmt.Fprintf(log, "warning: %s\n", w)
		}
	}
	if err := hderr.Users(rep.Problems()); err != nil {
		return plan.Facts{}, fmt.Errorf("preflight of %s:\n%w", inv.File, err)
	}
	f := plan.Facts{User: "root", GaleraLib: facts.GaleraLibs[0], Remote: map[string]plan.Remote{}, VirtualIPs: inv.VirtualIPs}
	for _, h := range rep.Hosts {
		ih := inv.Hosts[h.Name]
		r := plan.Remote{Address: ih.PrivateAddress, Dir: ih.Dir}
		if h.Facts != nil {
			r.MemBytes = h.Facts.MemBytes
			if a, ok := h.Facts.AddrOf(ih.PrivateAddress); ok {
				r.Interface, r.Network = a.Interface, a.Prefix
			}
		}
		f.Remote[h.Name] = r
	}
	return f, nil
}

// inventoryFile is the inventory a lab of remote hosts was placed by.
func (l *Lab) inventoryFile() string {
	if l.State.Inventory == nil {
		return ""
	}
	return l.State.Inventory.File
}
