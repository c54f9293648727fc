package spec

import (
	"math"
	"strings"
	"testing"
)

func TestPresetsAreValid(t *testing.T) {
	for _, name := range PresetNames() {
		if _, err := Preset(name); err != nil {
			t.Errorf("preset %s: %v", name, err)
		}
	}
	if _, err := Preset("nope"); err == nil || !strings.Contains(err.Error(), "unknown preset") {
		t.Errorf("unknown preset: got %v", err)
	}
}

func TestLoadReportsEveryProblem(t *testing.T) {
	cases := []struct {
		name string
		yaml string
		want []string // each must appear in the error
	}{
		{"malformed", "clusters: [", []string{"malformed YAML"}},
		{"empty", "", []string{"empty document"}},
		{"unknown field", "clusters:\n  - name: db\n    nodez: 3\n", []string{"clusters[0].nodez: unknown field"}},
		{"wrong type", "clusters:\n  - name: db\n    nodes: three\n", []string{`clusters[0].nodes: expected an integer, got "three"`}},
		{"list expected", "clusters: db\n", []string{"clusters: expected a list"}},
		{"zero nodes", "clusters:\n  - name: db\n    nodes: 0\n", []string{"clusters[0].nodes: must be ≥ 1, got 0"}},
		{"negative nodes", "clusters:\n  - name: db\n    nodes: -2\n", []string{"clusters[0].nodes: must be ≥ 1, got -2"}},
		{"duplicate cluster", "clusters:\n  - name: db\n  - name: db\n", []string{`clusters[1].name: duplicate name "db"`}},
		{"host clash", "clusters:\n  - name: db\n    nodes: 1\nload_balancers:\n  - name: db1\n    cluster: db\n",
			[]string{`load_balancers[0].name: duplicate name "db1"`}},
		{"network outside", "network: 10.0.0.0/24\nclusters:\n  - name: db\n", []string{"network: 10.0.0.0/24 is outside the lab range"}},
		{"address outside", "network: 198.18.7.0/24\nclusters:\n  - name: db\n    nodes: 1\n    addresses: [198.18.8.1]\n",
			[]string{"clusters[0].addresses[0]: 198.18.8.1 is outside the lab network 198.18.7.0/24"}},
		{"bad refs", "clusters:\n  - name: db\nload_balancers:\n  - name: lb\n    cluster: nope\nreplication:\n  - from: db\n    to: dr\n",
			[]string{`load_balancers[0].cluster: unknown cluster "nope"`, `replication[0].to: unknown cluster "dr"`}},
		{"bad load balancer mode, kind and checks", "clusters:\n  - name: db\nload_balancers:\n  - {name: lb, cluster: db, mode: spread, kind: nginx, checks: slow}\n",
			[]string{`load_balancers[0].mode: expected one of single-writer, balanced, got "spread"`, `load_balancers[0].kind: expected one of haproxy, iptables, got "nginx"`,
				`load_balancers[0].checks: expected one of fast, cloud, got "slow"`}},
		{"bad kind and profile", "clusters:\n  - name: db\n    kind: ndb\n    profile: fast\n",
			[]string{`clusters[0].kind: expected one of galera, primary, standalone, got "ndb"`, `clusters[0].profile: expected one of default, durable, relaxed`}},
		{"managed key", "clusters:\n  - name: db\n    config:\n      datadir: /x\n", []string{"clusters[0].config.datadir: is managed by hadrill"}},
		{"no clusters", "name: x\n", []string{"clusters: at least one cluster is required"}},
		{"bad name", "clusters:\n  - name: DB_1\n", []string{`clusters[0].name: "DB_1" is not a valid name`}},
		{"channel from a missing cluster", "clusters:\n  - name: db\n  - name: dr\n    kind: standalone\nreplication:\n  - from: nope\n    to: dr\n",
			[]string{`replication[0].from: unknown cluster "nope"`}},
		{"channel problems", "clusters:\n  - name: db\n  - name: pr\n    kind: primary\n  - name: dr\n    kind: standalone\nreplication:\n" +
			"  - {from: db, to: pr}\n  - {from: db, to: dr, mode: sync}\n  - {from: pr, to: dr, ack_timeout: 1s}\n  - {from: db, to: db}\n",
			[]string{`replication[0].to: cluster "pr" is a primary cluster`, `replication[1].mode: expected one of async, semi-sync, got "sync"`,
				`replication[2].to: cluster "dr" already receives replication[1]`, `replication[2].ack_timeout: applies only with mode semi-sync`,
				`replication[3].to: a channel cannot replicate cluster "db" into itself`}},
		{"channel cycle", "clusters:\n  - name: a\n  - name: b\nreplication:\n  - {from: a, to: b}\n  - {from: b, to: a}\n",
			[]string{`replication: channels form a cycle (a → b → a); a ring is for standalone servers only (each a writable primary), and cluster "a" is galera`}},
		{"cycle through a galera cluster", "clusters:\n  - {name: a, kind: standalone}\n  - {name: b, kind: standalone}\n  - {name: g}\nreplication:\n" +
			"  - {from: a, to: b}\n  - {from: b, to: g}\n  - {from: g, to: a}\n",
			[]string{`replication: channels form a cycle (a → b → g → a); a ring is for standalone servers only (each a writable primary), and cluster "g" is galera`}},
		{"primary cluster problems", "clusters:\n  - name: pr\n    kind: primary\n    nodes: 1\n    mode: sync\n    available_when_donor: true\n  - name: g\n    mode: async\n",
			[]string{`clusters[0].nodes: a primary cluster has a primary and at least one replica (≥ 2 nodes), got 1`, `clusters[0].available_when_donor: applies to galera clusters only`,
				`clusters[0].mode: expected one of async, semi-sync, got "sync"`, `clusters[1].mode: applies to primary clusters only`}},
		{"spread problems", "regions: [{name: a}, {name: b}]\nclusters:\n  - {name: db, nodes: 1, regions: [a, b]}\n" +
			"  - {name: g, nodes: 4, regions: [a, a, c], region: b}\n  - {name: s, kind: standalone, regions: [b]}\n",
			[]string{`clusters[0].regions: 2 regions for 1 nodes`, `clusters[1].regions[1]: region "a" is listed twice`,
				`clusters[1].regions[2]: unknown region "c"`, `clusters[1].region: with regions, region is the first of them ("a"), got "b"`,
				`clusters[2].regions: a standalone cluster has one node`}},
		{"arbitrator problems", "regions: [{name: a}]\nclusters:\n  - {name: pr, kind: primary, arbitrator: {region: z}}\n  - {name: g, nodes: 3, arbitrator: {}}\n  - {name: garb, kind: standalone}\n",
			[]string{`clusters[0].arbitrator: applies to galera clusters only`, `clusters[0].arbitrator.region: unknown region "z"`}},
		{"link problems", "regions: [{name: a}, {name: b}]\nclusters: [{name: db}]\nlinks:\n  - {between: [a, a], rtt: 11s, loss: 101, bandwidth: fast}\n  - {between: [a, z]}\n",
			[]string{`links[0].between: a link joins two different regions`, `links[0].rtt:`, `links[0].loss: expected a percentage from 0 to 100`,
				`links[0].bandwidth: expected a rate`, `links[1].between[1]: unknown region "z"`}},
		{"several at once", "clusters:\n  - name: db\n    nodes: 0\n    bogus: 1\n  - name: x\n    kind: what\n",
			[]string{"clusters[0].bogus: unknown field"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load([]byte(c.yaml))
			if err == nil {
				t.Fatalf("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\n does not contain %q", err, w)
				}
			}
		})
	}
}

