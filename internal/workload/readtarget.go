package workload

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
	"github.com/hadrill/hadrill/internal/state"
)

// Read targets a history workload may send its read-only transactions to,
// apart from its writes (as an application with a read/write split does):
// ReadReplicas is every replica of the lab's replicated clusters as they
// are now (the current primary and fenced nodes left out), each client
// its own in turn; ReadBalanced is the read port of the lab's balanced
// load balancer (HAProxy spreads the reads over the healthy replicas).
// Otherwise node and load balancer names, comma-separated.
const (
	ReadReplicas = "replicas"
	ReadBalanced = "lb-balanced"
)

// ResolveReads turns --read-target into endpoints that answer, with their
// names; "" is none (reads go where the writes go). Every problem is
// named at once.
func ResolveReads(ctx context.Context, l Lab, target string) ([]Endpoint, []string, error) {
	if target == "" {
		return nil, nil, nil
	}
	p := l.Plan()
	app, err := os.ReadFile(p.Secrets.App)
	if err != nil {
		return nil, nil, err
	}
	endpoint := func(name, host string, port int) Endpoint {
		return Endpoint{Name: name, Host: host, Port: port, User: plan.AppUser, Password: strings.TrimSpace(string(app))}
	}
	var out []Endpoint
	var problems []error
	switch target {
	case ReadReplicas:
		names, err := Replicas(p)
		if err != nil {
			return nil, nil, hderr.User("--read-target: %v", err)
		}
		for _, name := range names {
			n, _ := p.Node(name)
			out = append(out, endpoint(name, n.Address, n.Port))
		}
	case ReadBalanced:
		var seen []string
		for i := range p.LoadBalancers {
			b := &p.LoadBalancers[i]
			if b.Mode == spec.LBBalanced {
				out = append(out, endpoint(b.Name+":reads", b.Address, b.ReadPort))
				break
			}
			seen = append(seen, fmt.Sprintf("%s (%s)", b.Name, b.Mode))
		}
		if len(out) == 0 {
			return nil, nil, hderr.User("--read-target: %s: lab %s has no load balancer in mode balanced (its load balancers: %s); give one `mode: balanced` in the spec, or name nodes", ReadBalanced, p.Lab, cmp.Or(strings.Join(seen, ", "), "none"))
		}
	default:
		for _, name := range strings.Split(target, ",") {
			t, err := p.Target(name)
			if err != nil {
				problems = append(problems, hderr.User("--read-target: %v (or %s, %s)", err, ReadReplicas, ReadBalanced))
				continue
			}
			host, port := t.Address()
			out = append(out, endpoint(name, host, port))
		}
	}
	var names []string
	for _, e := range out {
		if err := e.ping(ctx, l); err != nil {
			problems = append(problems, hderr.User("--read-target: cannot connect to %s (%s:%d) from the client host: %v", e.Name, e.Host, e.Port, err))
		}
		names = append(names, e.Name)
	}
	if len(problems) > 0 {
		return nil, nil, hderr.Join(problems)
	}
	return out, names, nil
}

// Replicas are the nodes of the lab's replicated clusters that replicate
// now: neither the cluster's current primary nor fenced.
func Replicas(p *plan.Plan) ([]string, error) {
	roles, err := state.RolesOf(p.Dir).Read()
	if err != nil {
		return nil, err
	}
	var out, kinds []string
	for _, c := range p.Clusters {
		kinds = append(kinds, fmt.Sprintf("%s (%s)", c.Name, c.Kind))
		if c.Kind != spec.KindPrimary {
			continue
		}
		primary := c.Primary
		if r := roles.Primaries[c.Name]; r != "" && slices.Contains(c.Nodes, r) {
			primary = r
		}
		for _, n := range c.Nodes {
			if n != primary && roles.Fenced[n] == "" {
				out = append(out, n)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: lab %s has no replica (its clusters: %s); name the nodes to read from instead", ReadReplicas, p.Lab, strings.Join(kinds, ", "))
	}
	return out, nil
}
