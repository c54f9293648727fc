package drill

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/chaos"
	"github.com/hadrill/hadrill/internal/hderr"
)

// domainOutage crashes every host of a fault domain at once, as a rack or
// a power supply failing takes all its machines: whether writes resume
// shows whether the design kept its majority (and its load balancer) out
// of any one domain.
var domainOutage = Scenario{
	Name:       DomainOutage,
	Usage:      "domain-outage DOMAIN",
	Short:      "Crash every host of a fault domain at once (every process, NICs down), then bring them back",
	MaxTargets: 1,
	targets: func(d *drill, given []string) ([]string, error) {
		p := d.l.Plan()
		var domains []string
		for _, h := range p.Hosts {
			if h.Name != p.Client.Host && !slices.Contains(domains, h.FaultDomain) {
				domains = append(domains, h.FaultDomain)
			}
		}
		if len(given) != 1 || !slices.Contains(domains, given[0]) {
			return nil, hderr.User("DOMAIN: name a fault domain (domains: %s; the client's host is the observer)", strings.Join(domains, ", "))
		}
		var hosts []string
		for _, h := range p.Domain(given[0]) {
			hosts = append(hosts, h.Name)
		}
		return hosts, nil
	},
	inject: func(ctx context.Context, d *drill) (time.Time, error) {
		d.faultAt = time.Now()
		if err := d.l.Inject(ctx, chaos.Crash(d.res.Targets)); err != nil {
			return d.faultAt, err
		}
		d.logf("crashed %s; waiting for writes to resume", strings.Join(d.res.Targets, ", "))
		d.waitWrites(ctx, d.o.Hold)
		sleep(ctx, time.Second)
		d.logf("bringing %s back", strings.Join(d.res.Targets, ", "))
		if err := d.l.Heal(ctx); err != nil {
			return d.faultAt, fmt.Errorf("bringing %s back: %w", strings.Join(d.res.Targets, ", "), err)
		}
		return d.faultAt, nil
	},
	faulted: func(d *drill) int {
		n := 0
		for _, t := range d.res.Targets {
			if slices.Contains(d.cluster.Nodes, t) || (d.cluster.Arbitrator != nil && d.cluster.Arbitrator.Name == t) {
				n++
			}
		}
		return n
	},
	reformed: reformedWithout,
}
