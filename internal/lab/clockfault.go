package lab

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/server"
)

// ClockFault moves a node's wall clock (see fault.ClockFault): its clock
// file is written, and a server not yet running under libfaketime is
// restarted under it, once (from then on its clock moves live).
func (l *Lab) ClockFault(ctx context.Context, f fault.ClockFault) error {
	var problems []string
	n, ok := l.p.Node(f.Node)
	if !ok {
		var names []string
		for _, x := range l.p.Nodes {
			names = append(names, x.Name)
		}
		problems = append(problems, fmt.Sprintf("NODE: %q is not a node of lab %s (nodes: %s)", f.Node, l.p.Lab, strings.Join(names, ", ")))
	}
	if l.p.Mode == plan.ModeSSH {
		problems = append(problems, "fault clock: a clock fault runs the server under this computer's libfaketime; a lab of remote hosts does not take one yet")
	}
	if _, err := os.Stat(server.FakeTimeLib); err != nil {
		problems = append(problems, "fault clock: "+server.FakeTimeLib+" is missing: install Debian's faketime (make deps)")
	}
	if err := hderr.Users(problems); err != nil {
		return err
	}
	if fault.IsDry(ctx) {
		return nil
	}
	at := time.Now().UTC()
	h := l.Prov.Host(n.Host)
	if err := h.WriteFile(ctx, server.ClockFile(n), []byte(f.Spec()+"\n"), 0o644); err != nil {
		return err
	}
	if l.alive(n) && !fakeTimed(l.Pid(n)) {
		l.logf("%s: restarted under libfaketime, once, so that its clock can move (it then moves live)", n.Name)
		if err := l.Restart(ctx, []string{n.Name}); err != nil {
			return err
		}
	}
	l.logf("%s: clock %s", n.Name, f)
	return l.RecordFault(fault.Record{Fault: fault.Clock, Targets: []string{n.Name}, Value: f.String(), At: at})
}

// fakeTimed says whether a local process runs under libfaketime.
func fakeTimed(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	return err == nil && bytes.Contains(b, []byte("FAKETIME_TIMESTAMP_FILE="))
}

// Clock is a node's clock fault in force (zero: the real time).
func (l *Lab) Clock(ctx context.Context, n *plan.Node) fault.ClockFault {
	b, err := l.Prov.Host(n.Host).ReadFile(ctx, server.ClockFile(n))
	if err != nil {
		return fault.ClockFault{Node: n.Name}
	}
	return fault.ParseSpec(n.Name, string(b))
}

// healClocks sets every moved clock back to the real time (the servers
// keep libfaketime, at +0: no restart).
func (l *Lab) healClocks(ctx context.Context) error {
	for _, n := range l.Nodes(nil) {
		if l.Clock(ctx, n).IsZero() {
			continue
		}
		if err := l.Prov.Host(n.Host).WriteFile(ctx, server.ClockFile(n), []byte("+0\n"), 0o644); err != nil {
			return err
		}
		l.logf("%s: clock back to the real time", n.Name)
	}
	return nil
}
