package lab

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hadrill/hadrill/internal/infra/disk"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/server"
)

// disksLost says why the lab's disk daemon does not serve its volumes now
// ("" when it does, or the lab emulates no disks: remote hosts use their
// own).
func (l *Lab) disksLost() string {
	if l.p.Mode == plan.ModeSSH {
		return ""
	}
	return disk.Serving(l.p, exe())
}

// loseDisks prepares the volumes of a dead disk daemon to be served again
// (the provider's Setup then serves them from their images, which hold every
// write the daemon acknowledged): a server still running on them has lost
// its disk and is stopped as a lost disk stops it (kill -9), or the volume
// could not be released. A command that starts one node (start NODE) does
// not stop the others: it names the cause and the command that works.
func (l *Lab) loseDisks(ctx context.Context, whole bool) error {
	why := l.disksLost()
	if why == "" {
		return nil
	}
	var running []*plan.Node
	for _, n := range l.Nodes(nil) {
		if len(n.Volumes) > 0 && l.alive(n) {
			running = append(running, n)
		}
	}
	if !whole && len(running) > 0 {
		return fmt.Errorf("%s; %s still run on them and fail at their next write: `hadrill start --all` stops them and serves the volumes again "+
			"from their images (the data is there)", why, names(running))
	}
	l.logf("%s; serving the volumes again from their images, which hold the data", why)
	var errs []error
	for _, n := range running {
		l.logf("%s: its disk is gone: stopped (kill -9), as a lost disk stops it", n.Name)
		errs = append(errs, l.Prov.Host(n.Host).Kill(ctx, server.Daemon(n)))
	}
	return errors.Join(errs...)
}

func names(nodes []*plan.Node) string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.Name)
	}
	return strings.Join(out, ", ")
}
