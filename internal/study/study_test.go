package study

import (
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/drill"
	"github.com/hadrill/hadrill/internal/facts"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/spec"
	"github.com/hadrill/hadrill/internal/words"
	"github.com/hadrill/hadrill/internal/workload"
)

func TestEmbeddedStudiesLoad(t *testing.T) {
	if len(Names()) == 0 {
		t.Fatal("no embedded study")
	}
	for _, n := range Names() {
		s, err := Embedded(n)
		if err != nil {
			t.Errorf("%s: %v", n, err)
			continue
		}
		for _, v := range s.Variants {
			if _, err := v.Spec(); err != nil {
				t.Errorf("%s %s: %v", n, v.Name, err)
			}
		}
		// every check measurable at both scales, or at the one it names
		// (Load refuses others), and quoted: its words and where they stand
		for name, sc := range map[string]Scale{"quick": s.Scales.Quick, "full": s.Scales.Full} {
			for _, e := range s.Expect {
				for _, st := range s.Steps {
					if e.Scale != "" && e.Scale != name {
						continue
					}
					if st.Name == e.Step && !slices.Contains(s.metrics(st, sc), e.Metric) {
						t.Errorf("%s: check %s/%s not measured at %+v", n, e.Variant, e.Metric, sc)
					}
				}
			}
		}
	}
	for _, n := range []string{"seed000-sweep", "seed000-fromdual", "seed000-openlife"} {
		if !slices.Contains(Names(), n) {
			t.Errorf("no study %s", n)
		}
	}
	// document 004's claims, for its services as endpoints
	b, err := os.ReadFile("../../docs/studies/seed004-services.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if s, err := Load(b); err != nil || len(s.Expect) != 18 || len(s.Reference) != 32 {
		t.Errorf("docs/studies/seed004-services.yaml: %v", err)
	}
}

func TestVariantSpecPatch(t *testing.T) {
	s, err := Embedded("seed002-wan")
	if err != nil {
		t.Fatal(err)
	}
	async, err := s.Variants[0].Spec()
	if err != nil {
		t.Fatal(err)
	}
	c := async.Clusters[0]
	if c.Mode != "async" || c.Config["innodb_flush_log_at_trx_commit"] != "2" || len(async.Regions) != 2 || c.AckTimeout != "" {
		t.Errorf("async variant: the patch is merged into the preset by cluster name: %+v", c)
	}
	if s.Baseline() != "async" {
		t.Errorf("baseline %q", s.Baseline())
	}
}

func TestMerge(t *testing.T) {
	base := map[string]any{"a": 1, "m": map[string]any{"x": 1, "y": 2},
		"l": []any{map[string]any{"name": "db", "n": 3}, map[string]any{"name": "dr", "n": 1}}, "plain": []any{1, 2}}
	got := Merge(base, map[string]any{"m": map[string]any{"y": 3}, "l": []any{map[string]any{"name": "dr", "n": 2}, map[string]any{"name": "new"}},
		"plain": []any{9}, "b": "x", "a": nil})
	m := got["m"].(map[string]any)
	l := got["l"].([]any)
	if _, kept := got["a"]; kept || m["x"] != 1 || m["y"] != 3 || len(l) != 3 || l[1].(map[string]any)["n"] != 2 || l[0].(map[string]any)["n"] != 3 ||
		l[2].(map[string]any)["name"] != "new" || len(got["plain"].([]any)) != 1 || got["b"] != "x" {
		t.Errorf("merged %v", got)
	}
	if base["m"].(map[string]any)["y"] != 2 || len(base["l"].([]any)) != 2 {
		t.Errorf("the base changed: %v", base)
	}
}