func TestNodeRegion(t *testing.T) {
	n := func(v int) *int { return &v }
	cases := []struct {
		nodes   int
		regions []string
		want    string
	}{
		{6, []string{"e", "w"}, "e e e w w w"},
		{5, []string{"e", "w"}, "e e e w w"},
		{4, []string{"a", "b", "c"}, "a a b c"},
		{2, nil, "x x"},
	}
	for _, c := range cases {
		cl := Cluster{Nodes: n(c.nodes), Regions: c.regions, Region: "x"}
		var got []string
		for j := 1; j <= c.nodes; j++ {
			got = append(got, cl.NodeRegion(j))
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("%d over %v: %v, want %s", c.nodes, c.regions, got, c.want)
		}
	}
}

func TestSeveralProblemsAtOnce(t *testing.T) {
	_, err := Load([]byte("clusters:\n  - name: db\n    nodes: 0\n    profile: zzz\n  - name: db\n"))
	if err == nil {
		t.Fatal("no error")
	}
	if n := len(strings.Split(err.Error(), "\n")); n < 3 {
		t.Errorf("want ≥3 problems, got %d: %v", n, err)
	}
}

func TestDefaults(t *testing.T) {
	s, err := Load([]byte("clusters:\n  - name: db\n"))
	if err != nil {
		t.Fatal(err)
	}
	c := s.Clusters[0]
	if c.Kind != KindGalera || c.NodeCount() != 3 || c.Region != DefaultRegion || c.Profile != "default" {
		t.Errorf("defaults not applied: %+v", c)
	}
	if s.Client == nil || s.Client.Name != "client" {
		t.Errorf("client default missing: %+v", s.Client)
	}
}

