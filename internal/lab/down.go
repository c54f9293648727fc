package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/hadrill/hadrill/internal/chaos"
	"github.com/hadrill/hadrill/internal/facts"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/keeper"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/provider"
	"github.com/hadrill/hadrill/internal/server"
	"github.com/hadrill/hadrill/internal/state"
)

// Down removes a lab: its processes, hosts and (unless keepData) its files.
// It is idempotent and works on a lab whose `up` was interrupted or killed.
// A lab busy with another command is waited for at most wait.
func Down(ctx context.Context, home, name string, keepData bool, wait time.Duration, log io.Writer) error {
	if err := plan.CheckLabName(name); err != nil {
		return err
	}
	unlock, err := state.Lock(home, name, state.Writer, wait)
	if err != nil {
		return err
	}
	defer unlock()
	return down(ctx, home, name, keepData, log)
}

// DownHeld is Down for a caller that holds the lab's writer lock (Up with
// Hold); the lock is released once the lab is gone.
func DownHeld(ctx context.Context, home, name string, keepData bool, log io.Writer, unlock func()) error {
	defer unlock()
	return down(ctx, home, name, keepData, log)
}

// down is Down under the lab's writer lock.
func down(ctx context.Context, home, name string, keepData bool, log io.Writer) error {
	// a running benchmark ends first (it keeps its partial results), and no
	// new one starts while the lab goes away
	unbench, err := state.LockEnding(home, name, state.Bench, time.Minute, func(s string) { fmt.Fprintln(orDiscard(log), s) })
	if err != nil {
		return err
	}
	defer unbench()
	st, err := state.Load(home, name)
	switch {
	case err == nil:
	case hderr.IsUser(err): // no lab.json
		if _, serr := os.Stat(state.LabDir(home, name)); serr != nil {
			fmt.Fprintf(orDiscard(log), "lab %s: nothing to remove\n", name)
			return strayNamespaces(ctx, home, name)
		}
		st = &state.Lab{Plan: skeleton(home, name)} // killed before its first save completed
	default: // damaged lab.json: remove what the name alone tells
		st = &state.Lab{Plan: skeleton(home, name)}
	}
	return newLab(home, st, log).destroy(ctx, keepData)
}

// skeleton is what can be known of a lab from its name alone.
func skeleton(home, name string) *plan.Plan {
	p := &plan.Plan{Lab: name, Dir: state.LabDir(home, name), Mode: plan.ModeRootless}
	if f := facts.Machine(); f.Root {
		p.Mode, p.Netns, p.Cgroups = plan.ModeNetns, "hd-"+name, plan.LabCgroups(name, f)
		p.Disks = plan.NewDisks(p.Dir) // whatever an interrupted up made of them
	}
	return p
}

// strayNamespaces removes namespaces of a lab that has no files (left by an
// interrupted run), unless they belong to a lab of another home.
func strayNamespaces(ctx context.Context, home, name string) error {
	if !facts.Machine().Root {
		return nil
	}
	err := newLab(home, &state.Lab{Plan: skeleton(home, name)}, nil).Prov.Teardown(ctx)
	if errors.Is(err, provider.ErrForeign) {
		return nil // someone else's lab of the same name: not ours to remove
	}
	return err
}

// destroy stops the servers (cleanly when the data is kept), removes the
// hosts, and removes or keeps the files.
func (l *Lab) destroy(ctx context.Context, keepData bool) error {
	// the keeper first: it would fail a primary cluster over to a replica
	// about to go too
	errs := []error{keeper.Daemon(l.p, l.home, exe()).Kill()}
	nodes := l.Nodes(nil)
	if keepData {
		errs = append(errs, server.StopAll(ctx, l.Prov.Host, nodes, server.StopGrace))
	} else {
		for _, n := range nodes {
			errs = append(errs, l.Prov.Host(n.Host).Kill(ctx, server.Daemon(n)))
		}
	}
	errs = append(errs, l.stopDaemons())
	dirs, _ := filepath.Glob(filepath.Join(l.p.Dir, "nodes", "*")) // every node's, also of a lab known by its name only
	for _, d := range dirs {
		errs = append(errs, server.ForgetFakeTime(d, true))
	}
	if l.p.Mode == plan.ModeSSH { // a remote machine's tables outlive the lab: its partitions and links go with it
		errs = append(errs, chaos.Remove(ctx, l.hosts, chaos.ChainOf(l.p), l.p.Hosts), l.wan.Remove(ctx))
	}
	errs = append(errs, l.Prov.Teardown(ctx))
	if keepData {
		errs = append(errs, l.save(state.Stopped))
		l.logf("lab %s stopped; data kept in %s", l.p.Lab, l.p.Dir)
	} else {
		errs = append(errs, os.RemoveAll(l.p.Dir))
		l.logf("lab %s removed", l.p.Lab)
	}
	return errors.Join(errs...)
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
