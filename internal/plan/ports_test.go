package plan

import (
	"fmt"
	"testing"

	"github.com/hadrill/hadrill/internal/spec"
)

func TestPorts(t *testing.T) {
	for _, c := range []struct{ preset, want string }{
		{"galera3", "map[db1:[3306 4444 4567 4568 9200] db2:[3306 4444 4567 4568 9200] db3:[3306 4444 4567 4568 9200] lb:[3306]]"},
		{"semisync", "map[db1:[3306 9200] db2:[3306 9200] db3:[3306 9200] lb:[3306]]"},
		{"wan2-arbitrator", "map[db1:[3306 4444 4567 4568 9200] db2:[3306 4444 4567 4568 9200] db3:[3306 4444 4567 4568 9200] db4:[3306 4444 4567 4568 9200] db5:[3306 4444 4567 4568 9200] db6:[3306 4444 4567 4568 9200] dbarb:[4567] lb:[3306]]"},
	} {
		s, err := spec.Preset(c.preset)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Build(s, s.Name, "/home/u/.hadrill", rootFacts)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(p.Ports()); got != c.want {
			t.Errorf("%s: ports\n got %s\nwant %s", c.preset, got, c.want)
		}
	}
}

// With a cluster network a database host listens on its cluster address
// too: its server, and Galera's group, IST and SST ports; hosts without
// one (the load balancer, the client) are absent.
func TestClusterPorts(t *testing.T) {
	s, err := spec.Load([]byte(`name: nic
networks: {application: {bandwidth: 1gbit}, cluster: {bandwidth: 1gbit}}
clusters: [{name: db, nodes: 2, arbitrator: {}}]
load_balancers: [{name: lb, cluster: db}]
`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(s, s.Name, "/home/u/.hadrill", rootFacts)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(p.ClusterPorts()); got != "map[db1:[3306 4444 4567 4568] db2:[3306 4444 4567 4568] dbarb:[4567]]" {
		t.Errorf("cluster ports: %s", got)
	}
	g, err := spec.Preset("galera3")
	if err != nil {
		t.Fatal(err)
	}
	if p, err = Build(g, g.Name, "/home/u/.hadrill", rootFacts); err != nil {
		t.Fatal(err)
	}
	if got := p.ClusterPorts(); len(got) != 0 {
		t.Errorf("galera3 has no cluster network, yet cluster ports %v", got)
	}
}