func FuzzLoad(f *testing.F) {
	for _, name := range PresetNames() {
		src, _ := PresetSource(name)
		f.Add(src)
	}
	f.Add([]byte("clusters:\n  - name: db\n    nodes: -1\n    config: {a: [1]}\n"))
	f.Add([]byte("a: &x [*x]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Load(data)
		if err == nil && s == nil {
			t.Fatal("nil spec without error")
		}
	})
}

func TestMachinesValidation(t *testing.T) {
	_, err := Load([]byte(`
machines: [{name: big, cpus: 0, memory: 100M, disk_iops: -1, disk_throughput: 10K}, {name: Big2, cpus: 0.333, memory: 1G, disk_throughput: fast}, {name: big, cpus: 1, memory: 1G}]
clusters: [{name: db, machine: huge, memory: 8G, arbitrator: {machine: nope}, kind: galera}, {name: dc, machine: d1, memory: 4G, node_machines: {dc1: small, dc7: d1, x: d1, dc2: zz}}]
load_balancers: [{name: lb, cluster: db, machine: x}]
client: {machine: y}
`))
	if err == nil {
		t.Fatal("bad machines accepted")
	}
	for _, want := range []string{
		"machines[0].cpus: expected a number of cores from 0.01 to 256",
		"machines[0].memory: expected a size of at least 256M",
		"machines[0].disk_iops: expected 0 (no cap) to 1000000 IOPS over the machine's disks, got -1",
		`machines[0].disk_throughput: expected bytes per second of at least 1M like 32M or 1G, got "10K"`,
		`machines[1].disk_throughput: expected bytes per second of at least 1M like 32M or 1G, got "fast"`,
		`machines[1].name: "Big2" is not a valid name`,
		"machines[1].cpus: expected a number of cores",
		`machines[2].name: duplicate name "big"`,
		`clusters[0].machine: unknown machine "huge" (known: Big2, a3, big, d1, d2, small)`,
		`clusters[0].arbitrator.machine: unknown machine "nope"`,
		"clusters[1].memory: 4G is more than its machine d1 (1 CPU, 3.5G) has",
		"clusters[1].node_machines.dc1: 4G is more than its machine small (0.5 CPUs, 1G) has",
		`clusters[1].node_machines.dc2: unknown machine "zz"`,
		`clusters[1].node_machines.dc7: unknown node "dc7" (the cluster's nodes are dc1 to dc3)`,
		`clusters[1].node_machines.x: unknown node "x"`,
		`load_balancers[0].machine: unknown machine "x"`,
		`client.machine: unknown machine "y"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%s", want, err)
		}
	}
	s, err := Load([]byte("machines: [{name: d1, cpus: 0.5, memory: 1G}]\nclusters: [{name: db, machine: d1}]"))
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := s.MachineNamed("d1"); m.CPUs != 0.5 {
		t.Errorf("a spec's own machine shadows the built-in one of that name: %+v", m)
	}
}

func TestStorageValidation(t *testing.T) {
	_, err := Load([]byte(`
disks:
  - {name: bad, iops: 0, throughput: 10K, latency: 2s, size: 10M, caching: write}
  - {name: bursty, iops: 500, throughput: 60M, latency: 2ms, burst: {iops: 400, throughput: 10M, duration: 48h}}
  - {name: nobucket, iops: 500, throughput: 60M, latency: 2ms, burst: {duration: 30m}, warmup: {after_idle: 1m, lasts: x, speed: 1.5}}
clusters:
  - {name: db, storage: {volumes: []}}
  - {name: dc, storage: {volumes: [{name: data, disk: nope, count: 17, fs: zfs}, {name: data, disk: standard}], redo: logs}}
  - {name: dd, storage: {volumes: [{name: data, disk: standard, stripe: 64K, allocation_unit: 64K, fs: btrfs}, {name: logs, disk: standard, count: 2, stripe: 3K, allocation_unit: 128K}]}}
`))
	if err == nil {
		t.Fatal("bad storage accepted")
	}
	for _, want := range []string{
		"disks[0].iops: expected 1 to",
		"disks[0].throughput: expected bytes per second of at least 1M",
		"disks[0].latency: expected a duration from 0 to 1s",
		"disks[0].size: expected a size from 1G to 1T",
		"clusters[0].storage.volumes: at least one volume is required",
		`disks[0].caching: expected one of none, read, readwrite, got "write"`,
		"disks[1].burst.iops: expected more than the class's 500",
		"disks[1].burst.throughput: expected bytes per second above the class's 60M",
		`disks[1].burst.duration: expected how long a full bucket lasts at the burst rate, 1s to 24h like 30m, got "48h"`,
		"disks[2].burst: expected iops or throughput above the class's",
		`disks[2].warmup.lasts: expected how long a warm-up lasts`,
		"disks[2].warmup.speed: expected the share of the caps a warming disk runs at, above 0 and below 1",
		`clusters[1].storage.volumes[0].disk: unknown disk class "nope" (known: bad, bursty, local, nobucket, os, premium, standard)`,
		"clusters[1].storage.volumes[0].count: expected 1 to 16 disks, got 17",
		`clusters[1].storage.volumes[0].fs: expected one of ext4, xfs, btrfs, got "zfs"`,
		`clusters[1].storage.volumes[1].name: duplicate name "data"`,
		`clusters[1].storage.redo: unknown volume "logs" (volumes: data)`,
		"clusters[2].storage.volumes[0].stripe: a stripe needs a striped volume (count 2 or more), count is 1",
		`clusters[2].storage.volumes[0].allocation_unit: btrfs allocates in 4K sectors here`,
		`clusters[2].storage.volumes[1].stripe: expected a power of two from 4K to 1M like 64K, got "3K"`,
		`clusters[2].storage.volumes[1].allocation_unit: expected a power of two from 4K to 64K like 64K, got "128K"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%s", want, err)
		}
	}
}