func TestBadStudy(t *testing.T) {
	_, err := Load([]byte(`
name: Bad Name
source: x
variants:
  - {name: a, preset: nope}
  - {name: a, preset: galera3, patch: {clusters: [{name: db, nodes: -1}]}, baseline: true}
  - {name: b, preset: galera3, baseline: true}
  - {name: c, preset: cloud3, patch: {clusters: [{name: db, config: {skip_innodb_flush_log_at_trx_commit: "1", sync_binl: "0"}}]}}
  - {name: d, preset: galera3, target: "db1; rm -rf /"}
steps:
  - {name: s, kind: sysbench, workload: nope}
  - {name: c, kind: dd}
  - {name: q, kind: slap, query: "DROP DATABASE app"}
  - {name: t, kind: tpcc, check: true, workload: oltp_read_write}
scales:
  quick: {runs: 0}
  full: {runs: 1, threads: [0], time: 10, tables: 1, table_size: 10}
reference:
  - {step: zz, variant: q, metric: tps@32, value: 1}
  - {step: s, variant: a, metric: tps@1}
expect:
  - {step: s, variant: a, metric: nope}
  - {step: s, variant: a, metric: tps@5, min: 2, max: 1}
deviations:
  - {what: x, scale: huge}
`))
	if err == nil {
		t.Fatal("a bad study loaded")
	}
	for _, want := range []string{
		`name: expected lowercase letters, digits and dashes, got "Bad Name"`,
		"title: required",
		`variants[0]: preset: unknown preset "nope"`,
		`variants[1].name: duplicate variant "a"`,
		"variants[1]: patch.clusters[0].nodes",
		"variants: at most one baseline, got 2",
		"variants[3]: patch.clusters[0].config.skip_innodb_flush_log_at_trx_commit: profile durable flushes the redo log at every commit (1); innodb_flush_log_at_trx_commit=0 (the server reads",
		"variants[3]: patch.clusters[0].config.sync_binl: profile durable syncs the binary log",
		`steps[0].workload: expected one of`,
		`steps[1].kind: expected one of bulk-replication, commit-latency, conflict, consistency, disk, donor-probe, drill, semisync-receipt, slap, sysbench, tpcc, got "dd"`,
		"scales.quick.runs: expected 1 to 100 rounds, got 0",
		"scales.quick.threads: at least one thread count is required (step s)",
		"scales.full.threads: expected thread counts from 1 to 4096, got 0",
		"scales.quick.warehouses: expected 1 to 10000, got 0 (step t)",
		"scales.quick.time: expected 5 to 86400 seconds, got 0 (step t)",
		"steps[3].workload: is for consistency, drill and sysbench steps, got a tpcc step",
		`reference[0].step: unknown step "zz"`,
		`reference[0].variant: unknown variant "q"`,
		`expect[0].metric: step s yields`,
		"expect[0]: expected min, max or both",
		`reference[0].source: required`,
		`expect[0].claim: required: the document's words this check tests`,
		`expect[0].source: required: where the claim stands in the document`,
		"expect[1]: min 2 is above max 1",
		`steps[2].query: a study's query is one read (SELECT or WITH …)`,
		`variants[4].target: "db1; rm -rf /" is not a host of the variant's lab (known: nodes, lb, db1, db2, db3) (variant d, step c)`,
		"deviations[0]: what, document and here are required",
		`deviations[0].scale: expected quick, full or nothing (both), got "huge"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%s", want, err)
		}
	}
}

// TestCheckAtBothScales: a check at a figure one scale does not measure
// is refused (it could never fail there), a reference at one is not.
func TestCheckAtBothScales(t *testing.T) {
	_, err := Load([]byte(`
name: one-scale
title: t
source: s
variants: [{name: a, preset: galera3, baseline: true}, {name: b, preset: galera3}]
steps: [{name: oltp, kind: sysbench, workload: oltp_read_write}]
scales:
  quick: {runs: 3, threads: [16], time: 10, tables: 1, table_size: 100}
  full: {runs: 3, threads: [8, 64], time: 60, tables: 1, table_size: 1000}
reference:
  - {step: oltp, variant: a, metric: tps@64, value: 100, source: "table 1"}
expect:
  - {step: oltp, variant: b, than: a, metric: tps@16, min: 1.1, claim: "b is faster", source: "section 2"}
  - {step: oltp, variant: b, metric: p99_ms@64, max: 10, claim: "b is quick", source: "section 3"}
`))
	for _, want := range []string{
		"expect[0].metric: tps@16 is not measured at full scale (it yields tps@8, p95_ms@8, p99_ms@8, avg_ms@8, storage_ios_per_tx@8, tps@64, p95_ms@64, p99_ms@64, avg_ms@64, storage_ios_per_tx@64): a check must be measurable at both scales",
		"expect[1].metric: p99_ms@64 is not measured at quick scale (it yields tps@16, p95_ms@16, p99_ms@16, avg_ms@16, storage_ios_per_tx@16)",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in: %v", want, err)
		}
	}
	if err != nil && strings.Contains(err.Error(), "reference[0]") {
		t.Errorf("a published figure at one scale's point is refused: %v", err)
	}
}

func TestLabName(t *testing.T) {
	a, b := LabName("seed002-wan", "async"), LabName("seed003-bulk", "async")
	if a == b || len(a) != 10 || !strings.HasSuffix(a, "async") || !strings.HasPrefix(a, "s") || a != LabName("seed002-wan", "async") {
		t.Errorf("lab names %q, %q: per study, stable, valid", a, b)
	}
	if long := LabName("x", "abcdefghijk"); len(long) > 16 {
		t.Errorf("%q is longer than a lab name may be", long)
	}
}

func TestBadEndpointsTargetsAndSlap(t *testing.T) {
	_, err := Load([]byte(`
name: bad2
title: bad
source: x
variants:
  - {name: a, preset: galera3, target: nodes, credentials: x.cnf, price: -2}
  - {name: b, endpoint: "mysql://user:pw@db.example:3306"}
  - {name: c, endpoint: "http://db.example", credentials: c.cnf, preset: galera3}
steps:
  - {name: commit, kind: commit-latency, target: nodes}
  - {name: disk, kind: disk}
  - {name: slap, kind: slap, dataset: employees, load: write}
  - {name: rows, kind: sysbench, workload: oltp_read_only, query: "SELECT 1"}
scales:
  quick: {runs: 1, count: 10, threads: [1], time: 1, tables: 1, table_size: 10, concurrency: [0], iterations: 0, dataset_size: 9}
  full: {runs: 1, count: 10, threads: [1], time: 1, tables: 1, table_size: 10, concurrency: [1], iterations: 1, dataset_size: 1}
`))
	if err == nil {
		t.Fatal("a bad study loaded")
	}
	for _, want := range []string{
		`variants[0].target: "nodes" (the nodes as one host list) is for sysbench steps only; step disk is disk`,
		"variants[0].credentials: applies to an endpoint variant only",
		"variants[0].price: expected an hourly price from 0 to 1000000, got -2",
		`variants[1].endpoint: expected mysql://HOST:PORT (the user and password go in the credentials file), got "mysql://user:pw@db.example:3306"`,
		"variants[1].credentials: required with an endpoint",
		"variants[1].endpoint: step disk (disk) needs a lab",
		`variants[2].endpoint: expected mysql://HOST:PORT`,
		"variants[2].endpoint: an endpoint variant has no preset, patch or target",
		`steps[0].target: "nodes" (the nodes as one host list) is for sysbench steps only, got a commit-latency step`,
		"steps[2]: dataset: a generated load (load) makes its own tables",
		"steps[3].query: is for slap steps, got a sysbench step",
		"scales.quick.concurrency: expected client counts from 1 to 4096, got 0",
		"scales.quick.iterations: expected 1 to 1000 (step slap), got 0",
		"scales.quick.dataset_size: expected 0.01 to 4",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%s", want, err)
		}
	}
}

