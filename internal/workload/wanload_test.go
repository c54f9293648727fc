package workload

import (
	"testing"

	"github.com/hadrill/hadrill/internal/plan"
)

func TestProviderOption(t *testing.T) {
	opts := "base_dir = /var/lib/mysql/; evs.send_window = 4; evs.user_send_window = 2; evs.version = 1"
	for key, want := range map[string]string{"evs.send_window": "4", "evs.user_send_window": "2", "evs.window": "", "base_dir": "/var/lib/mysql/"} {
		if got := providerOption(opts, key); got != want {
			t.Errorf("%s: %q, want %q", key, got, want)
		}
	}
}

// Only a cluster whose nodes are in more than one region has its windows
// widened for a load.
func TestSpansRegions(t *testing.T) {
	p := &plan.Plan{Nodes: []plan.Node{
		{Name: "db1", Cluster: "a", Region: "east"}, {Name: "db2", Cluster: "a", Region: "east"},
		{Name: "db3", Cluster: "b", Region: "east"}, {Name: "db4", Cluster: "b", Region: "west"},
		{Name: "db5", Cluster: "c"}, {Name: "db6", Cluster: "c"},
	}}
	for cluster, want := range map[string]bool{"a": false, "b": true, "c": false, "none": false} {
		if got := spansRegions(p, cluster); got != want {
			t.Errorf("cluster %s: %v, want %v", cluster, got, want)
		}
	}
}
