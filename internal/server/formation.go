package server

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
func formationArgs(nodes []*plan.Node, extra map[string][]string) map[string][]string {
	if extra == nil {
		extra = map[string][]string{}
	}
	for _, n := range nodes {
		if n.Kind != spec.KindGalera || has(extra[n.Name], BootstrapFlag) || n.UserProviderOptions {
			continue
		}
		extra[n.Name] = append(extra[n.Name], "--wsrep-provider-options="+n.ProviderOptions+";"+formingJoin)
	}
	return extra
}

// BootstrapFlag starts a node as a new cluster of its own.
const BootstrapFlag = "--wsrep-new-cluster"

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
func endFormation(ctx context.Context, hosts Hosts, nodes []*plan.Node, extra map[string][]string) error {
	for _, n := range nodes {
		if !has(extra[n.Name], "--wsrep-provider-options=") {
			continue
		}
		db := Admin(n, hosts(n.Host))
		err := mariadb.Exec(ctx, db, fmt.Sprintf("SET GLOBAL wsrep_provider_options = '%s'", configuredJoin(n)))
		db.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", n.Name, err)
		}
	}
	return nil
}

// StartForming starts nodes that form a cluster together and returns once
// all are Synced and back on Galera's stock timing.
func StartForming(ctx context.Context, hosts Hosts, nodes []*plan.Node, extra map[string][]string) error {
	extra = formationArgs(nodes, extra)
	if err := StartAll(ctx, hosts, nodes, extra); err != nil {
		return err
	}
	return endFormation(ctx, hosts, nodes, extra)
}
