package lab

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/inventory"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/preflight"
	"github.com/hadrill/hadrill/internal/spec"
)

// remotePlan checks the inventory's machines before anything is made on
// them (preflight: every problem of every host at once, as bad input) and
// returns the lab's plan, built once from what they said: each host's
// address for the lab's traffic, hadrill's directory there, the interface
// holding that address, its memory.
func remotePlan(ctx context.Context, s *spec.Spec, name, home string, inv *inventory.Resolved, log io.Writer) (*plan.Plan, error) {
	if err := inv.Check(s.HostNames()); err != nil { // before any connection
		return nil, err
	}
	t0 := time.Now()
	var p *plan.Plan
	rep, err := preflight.Run(ctx, inv, preflight.Options{Arch: runtime.GOARCH}, func(f plan.Facts) (map[string]preflight.Need, error) {
		var err error
		if p, err = plan.Build(s, name, home, f); err != nil {
			return nil, err
		}
		return preflight.Needs(p), nil
	})
	if cerr := ctx.Err(); cerr != nil {
		return nil, cerr
	}
	if err != nil {
		return nil, fmt.Errorf("preflight of %s:\n%w", inv.File, err)
	}
	fmt.Fprintf(log, "preflight of %d hosts (%.1fs)\n", len(rep.Hosts), time.Since(t0).Seconds())
	for _, h := range rep.Hosts {
		for _, w := range h.Warnings {
			fmt.Fprintf(log, "warning: %s\n", w)
		}
	}
	if err := hderr.Users(rep.Problems()); err != nil {
		return nil, fmt.Errorf("preflight of %s:\n%w", inv.File, err)
	}
	return p, nil
}

// inventoryFile is the inventory a lab of remote hosts was placed by.
func (l *Lab) inventoryFile() string {
	if l.State.Inventory == nil {
		return ""
	}
	return l.State.Inventory.File
}