func TestPerDollar(t *testing.T) {
	s, err := Embedded("seed004-managed")
	if err != nil {
		t.Fatal(err)
	}
	var samples []Sample
	for r, v := range [][3]float64{{100, 190, 250}, {104, 200, 240}, {98, 195, 260}} {
		for i, name := range []string{"half", "one", "two"} {
			samples = append(samples, Sample{Round: r + 1, Variant: name, Step: "oltp", Metric: "tps@128", Value: v[i]})
		}
	}
	cells, checks := Summarize(s, s.Scales.Quick, []string{"half", "one", "two"}, samples)
	per := map[string]float64{}
	for _, c := range cells {
		if c.Metric == "tps_per_dollar@128" {
			per[c.Variant] = c.Median
		}
	}
	if per["half"] != 2000 || per["one"] != 1950 || per["two"] != 1250 {
		t.Errorf("TPS per dollar an hour: %v", per)
	}
	if len(checks) != 0 {
		t.Errorf("document 004's claims are about services no lab stands in for: checks %+v", checks)
	}
	f := findingOf(s, "quick", 3, cells, checks, false)
	if !strings.Contains(f, "Transactions per second per dollar an hour, sysbench oltp_read_write with 128 clients: 0.5 CPU, 2G ($0.05/h) 2000 TPS per $/h") ||
		!strings.HasPrefix(f, "No claim of the document to check (figures only; ") {
		t.Errorf("finding: %s", f)
	}
}

