package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBadInputExitsTwoAndCreatesNothing(t *testing.T) {
	e := newEnv(t)
	write := e.writeSpec
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"malformed yaml", []string{"up", "-f", write("a.yaml", "clusters: [\n")}, []string{"malformed YAML"}},
		{"unknown field", []string{"up", "-f", write("b.yaml", "clusters:\n  - name: db\n    nodez: 3\n")}, []string{"clusters[0].nodez: unknown field"}},
		{"wrong type", []string{"validate", write("c.yaml", "clusters:\n  - name: db\n    nodes: many\n")}, []string{`clusters[0].nodes: expected an integer, got "many"`}},
		{"zero nodes", []string{"up", "-f", write("d.yaml", "clusters:\n  - name: db\n    nodes: 0\n")}, []string{"clusters[0].nodes: must be ≥ 1, got 0"}},
		{"negative nodes", []string{"up", "-f", write("e.yaml", "clusters:\n  - name: db\n    nodes: -3\n")}, []string{"clusters[0].nodes: must be ≥ 1, got -3"}},
		{"duplicate names", []string{"up", "-f", write("f.yaml", "clusters:\n  - name: db\n  - name: db\n")}, []string{`clusters[1].name: duplicate name "db"`}},
		{"address outside lab range", []string{"up", "-f", write("g.yaml", "network: 192.168.1.0/24\nclusters:\n  - name: db\n")}, []string{"network: 192.168.1.0/24 is outside the lab range 198.18.0.0/15"}},
		{"node address outside", []string{"up", "-f", write("h.yaml", "clusters:\n  - name: db\n    nodes: 1\n    addresses: [10.0.0.1]\n")}, []string{"clusters[0].addresses[0]: 10.0.0.1 is outside"}},
		{"every problem at once", []string{"validate", write("i.yaml", "clusters:\n  - name: db\n    nodes: 0\n    bogus: 1\n  - name: x\n    kind: ndb\n    profile: fast\n")},
			[]string{"clusters[0].bogus: unknown field", "clusters[0].nodes", "clusters[1].kind", "clusters[1].profile"}},
		{"unknown preset", []string{"up", "--preset", "galera9"}, []string{`--preset: unknown preset "galera9"`}},
		{"bad lab name", []string{"up", "--name", "Bad_Name"}, []string{`--name: "Bad_Name" is not a valid lab name`}},
		{"preset and file", []string{"up", "--preset", "galera3", "-f", "x.yaml"}, []string{"--preset, --file: give one of them"}},
		{"missing file", []string{"up", "-f", "/nonexistent/x.yaml"}, []string{"--file: cannot read"}},
		{"bad output", []string{"status", "-o", "xml"}, []string{"--output: expected text or json"}},
		{"no lab", []string{"status", "--name", "itnone"}, []string{`--name: no lab "itnone"`}},
		{"unknown flag", []string{"up", "--nodes", "3"}, []string{"unknown flag: --nodes"}},
		{"unknown command", []string{"deploy"}, []string{`unknown command "deploy"`}},
		{"stop without nodes", []string{"stop"}, []string{"stop: name one or more nodes, or give --all"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.run(c.args...)
			if r.code != 2 {
				t.Errorf("exit %d, want 2\n%s%s", r.code, r.stdout, r.stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr does not name %q:\n%s", w, r.stderr)
				}
			}
			if labs, _ := os.ReadDir(filepath.Join(e.home, "labs")); len(labs) > 0 {
				t.Errorf("bad input created %s", labs[0].Name())
			}
		})
	}
	if r := e.run("down", "--name", "itnothing"); r.code != 0 {
		t.Errorf("down of a lab that does not exist: exit %d (want 0: down is idempotent)\n%s", r.code, r.stderr)
	}
}
