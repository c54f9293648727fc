package study

import (
	"strings"
	"testing"
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
steps:
  - {name: s, kind: sysbench, workload: nope}
  - {name: c, kind: dd}
scales:
  quick: {runs: 0}
  full: {runs: 1, threads: [0], time: 10, tables: 1, table_size: 10}
reference:
  - {step: zz, variant: q, metric: tps@32, value: 1}
expect:
  - {step: s, variant: a, metric: nope}
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
		`steps[0].workload: expected one of`,
		`steps[1].kind: expected one of bulk-replication, commit-latency, disk, slap, sysbench, got "dd"`,
		"scales.quick.runs: expected 1 to 100 rounds, got 0",
		"scales.quick.threads: at least one thread count is required (step s)",
		"scales.full.threads: expected thread counts from 1 to 4096, got 0",
		`reference[0].step: unknown step "zz"`,
		`reference[0].variant: unknown variant "q"`,
		`expect[0].metric: step s yields`,
		"expect[0]: expected min, max or both",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%s", want, err)
		}
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