func TestBadHistorySteps(t *testing.T) {
	_, err := Load([]byte(`
name: bad-history
title: bad history steps
source: x
variants:
  - {name: a, preset: galera3}
steps:
  - {name: d, kind: drill, scenario: explode}
  - {name: e, kind: drill, scenario: domain-outage, workload: ledger}
  - {name: f, kind: consistency, workload: ledger}
  - {name: g, kind: consistency, scenario: full-outage}
  - {name: h, kind: consistency, workload: bank}
  - {name: i, kind: drill, scenario: chaos, faults: "kill,nuke", hold: soon, interval: 1h5m}
  - {name: j, kind: drill, scenario: pause, faults: kill}
scales:
  quick: {runs: 1, time: 0}
  full: {runs: 1, time: 5, duration: 5}
expect:
  - {step: h, variant: a, metric: lost_updates, min: 1, claim: c, source: s}
`))
	if err == nil {
		t.Fatal("bad history steps loaded")
	}
	for _, want := range []string{
		`steps[0].scenario: expected a drill (failover, partition, full-outage`,
		`steps[1].scenario: a study runs the drills that need no target named (failover, partition, pause, crash-partition, full-outage, rolling-restart, chaos), got "domain-outage"`,
		`steps[1].workload: expected one of ` + strings.Join(drill.Workloads, ", ") + `, got "ledger"`,
		`steps[2].workload: expected one of ` + strings.Join(workload.HistoryWorkloads, ", ") + `, got "ledger"`,
		`steps[3].scenario: is for drill steps, got a consistency step`,
		`scales.quick.time: expected 1 to 3600 seconds of traffic before the fault and after recovery (step d)`,
		// a chaos step: its schedule's fields, and the scale's duration
		`steps[5].faults: unknown fault "nuke"`, `steps[5].hold: expected a duration (10s, 1m), got "soon"`,
		`steps[5].interval: expected 0 to 1h`, `steps[6].faults: applies to scenario chaos only`,
		`scales.quick.duration: expected 10 to 86400 seconds of fault schedule a round (step i), got 0`,
		`scales.full.duration: applies to a drill step of scenario chaos only (step d)`,
		// a bank step yields the bank's figures only
		`expect[0].metric: step h yields committed_per_s, wrong_totals, negative_values, got "lost_updates"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%s", want, err)
		}
	}
}

// TestChecksThatCannotFail (the review's M9, L9): bounds that every figure
// of a metric meets, that none can, that are not numbers, or that leave
// one value, are refused; so is an inferred claim without its why.
func TestChecksThatCannotFail(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		e    Expect
		want string // "" = a check that can fail and hold
	}{
		{Expect{Metric: "tps@64", Max: f(math.Inf(1))}, "max: expected a finite bound"},
		{Expect{Metric: "tps@64", Max: f(1e308)}, "max: expected a finite bound"},
		{Expect{Metric: "tps@64", Min: f(math.Inf(-1))}, "min: expected a finite bound"},
		{Expect{Metric: "tps@64", Max: f(math.NaN())}, "max: expected a finite bound"},
		{Expect{Metric: "tps@64", Than: "a", Min: f(-1e9)}, "a check that cannot fail"},
		{Expect{Metric: "avg_ms", Min: f(0)}, "a check that cannot fail"},
		{Expect{Metric: "avg_ms", Than: "a", Min: f(0)}, "a check that cannot fail"},
		{Expect{Metric: "passed", Max: f(1)}, "a check that cannot fail"},
		{Expect{Metric: "passed", Min: f(0), Max: f(1)}, "a check that cannot fail"},
		{Expect{Metric: "tps@64", Min: f(5), Max: f(5)}, "no measured figure's interval lies within one value"},
		{Expect{Metric: "lost_writes", Max: f(-1)}, "a check that can never hold"},
		{Expect{Metric: "tps@64", Than: "a", Max: f(0)}, "a check that can never hold"},
		{Expect{Metric: "passed", Min: f(2)}, "a check that can never hold"},
		{Expect{Metric: "lost_writes", Max: f(0)}, ""},
		{Expect{Metric: "passed", Min: f(1)}, ""},
		{Expect{Metric: "tps@64", Than: "a", Min: f(1.1)}, ""},
		{Expect{Metric: "gap_s", Min: f(0), Max: f(2)}, ""},
	} {
		got := strings.Join(boundProblems(c.e), "; ")
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%+v: %q, want %q", c.e, got, c.want)
		}
	}
	_, err := loadOneClaim("metric: avg_ms, max: 5, claim: c, source: s, inferred: true")
	if err == nil || !strings.Contains(err.Error(), "expect[0].why: required with inferred: true") {
		t.Errorf("inferred without why: %v", err)
	}
	if _, err := Load(nil); err == nil || !strings.Contains(err.Error(), "study: empty document") {
		t.Errorf("an empty file: %v", err)
	}
}

// TestRoom (the labs review's finding 5): what a study's labs would need
// at once against what this computer has.
func TestRoom(t *testing.T) {
	n := need{labs: 4, nodes: 13, data: rowsDataset(Scale{Tables: 20, TableSize: 1_000_000}), memory: 48 << 30, files: 100 << 30, memoryAvailable: 22 << 30, freeDisk: 200 << 30}
	err := n.problem("seed002-wan", "full")
	if err == nil || !strings.Contains(err.Error(), "would need about 48G of memory once the data is loaded, where 22G is available: run --scale quick") ||
		strings.Contains(err.Error(), "of files") {
		t.Errorf("%v", err)
	}
	n.memory, n.freeDisk = 4<<30, 50<<30
	if err := n.problem("x", "full"); err == nil || !strings.Contains(err.Error(), "about 100G of files, where 50G is free") {
		t.Errorf("%v", err)
	}
	n.files = 10 << 30
	if err := n.problem("x", "quick"); err != nil {
		t.Errorf("it fits: %v", err)
	}
	if got := words.Thousands(20_000_000); got != "20,000,000" {
		t.Errorf("thousands: %s", got)
	}
}

// TestRemaining (the labs review's finding 8): no estimate until every
// step ran once, then each step at its own mean.
func TestRemaining(t *testing.T) {
	steps := []Step{{Name: "commit"}, {Name: "oltp"}}
	if _, ok := remaining(steps, map[string][]time.Duration{"commit": {time.Second}}, 10); ok {
		t.Error("an estimate before oltp ran once")
	}
	took := map[string][]time.Duration{"commit": {2 * time.Second}, "oltp": {200 * time.Second, 40 * time.Second}}
	if got, ok := remaining(steps, took, 4); !ok || got != 244*time.Second {
		t.Errorf("remaining %v %v, want 4 units at (2 s + 120 s) / 2", got, ok)
	}
}

// TestLeast: the least time a study's rounds take is what its scale fixes,
// for every variant and round.
func TestLeast(t *testing.T) {
	for _, c := range []struct {
		name, scale string
		want        time.Duration
	}{
		{"seed000-binlog", "full", 2 * 3 * 10 * 70 * time.Second}, // 2 variants, 3 rounds, 10 thread counts of 60 s + 10 s
		{"seed000-binlog", "quick", 2 * 3 * 25 * time.Second},
		{"seed000-warmup", "full", 2 * 10 * 32 * time.Second}, // fio for 20 s after 12 s idle
		{"seed003-p2p", "full", 0},                            // rows and increments: no time the scale fixes
	} {
		s, _ := Embedded(c.name)
		sc, _ := s.Scales.Named(c.scale)
		if got := Least(s, sc, len(s.Variants)); got != c.want {
			t.Errorf("%s %s: %v, want %v", c.name, c.scale, got, c.want)
		}
	}
}

// TestLeastSaid: a dry run says the least time of the rounds a run has
// left: all of them, or those a stopped run did not keep, to its design's.
func TestLeastSaid(t *testing.T) {
	s, _ := Embedded("seed000-binlog")
	sc, _ := s.Scales.Named("full")
	vs := []string{"off", "on"}
	if got := leastSaid(s, sc, vs, nil, [][]string{vs}); !strings.HasPrefix(got, "its rounds take at least 1h10m0s (2 variants × 3 rounds") {
		t.Errorf("a new run: %q", got)
	}
	stopped := &Stored{ID: "R", Result: &Result{Completed: map[string]int{"off": 2, "on": 1}}}
	if got, want := leastSaid(s, sc, vs, stopped, [][]string{vs}), "run R keeps 2 variant rounds of 6 (off 1 and on 1); 4 variant rounds left, taking at least 46m40s"; !strings.HasPrefix(got, want) {
		t.Errorf("resumed, one group:\n got %q\nwant %q…", got, want)
	}
	if got, want := leastSaid(s, sc, vs, stopped, [][]string{{"off"}, {"on"}}), "run R keeps 3 variant rounds of 6 (off 2 and on 1); 3 variant rounds left, taking at least 35m0s"; !strings.HasPrefix(got, want) {
		t.Errorf("resumed, groups taking turns:\n got %q\nwant %q…", got, want)
	}
	stopped.Result.Design = &Design{Rounds: 5}
	if got, want := leastSaid(s, sc, vs, stopped, [][]string{vs}), "run R keeps 2 variant rounds of 10 (off 1 and on 1); 8 variant rounds left"; !strings.HasPrefix(got, want) {
		t.Errorf("resumed with a design:\n got %q\nwant %q…", got, want)
	}
}

func TestNeedSays(t *testing.T) {
	n := need{labs: 4, nodes: 13, data: rowsDataset(Scale{Tables: 20, TableSize: 1_000_000}), memory: 16 << 30, files: 97 << 30, memoryAvailable: 22 << 30, freeDisk: 75 << 30}
	if got := n.String(); got != "4 labs at once, 13 nodes, each node holding 20 tables of 1,000,000 rows (about 4.66G in InnoDB's pages): about 16G of memory once the data is loaded (22G available), about 97G of files (75G free; emulated disks' images are checked against their own sizes when a lab comes up)" {
		t.Errorf("says %q", got)
	}
	err := n.problem("seed002-wan", "full")
	if err == nil || !strings.Contains(err.Error(), "would need about 97G of files, where 75G is free") || strings.Contains(err.Error(), "of memory") {
		t.Errorf("refusal: %v", err)
	}
	n.files = 10 << 30
	if err := n.problem("seed002-wan", "full"); err != nil {
		t.Errorf("fits: %v", err)
	}
}

// TestGroups: labs that do not fit this computer at once take turns in
// groups that do — the fewest groups, then the fewest compared variants
// apart; labs that fit are one group; a lab too big alone is refused.
func TestGroups(t *testing.T) {
	const G = int64(1) << 30
	wan := need{labs: 4, nodes: 13, data: rowsDataset(Scale{Tables: 20, TableSize: 1_000_000}), memoryAvailable: 22 * G, freeDisk: 72 * G,
		each: []labNeed{
			{variants: []string{"async"}, nodes: 2, memory: 5 * G / 2, files: 21 * G},
			{variants: []string{"semisync"}, nodes: 2, memory: 5 * G / 2, files: 21 * G},
			{variants: []string{"galera1"}, nodes: 3, memory: 15 * G / 4, files: 18 * G},
			{variants: []string{"galera2"}, nodes: 6, memory: 15 * G / 2, files: 37 * G},
		}}
	for _, ln := range wan.each {
		wan.memory, wan.files = wan.memory+ln.memory, wan.files+ln.files
	}
	pairs := [][2]string{{"galera1", "async"}, {"galera2", "semisync"}, {"semisync", "async"}, {"galera2", "galera1"}}
	got, err := wan.groups("seed002-wan", "full", pairs)
	// {async, galera1} + {semisync, galera2} splits 2 pairs, as does
	// {async, semisync} + {galera1, galera2}; {async, semisync, galera1} +
	// {galera2} too; the first found of the fewest is kept
	if err != nil || len(got) != 2 || len(apartPairs(got, pairs)) != 2 {
		t.Fatalf("groups %v (%d pairs apart), %v", got, len(apartPairs(got, pairs)), err)
	}
	for _, g := range got {
		var files int64
		for _, ln := range wan.each {
			if slices.Contains(g, ln.variants[0]) {
				files += ln.files
			}
		}
		if files > wan.freeDisk*9/10 {
			t.Errorf("group %v holds %dG of files", g, files>>30)
		}
	}
	// a pair compared by every check: the split keeps it together
	if got, _ := wan.groups("seed002-wan", "full", [][2]string{{"galera2", "galera1"}, {"semisync", "async"}}); len(apartPairs(got, [][2]string{{"galera2", "galera1"}, {"semisync", "async"}})) != 0 {
		t.Errorf("groups %v split a compared pair", got)
	}
	said := groupsSaid([][]string{{"async", "galera1"}, {"semisync", "galera2"}}, pairs, strings.ToUpper)
	if said != "the labs in 2 groups, one after another, as this computer holds no more at once: ASYNC and GALERA1; then SEMISYNC and GALERA2 (SEMISYNC ÷ ASYNC and GALERA2 ÷ GALERA1 compare rounds run apart, not interleaved)" {
		t.Errorf("said %q", said)
	}
	if groupsSaid([][]string{{"a", "b"}}, pairs, strings.ToUpper) != "" {
		t.Error("one group said")
	}
	// room for all: one group, every variant in the order of the labs
	roomy := wan
	roomy.freeDisk = 500 * G
	if got, err := roomy.groups("x", "full", pairs); err != nil || len(got) != 1 || strings.Join(got[0], ",") != "async,semisync,galera1,galera2" {
		t.Errorf("roomy: %v %v", got, err)
	}
	// --max-memory below the biggest lab: refused, naming it
	tight := wan
	tight.maxMemory = 4 * G
	_, err = tight.groups("seed002-wan", "full", pairs)
	if err == nil || !strings.Contains(err.Error(), "the lab of galera2 alone would need about 7.5G of memory once the data is loaded, where --max-memory allows 4G") ||
		strings.Contains(err.Error(), "the lab of async alone") || !strings.Contains(err.Error(), "so no group of labs at a time fits either") {
		t.Errorf("a lab too big alone: %v", err)
	}
	// more labs than every split is tried for: first fit, in order
	many := need{memoryAvailable: 10 * G, freeDisk: 1000 * G}
	for i := range 10 {
		many.each = append(many.each, labNeed{variants: []string{fmt.Sprint("v", i)}, memory: 2 * G})
		many.memory += 2 * G
	}
	if got, err := many.groups("x", "full", nil); err != nil || len(got) != 3 || len(got[0]) != 4 {
		t.Errorf("ten labs of 2G in 9G: %v %v", got, err)
	}
}

// TestTimeFactor: a sysbench step measuring the scale's time twice over
// (document 004's 10-minute runs beside its 5-minute ones) counts twice
// in the least time; one on another kind, or out of range, is refused.
func TestTimeFactor(t *testing.T) {
	const spec = `
name: factor
title: runs of two lengths
source: x
variants:
  - {name: a, preset: galera3}
steps:
  - {name: five, kind: sysbench, workload: oltp_read_write}
  - {name: ten, kind: sysbench, workload: oltp_read_write, time_factor: FACTOR}
  - {name: commit, kind: commit-latency, time_factor: 2}
scales:
  quick: {runs: 1, threads: [1], time: 300, warmup: 60, tables: 1, table_size: 100, count: 10}
  full: {runs: 1, threads: [1], time: 300, warmup: 60, tables: 1, table_size: 100, count: 10}
`
	_, err := Load([]byte(strings.ReplaceAll(spec, "FACTOR", "101")))
	for _, want := range []string{"steps[1].time_factor: expected 1 to 100 (the scale's time that many times over), got 101", "steps[2].time_factor: "} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in: %v", want, err)
		}
	}
	s, err := Load([]byte(strings.ReplaceAll(strings.ReplaceAll(spec, "FACTOR", "2"), "  - {name: commit, kind: commit-latency, time_factor: 2}\n", "")))
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := s.Scales.Named("full")
	if got, want := Least(s, sc, 1), (300+60+600+60)*time.Second; got != want {
		t.Errorf("least time %v, want %v (the second step measures 600 s)", got, want)
	}
}

// TestBadReadTargets: a read target needs what it names in the variant's
// lab (replicas a replicated cluster with one, lb-balanced a balanced load
// balancer, names that exist) and consistency steps to use it.
func TestBadReadTargets(t *testing.T) {
	_, err := Load([]byte(`
name: bad3
title: bad
source: x
variants:
  - {name: a, preset: galera3, read_target: replicas}
  - {name: b, preset: galera3, read_target: lb-balanced}
  - {name: c, preset: async, read_target: db7}
  - {name: d, preset: async, read_target: replicas}
steps:
  - {name: append, kind: consistency}
  - {name: commit, kind: commit-latency}
scales:
  quick: {runs: 1, time: 1, count: 10}
  full: {runs: 1, time: 1, count: 10}
`))
	if err == nil {
		t.Fatal("a bad study loaded")
	}
	for _, want := range []string{
		"variants[0].read_target: replicas: the variant's lab has no replicated cluster with a replica (variant a)",
		"variants[1].read_target: lb-balanced: the variant's lab has no load balancer in mode balanced (variant b)",
		`variants[2].read_target: `,
		"(or replicas, lb-balanced) (variant c)",
		"variants[3].read_target: applies to consistency steps only; step commit is commit-latency",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%s", want, err)
		}
	}
	if strings.Contains(err.Error(), "variant d)") {
		t.Errorf("async's replicas refused:\n%s", err)
	}
}

// Every step kind is listed once under its own name, and can be found by it
// (the list replaced a registration that refused a name given twice).
func TestStepKindsListedOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range stepKinds {
		if k.name == "" || seen[k.name] || kindNamed(k.name) != k {
			t.Errorf("step kind %q: unnamed, listed twice or not found by its name", k.name)
		}
		seen[k.name] = true
	}
	if len(StepKindNames()) != len(stepKinds) || !sort.StringsAreSorted(StepKindNames()) {
		t.Errorf("StepKindNames %v", StepKindNames())
	}
}

// TestFailureSaid: a retried step records its failure's first line and
// what the load balancers did while it ran, not the lines between.
func TestFailureSaid(t *testing.T) {
	err := "sysbench: exit status 1: errno = 2013\nFATAL: thread 3 failed\nwhile it ran, load balancer lb (times from its start): writes marked db3 down at +41.2 s (Layer4 timeout), shutting its 170 sessions"
	if got, want := failureSaid(err), "sysbench: exit status 1: errno = 2013; while it ran, load balancer lb (times from its start): writes marked db3 down at +41.2 s (Layer4 timeout), shutting its 170 sessions"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got := failureSaid("one line\ntwo"); got != "one line" {
		t.Errorf("without load balancers: %q", got)
	}
}

// A run's report says how fast a core was when it began and ended; a run
// stored before runs measured it says nothing of it.
func TestRunSpeedSaid(t *testing.T) {
	s, _ := Embedded("seed002-gryp")
	res := &Result{Study: s, Scale: "quick", Protocol: s.Scales.Quick, Variants: []string{s.Variants[0].Name},
		Speed: &RunSpeed{Start: facts.Speed{CPUMs: 56.2, WallMs: 60}, End: facts.Speed{CPUMs: 141.0, WallMs: 150}}}
	b, err := HTML(&results.Run{ID: "20261201-000000-abcd"}, res, Context{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "a core ran hadrill&#39;s fixed loop in 56 ms of CPU when the run began, 141 ms when it ended"; !strings.Contains(string(b), want) {
		t.Errorf("the report lacks %q", want)
	}
	res.Speed = nil
	if b, _ = HTML(&results.Run{ID: "20261201-000000-abcd"}, res, Context{}); strings.Contains(string(b), "fixed loop") {
		t.Errorf("a run without a speed")
	}
}

// TestVolumesOver: a data set whose binary log would fill the emulated
// volume it goes on is named with its figures (seed000-openlife's full
// scale filled cloud3's 8G logs volume: its server waited for space and
// its sysbench never ended); one that fits, one without a binary log and
// a node without volumes say nothing.
func TestVolumesOver(t *testing.T) {
	standard, _ := (&spec.Spec{}).DiskNamed("standard")
	node := func(redo string) *plan.Node {
		return &plan.Node{Name: "db1", DataDir: "/v/db1/data/mysql", BinlogDir: "/v/db1/logs/binlog", RedoDir: redo,
			Config: "[mysqld]\ninnodb_log_file_size = 1500M\n",
			Volumes: []plan.Volume{{Name: "data", Class: standard, FS: "xfs", Disks: []string{"d1", "d2"}, Mount: "/v/db1/data"},
				{Name: "logs", Class: standard, FS: "xfs", Disks: []string{"l1"}, Mount: "/v/db1/logs"}}}
	}
	full := rowsDataset(Scale{Tables: 10, TableSize: 2_000_000})
	got := volumesOver(node(""), full, true)
	if len(got) != 1 || !strings.Contains(got[0], "db1's volume logs (1× standard") || !strings.Contains(got[0], "the binary log of loading them 7.32G") {
		t.Errorf("the full scale's binary log on an 8G volume: %q", got)
	}
	if got := volumesOver(node("/v/db1/logs/redo"), rowsDataset(Scale{Tables: 10, TableSize: 1_700_000}), true); len(got) != 1 || !strings.Contains(got[0], "the redo log 1.46G") {
		t.Errorf("the binary log and the redo log together: %q", got)
	}
	for name, c := range map[string]struct {
		n      *plan.Node
		data   dataset
		binlog bool
	}{
		"no binary log":      {node(""), full, false},
		"a smaller data set": {node(""), rowsDataset(Scale{Tables: 1, TableSize: 5_000_000}), true},
		"no volumes":         {&plan.Node{Name: "db1", DataDir: "/d"}, full, true},
	} {
		if got := volumesOver(c.n, c.data, c.binlog); len(got) != 0 {
			t.Errorf("%s: %q", name, got)
		}
	}
}

// TestVolumesOverEveryVariant: a study whose variants' volumes would
// overflow is refused naming every such variant at once, not the first.
func TestVolumesOverEveryVariant(t *testing.T) {
	b, err := os.ReadFile("studies/seed000-openlife.yaml")
	if err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(string(b), "size: 16G", "size: 4G", 1)
	src = strings.Replace(src, "\nsteps:", `
  - name: small
    label: the same on 2G disks
    preset: cloud3
    target: nodes
    patch:
      disks: [{name: small2, iops: 500, throughput: 60M, latency: 2ms, size: 2G}]
      clusters: [{name: db, storage: {volumes: [{name: data, disk: small2}], binlog: data}}]
steps:`, 1)
	s, err := Load([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	_, err = DryRun(s, Options{Scale: "full", Home: t.TempDir()})
	if !hderr.IsUser(err) {
		t.Fatalf("want bad input, got %v", err)
	}
	for _, want := range []string{"study seed000-openlife's variant openlife: db1's volume data (2× standard16", "study seed000-openlife's variant small: db1's volume data (2× small2"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q:\n%v", want, err)
		}
	}
	if _, err := DryRun(s, Options{Scale: "quick", Home: t.TempDir()}); err != nil {
		t.Errorf("quick scale fits: %v", err)
	}
}

// loadOneClaim loads a study of one commit-latency step and one variant
// whose one claim is on it, its fields after the step and variant given.
func loadOneClaim(fields string) (*Study, error) {
	return Load([]byte(`name: x
title: x
source: x
variants: [{name: a, preset: galera3}]
steps: [{name: s, kind: commit-latency}]
scales: {quick: {runs: 1, count: 10}, full: {runs: 1, count: 10}}
expect: [{step: s, variant: a, ` + fields + `}]
`))
}