func TestBinaryLogValidation(t *testing.T) {
	_, err := Load([]byte(`
clusters:
  - {name: db, kind: galera, binary_log: false, storage: {volumes: [{name: data, disk: standard}], binlog: data}}
  - {name: pr, kind: primary, nodes: 2, mode: async, binary_log: false}
  - {name: dr, kind: standalone}
replication: [{from: db, to: dr}]
`))
	if err == nil {
		t.Fatal("binary_log: false accepted where it cannot be")
	}
	for _, want := range []string{
		"clusters[0].storage.binlog: the binary log is off",
		"clusters[1].binary_log: a primary cluster's replicas read its binary log",
		`replication[0].from: cluster "db" has its binary log off`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%s", want, err)
		}
	}
	s, err := Load([]byte("clusters: [{name: db, kind: galera, binary_log: false}]"))
	if err != nil || s.Clusters[0].Binlog() {
		t.Fatalf("a Galera cluster without a binary log: %v", err)
	}
}

func TestHourlyPrice(t *testing.T) {
	s, err := Load([]byte(`
machines: [{name: big, cpus: 2, memory: 4G, price: 0.5}, {name: tiny, cpus: 0.5, memory: 1G, price: 0.05}]
clusters: [{name: db, kind: galera, nodes: 3, machine: big, node_machines: {db3: tiny}, arbitrator: {machine: tiny}}]
load_balancers: [{name: lb, cluster: db, machine: d1}]
client: {machine: big}
`))
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := s.HourlyPrice(); !ok || math.Abs(p-1.1) > 1e-9 {
		t.Errorf("two big nodes, a tiny one and a tiny arbitrator (the unpriced LB and the client not counted): %g %v", p, ok)
	}
	if _, err := Load([]byte("machines: [{name: x, cpus: 1, memory: 1G, price: -1}]\nclusters: [{name: db, kind: galera, machine: x}]")); err == nil ||
		!strings.Contains(err.Error(), "machines[0].price: expected an hourly price") {
		t.Errorf("a negative price: %v", err)
	}
	s, _ = Preset("galera3")
	if _, ok := s.HourlyPrice(); ok {
		t.Error("a spec without prices has no price")
	}
}

