package lab

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/hadrill/hadrill/internal/facts"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/infra/disk"
	"github.com/hadrill/hadrill/internal/inventory"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/provision"
	"github.com/hadrill/hadrill/internal/spec"
	"github.com/hadrill/hadrill/internal/state"
)

// UpOptions say what to bring up.
type UpOptions struct {
	Name      string
	Spec      *spec.Spec
	SpecGiven bool // the user named a preset or file (else: default, or the stored spec)
	Log       io.Writer
	// FromBackup, when set, is a prepared backup every node's datadir is
	// copied from (instead of a freshly initialised one).
	FromBackup string
	// Inventory, when set, places the lab's hosts on its machines (over
	// SSH); they are checked (preflight) before anything is made.
	Inventory *inventory.Resolved
	// Hold, when set, keeps the lab's writer lock once it is up and puts
	// its release there (a study holds its labs' for as long as they run:
	// no other command changes or removes them meanwhile; DownHeld).
	Hold *func()
	// Wait is how long to wait for a lab busy with another command (0:
	// refuse at once).
	Wait time.Duration
}

// Up creates a lab, or starts an existing stopped one, and returns when
// every node serves. On any failure (or ctx cancelled) it removes what it
// created, so nothing is left half-made.
func Up(ctx context.Context, home string, o UpOptions) (*Lab, error) {
	if err := plan.CheckLabName(o.Name); err != nil {
		return nil, err
	}
	unlock, err := state.Lock(home, o.Name, state.Writer, o.Wait)
	if err != nil {
		return nil, err
	}
	l, err := up(ctx, home, o)
	if err == nil && o.Hold != nil {
		*o.Hold = unlock
	} else {
		unlock()
	}
	return l, err
}

// up is Up under the lab's writer lock.
func up(ctx context.Context, home string, o UpOptions) (*Lab, error) {
	var err error
	if existing, err := state.Load(home, o.Name); err == nil {
		return startExisting(ctx, home, existing, o)
	}
	var p *plan.Plan
	if o.Inventory != nil {
		p, err = remotePlan(ctx, o.Spec, o.Name, home, o.Inventory, o.Log)
	} else {
		p, err = localPlan(ctx, o.Spec, o.Name, home, o.Log)
	}
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(p.Dir); err == nil {
		return nil, hderr.User("--name: %s exists but holds no lab.json; remove it or run `hadrill down --name %s`", p.Dir, o.Name)
	}
	l := newLab(home, &state.Lab{Plan: p, Inventory: o.Inventory}, o.Log)
	l.fromBackup = o.FromBackup
	if err := l.Prov.Claim(); err != nil {
		return nil, err
	}
	if err := l.save(state.Creating); err != nil { // first: down can always find what follows
		return nil, err
	}
	if err := l.create(ctx); err != nil {
		l.logf("up failed; removing lab %s", p.Lab)
		if derr := l.destroy(context.Background(), false); derr != nil {
			err = errors.Join(err, derr)
		}
		return nil, err
	}
	return l, l.save(state.Running)
}

// localPlan builds the plan of a lab on this computer from its facts,
// and checks it can be made here (root's tools, room for its files).
func localPlan(ctx context.Context, s *spec.Spec, name, home string, log io.Writer) (*plan.Plan, error) {
	f := facts.Machine()
	p, err := plan.Build(s, name, home, f)
	if err != nil {
		return nil, err
	}
	if err := facts.Preflight(p, f); err != nil {
		return nil, err
	}
	if err := hderr.Join([]error{facts.Options(ctx, s), provision.CheckMemory(p, f.MemBytes)}); err != nil {
		return nil, err
	}
	return p, provision.CheckRoom(p, home, log)
}

func startExisting(ctx context.Context, home string, st *state.Lab, o UpOptions) (*Lab, error) {
	if o.SpecGiven && !st.Plan.BuiltFrom(o.Spec) {
		return nil, hderr.User("--name: lab %q already exists with another topology; choose another --name or remove it with `hadrill down --name %s`", o.Name, o.Name)
	}
	l := newLab(home, st, o.Log)
	if st.Status == state.Creating {
		return nil, hderr.User("--name: lab %q was interrupted while being created; remove it with `hadrill down --name %s`", o.Name, o.Name)
	}
	if err := l.startAll(ctx); err != nil {
		return nil, err
	}
	if _, err := l.wan.Check(ctx, false); err != nil {
		return nil, err
	}
	if _, err := disk.Check(ctx, l.p, l.Prov.Host, l.Log); err != nil {
		return nil, err
	}
	return l, l.save(state.Running)
}

func (l *Lab) create(ctx context.Context) error {
	t0 := time.Now()
	p := l.p
	if err := provision.Secrets(p); err != nil {
		return err
	}
	if p.Disks != nil { // the datadirs are copied onto the volumes: mounted first
		if err := l.Prov.Setup(ctx); err != nil {
			return err
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return l.Prov.Setup(gctx) })
	g.Go(func() error {
		return provision.Datadirs(gctx, l, l.Facts.User, l.fromBackup, filepath.Join(l.home, "cache"))
	})
	if err := g.Wait(); err != nil {
		return err
	}
	if err := l.wan.Ensure(ctx); err != nil {
		return err
	}
	l.logf("hosts and datadirs ready (%.1fs); starting %d servers", time.Since(t0).Seconds(), len(p.Nodes))
	if err := l.startForming(ctx, l.Nodes(nil), provision.BootstrapLoners(p)); err != nil {
		return err
	}
	if err := l.Replication().SetGTIDDomains(ctx); err != nil {
		return err
	}
	l.logf("all servers ready (%.1fs); creating users", time.Since(t0).Seconds())
	if err := provision.Users(ctx, l); err != nil {
		return err
	}
	if err := l.Replication().Ensure(ctx); err != nil {
		return err
	}
	if err := provision.CheckAppLogins(ctx, l); err != nil {
		return err
	}
	if len(p.LoadBalancers) > 0 {
		l.logf("servers accept the application user (%.1fs); starting health agents and load balancers", time.Since(t0).Seconds())
	}
	if err := l.ensureDaemons(ctx); err != nil {
		return err
	}
	if _, err := l.wan.Check(ctx, false); err != nil {
		return err
	}
	if _, err := disk.Check(ctx, p, l.Prov.Host, l.Log); err != nil {
		return err
	}
	l.logf("lab %s up in %.1fs", p.Lab, time.Since(t0).Seconds())
	return ctx.Err()
}
