package workload

import (
	"strings"
	"testing"

	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
)

func TestDatasetFit(t *testing.T) {
	vol := plan.Volume{Name: "data", Class: spec.DiskClass{Name: "standard", Size: "8G"}, Disks: []string{"a", "b"}, Mount: "/l/volumes/db1/data"}
	onVolume := plan.Node{Name: "db1", DataDir: "/l/volumes/db1/data/mysql", Volumes: []plan.Volume{vol}}
	local := plan.Node{Name: "db2", DataDir: "/l/nodes/db2/data"}
	for _, c := range []struct {
		name  string
		p     plan.Plan
		bytes int64
		free  int64
		want  string
	}{
		{"fits the striped volume", plan.Plan{Nodes: []plan.Node{onVolume}}, 15 << 30, 0, ""},
		{"over the volume", plan.Plan{Nodes: []plan.Node{onVolume}}, 17 << 30, 1 << 40, "--warehouses: 170 warehouses are about 17G a node, more than db1's datadir volume data holds 16G"},
		{"local nodes share the free space", plan.Plan{Nodes: []plan.Node{local, local}}, 10 << 30, 15 << 30, "about 10G a node, 20G for the lab's 2 nodes on this computer's disk, which has 15G free"},
		{"local nodes that fit", plan.Plan{Nodes: []plan.Node{local, local}}, 10 << 30, 25 << 30, ""},
		{"remote hosts are theirs", plan.Plan{Mode: plan.ModeSSH, Nodes: []plan.Node{local}}, 1 << 40, 0, ""},
	} {
		got := DatasetFit(&c.p, "--warehouses: 170 warehouses", c.bytes, c.free)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