func TestFaultDomains(t *testing.T) {
	s, err := Load([]byte(`
clusters: [{name: db, kind: galera, nodes: 3, fault_domains: [fd0, fd1]}, {name: dc, kind: galera, nodes: 3, fault_domains: [fd0, fd1, fd2]},
           {name: dd, kind: galera, nodes: 2, fault_domains: [fd0, fd1], arbitrator: {fault_domain: fd2}}]
load_balancers: [{name: lb, cluster: db, replicas: 2, fault_domains: [fd0]}]
`))
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(Warnings(s), "\n")
	for _, want := range []string{"clusters[0]: fault domain fd0 holds 2 of the cluster's 3 members: losing it loses the majority",
		"load_balancers[0]: both hosts of the pair are in fault domain fd0"} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings lack %q:\n%s", want, w)
		}
	}
	if strings.Contains(w, "clusters[1]") || strings.Contains(w, "clusters[2]") {
		t.Errorf("three domains, or two and an arbitrator in a third, keep a majority:\n%s", w)
	}
	if d := s.Clusters[0].NodeDomain(3); d != "fd0" {
		t.Errorf("node 3 of 2 domains round-robin: %s", d)
	}
	if _, err := Load([]byte("clusters: [{name: db, kind: galera, fault_domains: [Bad Name]}]")); err == nil || !strings.Contains(err.Error(), "clusters[0].fault_domains[0]") {
		t.Errorf("a bad domain name: %v", err)
	}
}

func TestPrimaryReadOnlyIsHadrills(t *testing.T) {
	_, err := Load([]byte("clusters: [{name: db, kind: primary, nodes: 2, config: {skip-read-only: 1}}]"))
	if err == nil || !strings.Contains(err.Error(), "clusters[0].config.skip-read-only: hadrill decides which server of a primary cluster is writable") {
		t.Errorf("read_only on a primary cluster: %v", err)
	}
	if _, err := Load([]byte("clusters: [{name: db, kind: galera, config: {read_only: 1}}]")); err != nil {
		t.Errorf("read_only on a Galera cluster is the user's: %v", err)
	}
}

