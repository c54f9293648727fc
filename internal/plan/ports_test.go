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
