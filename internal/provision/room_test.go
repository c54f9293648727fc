package provision

import (
	"strings"
	"testing"

	"github.com/hadrill/hadrill/internal/plan"
)

// TestCheckMemory (the review's L5): a buffer pool larger than the
// computer's memory is refused naming its field; one that fits is not.
func TestCheckMemory(t *testing.T) {
	p := &plan.Plan{Clusters: []plan.Cluster{{Name: "db", Nodes: []string{"db1", "db2"}}},
		Nodes: []plan.Node{{Name: "db1", Config: "innodb_buffer_pool_size = 1G\n# overrides\ninnodb_buffer_pool_size = 999T\n"}, {Name: "db2", Config: "innodb_buffer_pool_size = 1G\n"}}}
	err := CheckMemory(p, 24<<30)
	if err == nil || !strings.Contains(err.Error(), "clusters[0].config.innodb_buffer_pool_size: 999T for db1, more than this computer's memory (24G)") {
		t.Errorf("%v", err)
	}
	p.Nodes[0].Config = "innodb_buffer_pool_size = 1G\n"
	if err := CheckMemory(p, 24<<30); err != nil {
		t.Errorf("pools that fit: %v", err)
	}
}
