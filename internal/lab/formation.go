package lab

import (
	"context"
	"fmt"
	"strings"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
)

// While a cluster forms, its nodes retransmit EVS join messages every
// 0.1 s instead of Galera's 1 s: the membership converges in about a
// second instead of three. The option is passed on the command line only
// and set back to what my.cnf says once every node is Synced, so the
// running cluster, and every failover measured on it, runs as configured.
const (
	formingJoin = "evs.join_retrans_period=PT0.1S"
	stockJoin   = "evs.join_retrans_period=PT1S"
)

// configuredJoin is the join retransmit option the node's my.cnf sets, or
// Galera's default.
func configuredJoin(n *plan.Node) string {
	for _, o := range strings.Split(n.ProviderOptions, ";") {
		if strings.HasPrefix(o, "evs.join_retrans_period=") {
			return o
		}
	}
	return stockJoin
}

// formationArgs adds the fast-join option to the Galera members among
// nodes, unless the user set wsrep_provider_options themselves.
func (l *Lab) formationArgs(nodes []*plan.Node, extra map[string][]string) map[string][]string {
	if extra == nil {
		extra = map[string][]string{}
	}
	for _, n := range nodes {
		if n.Kind != spec.KindGalera || has(extra[n.Name], bootstrapFlag) || l.userProviderOptions(n.Cluster) {
			continue
		}
		extra[n.Name] = append(extra[n.Name], "--wsrep-provider-options="+n.ProviderOptions+";"+formingJoin)
	}
	return extra
}

const bootstrapFlag = "--wsrep-new-cluster"

func has(args []string, prefix string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, prefix) {
			return true
		}
	}
	return false
}

// endFormation sets the join period back to Galera's default on nodes
// started with formationArgs.
func (l *Lab) endFormation(ctx context.Context, nodes []*plan.Node, extra map[string][]string) error {
	for _, n := range nodes {
		if !has(extra[n.Name], "--wsrep-provider-options=") {
			continue
		}
		db := l.Admin(n)
		err := mariadb.Exec(ctx, db, fmt.Sprintf("SET GLOBAL wsrep_provider_options = '%s'", configuredJoin(n)))
		db.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", n.Name, err)
		}
	}
	return nil
}

func (l *Lab) userProviderOptions(cluster string) bool {
	for _, c := range l.Plan.Spec.Clusters {
		if c.Name == cluster {
			_, set := c.Config["wsrep_provider_options"]
			return set
		}
	}
	return false
}

// startForming starts nodes that form a cluster together and returns once
// all are Synced and back on Galera's stock timing.
func (l *Lab) startForming(ctx context.Context, nodes []*plan.Node, extra map[string][]string) error {
	extra = l.formationArgs(nodes, extra)
	if err := l.startAndWait(ctx, nodes, extra); err != nil {
		return err
	}
	return l.endFormation(ctx, nodes, extra)
}