// TestEnginesAndProfiles: a Galera cluster refuses options that make its
// tables MyISAM or Aria (Galera replicates InnoDB only), every problem at
// once with its field path; a profile whose promise an override breaks is
// refused; the default profile takes any override and is shown with it.
func TestEnginesAndProfiles(t *testing.T) {
	_, err := Load([]byte("clusters: [{name: db, config: {default_storage_engine: MyISAM, enforce-storage-engine: Aria, default_storage_eng: MEMORY}}]"))
	for _, want := range []string{
		"clusters[0].config.default_storage_engine: a Galera cluster replicates InnoDB tables only",
		"clusters[0].config.enforce-storage-engine: a Galera cluster replicates InnoDB tables only",
		"clusters[0].config.default_storage_eng: a Galera cluster replicates InnoDB tables only",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want %q in %v", want, err)
		}
	}
	for _, ok := range []string{
		"clusters: [{name: db, config: {default_storage_engine: innodb}}]",
		"clusters: [{name: db, kind: primary, nodes: 2, config: {default_storage_engine: Aria}}]", // replicated by the binary log
		"clusters: [{name: db, profile: durable, config: {innodb_flush_log_at_trx_commit: 1, sync_binlog: 1, innodb_doublewrite: ON}}]",
		"clusters: [{name: db, profile: relaxed, config: {innodb_flush_log_at_trx_commit: 2}}]",
		"clusters: [{name: db, profile: default, config: {innodb_flush_log_at_trx_commit: 2, sync_binlog: 1}}]",
	} {
		if _, err := Load([]byte(ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	_, err = Load([]byte("clusters: [{name: db, profile: durable, config: {innodb_flush_log_at_trx_commit: 0, sync-binlog: 0, innodb_doublewrite: OFF}}]"))
	for _, want := range []string{
		"clusters[0].config.innodb_flush_log_at_trx_commit: profile durable flushes the redo log at every commit (1); innodb_flush_log_at_trx_commit=0 breaks that promise",
		"clusters[0].config.sync-binlog: profile durable syncs the binary log at every commit (1); sync_binlog=0 breaks",
		"clusters[0].config.innodb_doublewrite: profile durable keeps the doublewrite buffer",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want %q in %v", want, err)
		}
	}
	if _, err := Load([]byte("clusters: [{name: db, profile: relaxed, config: {innodb_flush_log_at_trx_commit: 1}}]")); err == nil ||
		!strings.Contains(err.Error(), "profile relaxed writes the redo log about once a second") {
		t.Errorf("relaxed made durable: %v", err)
	}
	if got := ProfileNote("default", map[string]string{"innodb_flush_log_at_trx_commit": "2", "sync_binlog": "0", "max_connections": "10"}); got != "innodb_flush_log_at_trx_commit=2" {
		t.Errorf("note %q", got)
	}
	if got := ProfileNote("durable", map[string]string{"innodb_flush_log_at_trx_commit": "1"}); got != "" {
		t.Errorf("a kept promise has no note: %q", got)
	}
}

// TestRateBounds: one rule for a rate wherever one is given (a spec's link
// or NIC, a bandwidth fault): 8kbit to 100gbit.
func TestRateBounds(t *testing.T) {
	for _, c := range []struct {
		s  string
		ok bool
	}{{"8kbit", true}, {"1kbit", false}, {"7999bit", false}, {"8000bit", true}, {"100gbit", true}, {"101gbit", false}, {"0mbit", false}} {
		if _, err := ParseRate(c.s); (err == nil) != c.ok {
			t.Errorf("ParseRate(%q): %v, want ok %v", c.s, err, c.ok)
		}
	}
	if _, err := Load([]byte("regions: [{name: a}, {name: b}]\nlinks: [{between: [a, b], rtt: 10ms, bandwidth: 1kbit}]\nclusters: [{name: db, regions: [a, b], nodes: 2}]\n")); err == nil ||
		!strings.Contains(err.Error(), "links[0].bandwidth: expected a rate from 8kbit") {
		t.Errorf("a 1 kbit link: %v", err)
	}
}

// TestVolumeCountZero: count 0 is refused, not taken for the default 1.
func TestVolumeCountZero(t *testing.T) {
	_, err := Load([]byte("clusters: [{name: db, kind: standalone, storage: {volumes: [{name: data, disk: standard, count: 0}]}}]"))
	if err == nil || !strings.Contains(err.Error(), "clusters[0].storage.volumes[0].count: expected 1 to 16 disks, got 0") {
		t.Errorf("count 0: %v", err)
	}
	if _, err := Load([]byte("clusters: [{name: db, kind: standalone, storage: {volumes: [{name: data, disk: standard}]}}]")); err != nil {
		t.Errorf("no count: %v", err)
	}
}

func TestRings(t *testing.T) {
	for _, c := range []struct {
		name string
		next map[string][]string
		want string
	}{
		{"none", map[string][]string{"a": {"b"}, "b": {"c"}}, ""},
		{"two", map[string][]string{"a": {"b"}, "b": {"a"}}, "a,b"},
		{"three, entered anywhere", map[string][]string{"c": {"a"}, "a": {"b"}, "b": {"c"}}, "a,b,c"},
		{"a branch off a ring", map[string][]string{"a": {"b", "d"}, "b": {"a"}, "d": {"e"}}, "a,b"},
		{"two rings through one cluster", map[string][]string{"a": {"b", "c"}, "b": {"a"}, "c": {"a"}}, "a,b|a,c"},
	} {
		var got []string
		for _, r := range Rings(c.next) {
			got = append(got, strings.Join(r, ","))
		}
		if strings.Join(got, "|") != c.want {
			t.Errorf("%s: rings %q, want %q", c.name, strings.Join(got, "|"), c.want)
		}
	}
}

// TestRingOfStandalones: two or three standalone servers replicating into
// each other are accepted (the p2p preset is such a ring).
func TestRingOfStandalones(t *testing.T) {
	if _, err := Load([]byte("clusters:\n  - {name: a, kind: standalone}\n  - {name: b, kind: standalone}\n  - {name: c, kind: standalone}\n" +
		"replication:\n  - {from: a, to: b}\n  - {from: b, to: c}\n  - {from: c, to: a}\n")); err != nil {
		t.Errorf("a ring of three standalone servers: %v", err)
	}
	if _, err := Preset("p2p"); err != nil {
		t.Errorf("preset p2p: %v", err)
	}
}

// TestSpecOddities (the review's L5): a float where an integer goes, two
// links between one pair of regions, a key given twice (without a false
// problem after it), a bad cluster name said once, one option under two
// spellings.
func TestSpecOddities(t *testing.T) {
	for _, c := range []struct {
		yaml string
		want []string
		not  string
	}{
		{"clusters: [{name: db, nodes: 2.5}]", []string{`clusters[0].nodes: expected an integer, got "2.5"`}, ""},
		{"load_balancers: [{name: lb, cluster: db, replicas: 1.9}]\nclusters: [{name: db}]", []string{`load_balancers[0].replicas: expected an integer, got "1.9"`}, ""},
		{"regions: [{name: a}, {name: b}]\nlinks: [{between: [a, b], rtt: 100ms}, {between: [b, a], rtt: 10ms}]\nclusters: [{name: db, regions: [a, b], nodes: 3}]",
			[]string{"links[1].between: links[0] joins a and b already"}, ""},
		{"name: x\nname: y\nclusters: [{name: db}]", []string{"name: given twice (line 2)"}, "at least one cluster"},
		{"clusters: [{name: dbé}]", []string{`clusters[0].name: "dbé" is not a valid name`}, `"dbé1"`},
		{"clusters: [{name: db, config: {sync_binlog: 1, sync-binlog: 0}}]", []string{"clusters[0].config.sync_binlog: sets sync_binlog, as sync-binlog does"}, ""},
	} {
		_, err := Load([]byte(c.yaml))
		for _, want := range c.want {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: want %q in %v", c.yaml, want, err)
			}
		}
		if err != nil && c.not != "" && strings.Contains(err.Error(), c.not) {
			t.Errorf("%s: %q in %v", c.yaml, c.not, err)
		}
	}
}
