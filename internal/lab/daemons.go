package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/lb/haproxy"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/supervise"
)

// routeDeadline bounds the wait for a load balancer to route: its checks
// need rise × inter (0.4 s) once the agents answer.
const routeDeadline = 30 * time.Second

// ensureDaemons starts what is not running: every node's health agent,
// then every load balancer and the lab's keeper, and waits until each load balancer routes an
// application login. It is idempotent.
func (l *Lab) ensureDaemons(ctx context.Context) error {
	if err := l.startArbitrators(ctx); err != nil {
		return err
	}
	for i := range l.Plan.Nodes {
		if err := l.startAgent(ctx, &l.Plan.Nodes[i]); err != nil {
			return err
		}
	}
	for i := range l.Plan.LoadBalancers {
		if err := l.startLB(ctx, &l.Plan.LoadBalancers[i]); err != nil {
			return err
		}
	}
	if err := l.startKeeper(ctx); err != nil {
		return err
	}
	for i := range l.Plan.LoadBalancers {
		if err := l.waitRouting(ctx, &l.Plan.LoadBalancers[i]); err != nil {
			return err
		}
	}
	return nil
}

func (l *Lab) startAgent(ctx context.Context, n *plan.Node) error {
	if pid := supervise.ReadPid(n.AgentPidFile); supervise.Owned(pid, n.Dir) {
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	argv := []string{exe, "agent", "--node", n.Name, "--listen", fmt.Sprintf("%s:%d", n.Address, n.AgentPort),
		"--socket", n.Socket, "--user", plan.CheckUser, "--password-file", l.Plan.Secrets.Check,
		"--drain-file", n.DrainFile, "--pid-file", n.PidFile}
	p, err := supervise.Start(supervise.Spec{Name: n.Name + " agent", Argv: l.Prov.Wrap(n.Host, argv),
		LogFile: n.AgentLogFile, PidFile: n.AgentPidFile, Dir: filepath.Join(n.Dir, "agent")})
	if err != nil {
		return err
	}
	addr := fmt.Sprintf("%s:%d", n.Address, n.AgentPort)
	return p.WaitReady(ctx, 10*time.Second, 20*time.Millisecond, func(ctx context.Context) error {
		c, err := l.Prov.Dial(ctx, n.Host, "tcp", addr)
		if err == nil {
			c.Close()
		}
		return err
	})
}

func (l *Lab) startLB(ctx context.Context, lb *plan.LB) error {
	if pid := supervise.ReadPid(lb.PidFile); supervise.Owned(pid, lb.Dir) {
		return nil
	}
	if err := os.MkdirAll(lb.Dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(lb.ConfigFile, []byte(lb.Config), 0o644); err != nil {
		return err
	}
	argv := []string{"haproxy", "-f", lb.ConfigFile, "-db"}
	p, err := supervise.Start(supervise.Spec{Name: lb.Name + " haproxy", Argv: l.Prov.Wrap(lb.Host, argv),
		LogFile: lb.LogFile, PidFile: lb.PidFile, Dir: filepath.Dir(lb.LogFile)})
	if err != nil {
		return err
	}
	return p.WaitReady(ctx, 10*time.Second, 20*time.Millisecond, func(ctx context.Context) error {
		_, err := haproxy.Stat(ctx, lb.AdminSocket)
		return err
	})
}

// waitRouting waits until the load balancer sends an application login to
// a healthy node.
func (l *Lab) waitRouting(ctx context.Context, lb *plan.LB) error {
	db, err := l.AppDB(fmt.Sprintf("%s:%d", lb.Address, lb.Port))
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(routeDeadline)
	var last error
	for time.Now().Before(deadline) {
		qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		var node string
		last = db.QueryRowContext(qctx, "SELECT @@wsrep_node_name").Scan(&node)
		cancel()
		if last == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("load balancer %s does not route to a healthy node after %v: %v", lb.Name, routeDeadline, last)
}

// stopDaemons kills the agents and load balancers (they hold no data).
func (l *Lab) stopDaemons() error {
	var errs []error
	for _, n := range l.Plan.Nodes {
		if pid := supervise.ReadPid(n.AgentPidFile); supervise.Owned(pid, n.Dir) {
			errs = append(errs, supervise.Kill(pid))
		}
	}
	for _, lb := range l.Plan.LoadBalancers {
		if pid := supervise.ReadPid(lb.PidFile); supervise.Owned(pid, lb.Dir) {
			errs = append(errs, supervise.Kill(pid))
		}
	}
	if pid := l.keeperPid(); pid != 0 {
		errs = append(errs, supervise.Kill(pid))
	}
	errs = append(errs, l.wan.Stop(), l.stopArbitrators())
	return errors.Join(errs...)
}

// Drain takes nodes out of (or back into) load balancing: their agents
// answer 503 while the drain file exists.
func (l *Lab) Drain(names []string, drain bool) error {
	if err := l.CheckNodes(names); err != nil {
		return err
	}
	for _, n := range l.Nodes(names) {
		var err error
		if drain {
			err = os.WriteFile(n.DrainFile, []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o644)
		} else if err = os.Remove(n.DrainFile); errors.Is(err, os.ErrNotExist) {
			err = nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", n.Name, err)
		}
	}
	return nil
}

// Drained reports whether a node is drained.
func Drained(n *plan.Node) bool {
	_, err := os.Stat(n.DrainFile)
	return err == nil
}

// LB returns the load balancer with that name.
func (l *Lab) LB(name string) (*plan.LB, error) {
	for i := range l.Plan.LoadBalancers {
		if l.Plan.LoadBalancers[i].Name == name {
			return &l.Plan.LoadBalancers[i], nil
		}
	}
	return nil, hderr.User("LB: unknown load balancer %q", name)
}

// Balanced reports whether target names a balanced load balancer (writes
// then reach several nodes at once).
func (l *Lab) Balanced(target string) bool {
	for i, lb := range l.Plan.LoadBalancers {
		if lb.Name == target || (target == "lb" && i == 0) {
			return lb.Mode == "balanced"
		}
	}
	return false
}
