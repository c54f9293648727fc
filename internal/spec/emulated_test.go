package spec

import (
	"reflect"
	"testing"
)

func TestDropEmulated(t *testing.T) {
	cloud3, err := Preset("cloud3")
	if err != nil {
		t.Fatal(err)
	}
	galera3, err := Preset("galera3")
	if err != nil {
		t.Fatal(err)
	}
	own, err := Load([]byte(`
machines: [{name: big, cpus: 4, memory: 8G}]
clusters:
  - {name: db, kind: galera, nodes: 3, machine: d1, node_machines: {db3: big}, arbitrator: {machine: small},
     storage: {volumes: [{name: data, disk: premium, count: 4, fs: ext4, stripe: 256K, allocation_unit: 64K}]}}
load_balancers: [{name: lb, cluster: db, machine: small}]
client: {name: client, machine: d2}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		s    *Spec
		want []Emulated
	}{
		{"cloud3", cloud3, []Emulated{
			{"networks", "application 1gbit, cluster 1gbit"},
			{"clusters[0].machine", "d1"},
			{"clusters[0].storage", "data: 2× standard, logs: 1× standard, tmp: 1× local; datadir on data, redo on data, binlog on logs, tmpdir on tmp"},
		}},
		{"galera3 (nothing emulated)", galera3, nil},
		{"every kind", own, []Emulated{
			{"clusters[0].machine", "d1"},
			{"clusters[0].node_machines.db3", "big"},
			{"clusters[0].storage", "data: 4× premium (fs ext4, stripe 256K, allocation unit 64K); datadir on data, redo on data, binlog on data, tmpdir on data"},
			{"clusters[0].arbitrator.machine", "small"},
			{"load_balancers[0].machine", "small"},
			{"client.machine", "d2"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.s.DropEmulated()
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("dropped\n got %q\nwant %q", got, tc.want)
			}
			if again := tc.s.DropEmulated(); again != nil {
				t.Errorf("a second time: %q, want nothing", again)
			}
			if tc.s.Machines != nil || tc.s.Disks != nil {
				t.Errorf("catalogues left: %v %v", tc.s.Machines, tc.s.Disks)
			}
		})
	}
}
