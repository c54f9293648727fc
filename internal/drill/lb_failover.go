package drill

import (
	"context"
	"fmt"
	"github.com/hadrill/hadrill/internal/words"
	"slices"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/chaos"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/lb"
)

// lbFailover and lbCrash take the active host of a load balancer pair
// down under traffic (its proxy killed; or the whole host: every process
// and its NIC), wait for writes to resume through the same virtual IP on
// the other host, then bring it back (as standby: the pair does not move
// the address back).
var (
	lbFailover = Scenario{
		Name:       LBFailover,
		Usage:      "lb-failover [HOST|active]",
		Short:      "Kill -9 the proxy of a load balancer pair's active host (default), then start it again",
		MaxTargets: 1,
		OnLB:       true,
		Replicated: true,
		targets:    lbTarget,
		inject:     func(ctx context.Context, d *drill) (time.Time, error) { return lbDown(ctx, d, false) },
	}
	lbCrash = Scenario{
		Name:       LBCrash,
		Usage:      "lb-crash [HOST|active]",
		Short:      "Crash a load balancer pair's active host (every process killed, its NIC down), then bring it back",
		MaxTargets: 1,
		OnLB:       true,
		Replicated: true,
		targets:    lbTarget,
		inject:     func(ctx context.Context, d *drill) (time.Time, error) { return lbDown(ctx, d, true) },
	}
)

// lbTarget resolves the host to take down: "active" (the default) is the
// one holding the virtual IP now.
func lbTarget(d *drill, given []string) ([]string, error) {
	if !d.lb.VirtualIP {
		return nil, hderr.User("drill %s: load balancer %s runs on one host: nothing takes over when it dies (give it replicas: 2)", d.sc.Name, d.lb.Name)
	}
	var hosts []string
	for _, in := range d.lb.Instances {
		hosts = append(hosts, in.Host)
	}
	if len(given) == 0 || given[0] == "active" {
		h, err := d.l.LBHolder(context.Background(), d.lb)
		if err != nil || h == "" {
			return nil, fmt.Errorf("load balancer %s: no host holds its virtual IP %s now (see `hadrill status`): %v", d.lb.Name, d.lb.Address, err)
		}
		return []string{h}, nil
	}
	if !slices.Contains(hosts, given[0]) {
		return nil, hderr.User("HOST: %q is not a host of load balancer %s (hosts: %s, or active)", given[0], d.lb.Name, strings.Join(hosts, ", "))
	}
	return given[:1], nil
}

// LBTakeover bounds how long the other host of a pair may take to hold the
// virtual IP once the active one's proxy is dead: its check fails within
// a second (run every second, failing at the first silence), then the
// backup takes the address after three silent advertisements (0.1 s each)
// or at once on the master's priority-0 advertisement; twice that, with
// room for a busy machine.
const LBTakeover = 5 * time.Second

func lbDown(ctx context.Context, d *drill, crash bool) (time.Time, error) {
	host := d.res.Targets[0]
	broken := brokenBefore(d.l.LBInstances(ctx, d.lb), host, lb.KindOf(d.lb).Name())
	if len(broken) > 0 {
		d.logf("before the fault: %s down, so no other host may take over", words.And(broken))
	}
	d.faultAt = time.Now()
	var f chaos.Fault = chaos.KillBalancers{host}
	if crash {
		f = chaos.Crash{host}
	}
	if err := d.l.Inject(ctx, f); err != nil {
		return d.faultAt, err
	}
	d.logf("%s down (%s); waiting for another host to take %s and writes to resume through it", host, map[bool]string{true: "crashed", false: lb.KindOf(d.lb).Name() + " killed"}[crash], d.lb.Address)
	if by, t, ok := d.waitTakeover(ctx, host); ok {
		d.res.TakeoverS = secs(t.Sub(d.faultAt))
		d.logf("%s took %s after %.2fs", by, d.lb.Address, t.Sub(d.faultAt).Seconds())
	} else if ctx.Err() == nil {
		why := ""
		if len(broken) > 0 {
			why = " (" + words.And(broken) + " before the fault)"
		}
		d.problems = append(d.problems, fmt.Sprintf("no takeover: no other host of load balancer %s took its virtual IP %s within %v of %s going down%s",
			d.lb.Name, d.lb.Address, d.takeover, host, why))
		d.logf("no host took %s within %v", d.lb.Address, d.takeover)
	}
	d.waitWrites(ctx, d.o.Hold)
	sleep(ctx, time.Second)
	d.logf("bringing %s back", host)
	if err := d.l.Heal(ctx); err != nil {
		return d.faultAt, fmt.Errorf("bringing %s back: %w", host, err)
	}
	for _, b := range broken {
		d.res.Repaired = append(d.res.Repaired, b+" (down before the drill) was started again by the drill's repair")
	}
	return d.faultAt, nil
}

// brokenBefore names what of a pair's other hosts is down before the fault
// (their proxy, named proxy, their keepalived): what would keep them from
// taking over.
func brokenBefore(ins []lb.Instance, target, proxy string) []string {
	var out []string
	for _, in := range ins {
		if in.Host == target {
			continue
		}
		if !in.ProxyUp {
			out = append(out, in.Host+"'s "+proxy)
		}
		if in.Keepalived != nil && !*in.Keepalived {
			out = append(out, in.Host+"'s keepalived")
		}
	}
	return out
}

// waitTakeover waits up to d.takeover (LBTakeover) for a host other than the one taken
// down to hold the load balancer's virtual IP.
func (d *drill) waitTakeover(ctx context.Context, down string) (string, time.Time, bool) {
	for end := d.faultAt.Add(d.takeover); ctx.Err() == nil; time.Sleep(20 * time.Millisecond) {
		h, _ := d.l.LBHolder(ctx, d.lb)
		now := time.Now()
		if h != "" && h != down {
			return h, now, true
		}
		if now.After(end) {
			break
		}
	}
	return "", time.Time{}, false
}
