package drill

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/hderr"
)

// lbFailover and lbCrash take the active host of a load balancer pair
// down under traffic (its HAProxy killed; or the whole host: every process
// and its NIC), wait for writes to resume through the same virtual IP on
// the other host, then bring it back (as standby: the pair does not move
// the address back).
var (
	lbFailover = Scenario{
		Name:       LBFailover,
		Usage:      "lb-failover [HOST|active]",
		Short:      "Kill -9 the HAProxy of a load balancer pair's active host (default), then start it again",
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

func lbDown(ctx context.Context, d *drill, crash bool) (time.Time, error) {
	host := d.res.Targets[0]
	d.faultAt = time.Now()
	fail := d.l.LBFault
	if crash {
		fail = d.l.CrashHosts
	}
	if err := fail(ctx, []string{host}); err != nil {
		return d.faultAt, err
	}
	d.logf("%s down (%s); waiting for writes to resume through %s", host, map[bool]string{true: "crashed", false: "haproxy killed"}[crash], d.lb.Address)
	d.waitWrites(ctx, d.o.Hold)
	sleep(ctx, time.Second)
	d.logf("bringing %s back", host)
	if err := d.l.Heal(ctx); err != nil {
		return d.faultAt, fmt.Errorf("bringing %s back: %w", host, err)
	}
	return d.faultAt, nil
}
