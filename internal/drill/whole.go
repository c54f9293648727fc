package drill

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/server"
)

// MakeWhole makes the cluster behind the lab's first load balancer whole
// before a drill that must start from one (a study's next round after a
// drill that left a node out): nothing when it is whole already; else
// every fault healed and its servers started, then a wait of up to
// limit; a Galera member still not Synced is rebuilt by a full state
// transfer (a node that cannot rejoin by itself), and a cluster without a
// primary component is recovered from its most advanced node, each
// waited for again. It says what it did ("" when the cluster was whole),
// or fails when nothing made it whole.
func MakeWhole(ctx context.Context, l Lab, limit time.Duration) (string, error) {
	p := l.Plan()
	if len(p.LoadBalancers) == 0 {
		return "", nil
	}
	c, _ := p.Cluster(p.LoadBalancers[0].Cluster)
	ns := nodes(p, c.Nodes)
	s := startSampler(context.WithoutCancel(ctx), l, c, ns, 200*time.Millisecond)
	defer s.finish()
	whole := func(smp Sample) bool { return smp.Whole(c.Members()) }
	wait := func(d time.Duration) bool {
		_, ok := s.waitFor(ctx, time.Now(), d, whole)
		return ok
	}
	if wait(2 * time.Second) {
		return "", nil
	}
	var did []string
	if err := l.Heal(ctx); err != nil {
		did = append(did, fmt.Sprintf("heal failed (%v)", err))
	} else {
		did = append(did, "healed")
	}
	if wait(limit) {
		return strings.Join(did, ", "), nil
	}
	last := s.last()
	if !last.Replicated {
		primary := false
		for _, n := range last.Nodes {
			primary = primary || n.Primary
		}
		if !primary {
			if err := l.Recover(ctx, ""); err != nil {
				return "", fmt.Errorf("cluster %s not whole %v after a heal, and its recovery failed: %w", c.Name, limit, err)
			}
			did = append(did, "recovered (no primary component)")
			if wait(limit) {
				return strings.Join(did, ", "), nil
			}
			last = s.last()
		}
		for _, n := range ns {
			if st, ok := last.Nodes[n.Name]; ok && st.Primary && st.State == server.Synced {
				continue
			}
			if n.Role != plan.RoleGalera {
				continue
			}
			if err := l.Resync(ctx, n.Name); err != nil {
				return "", fmt.Errorf("cluster %s not whole %v after a heal, and rebuilding %s failed: %w", c.Name, limit, n.Name, err)
			}
			did = append(did, n.Name+" rebuilt by a full state transfer")
		}
		if wait(limit) {
			return strings.Join(did, ", "), nil
		}
	}
	return "", fmt.Errorf("cluster %s not whole %v after %s (hadrill status shows its nodes)", c.Name, limit, strings.Join(did, ", "))
}

// last is the latest sample (none: an empty one).
func (s *sampler) last() Sample {
	sn := s.Snapshots()
	if len(sn) == 0 {
		return Sample{Nodes: map[string]NodeSample{}, Replicated: s.replicated}
	}
	return s.sampleOf(sn[len(sn)-1])
}
