package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestBadInputExitsTwoAndCreatesNothing(t *testing.T) {
	t.Parallel()
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
		// config overrides judged as the server reads option names
		{"galera switched off", []string{"validate", write("j.yaml", "clusters:\n  - name: db\n    config: {wsrep-on: 0, WSREP_PROVIDER: none, loose_wsrep_on: 0, skip-log-bin: 1, skip_grant_tables: 1, init_file: x.sql, plugin_load_add: x, \"!include\": /etc/x}\n")},
			[]string{"config.wsrep-on: would switch Galera off", "config.WSREP_PROVIDER: would switch Galera off", "config.loose_wsrep_on", "config.skip-log-bin",
				"config.skip_grant_tables: would disable authentication", "config.init_file", "config.plugin_load_add", "config.!include: is an option-file directive"}},
		{"path outside the lab", []string{"up", "-f", write("k.yaml", "clusters:\n  - name: db\n    config: {general_log_file: /etc/passwd}\n")}, []string{"outside the node's directory"}},
		// bounds
		{"NaN loss", []string{"validate", write("l.yaml", "regions: [{name: a}, {name: b}]\nlinks: [{between: [a, b], rtt: 250ms, jitter: 1s, loss: .nan, bandwidth: 99999999999gbit}]\nclusters:\n  - {name: db, regions: [a, b], nodes: 2}\n")},
			[]string{"links[0].loss: expected a percentage from 0 to 100, got NaN", "links[0].jitter: must be less than the round trip", "links[0].bandwidth: expected a rate from 8kbit to 100gbit"}},
		{"huge description", []string{"validate", write("m.yaml", "description: "+strings.Repeat("x", 5000)+"\nclusters:\n  - name: db\n")}, []string{"description: at most 4096 bytes"}},
		// the same name rule in validate and up
		{"spec name", []string{"validate", write("n.yaml", "name: ADV\nclusters:\n  - name: db\n")}, []string{`name: "ADV" is not a valid lab name`}},
		{"file name as lab name", []string{"validate", write("advé.yaml", "clusters:\n  - name: db\n")}, []string{`would be named "advé" after the file`}},
		{"file name as lab name, up", []string{"up", "-f", write("ADV.yaml", "clusters:\n  - name: db\n")}, []string{`would be named "ADV" after the file`}},
		{"bad --wait", []string{"status", "--wait", "-1s"}, []string{"--wait: expected"}},
		// engines Galera does not replicate, profiles whose promise is broken
		{"myisam in galera", []string{"up", "-f", write("o.yaml", "clusters:\n  - name: db\n    profile: durable\n    config: {default_storage_engine: MyISAM, enforce_storage_engine: Aria, innodb_flush_log_at_trx_commit: 0, sync_binlog: 0}\n")},
			[]string{"config.default_storage_engine: a Galera cluster replicates InnoDB tables only", "config.enforce_storage_engine:",
				"config.innodb_flush_log_at_trx_commit: profile durable flushes the redo log at every commit", "config.sync_binlog: profile durable syncs the binary log"}},
		// disks that could never fit this machine's disk
		{"disks larger than the machine", []string{"up", "-f", write("p.yaml", "disks: [{name: huge, iops: 100, throughput: 10M, latency: 1ms, size: 1T}]\n"+
			"clusters:\n  - {name: db, nodes: 3, storage: {volumes: [{name: data, disk: huge, count: 8}, {name: logs, disk: huge, count: 8}]}}\n")},
			[]string{"storage (the disks' sizes): 48 disks of 48T in all", "free on the file system holding", "may promise up to 4× the free space"}},
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
	// a 2-node Galera cluster without an arbitrator is allowed, with a warning
	if r := e.run("validate", write("two.yaml", "clusters:\n  - name: db\n    nodes: 2\n")); r.code != 0 || !strings.Contains(r.stderr, "warning: clusters[0]: a 2-node Galera cluster without an arbitrator") {
		t.Errorf("2-node galera: exit %d, want 0 with a warning\n%s", r.code, r.stderr)
	}
	if r := e.run("down", "--name", "itnothing"); r.code != 0 {
		t.Errorf("down of a lab that does not exist: exit %d (want 0: down is idempotent)\n%s", r.code, r.stderr)
	}
}

// TestHomeUnusable: a home too small for a lab, and a read-only one, are
// bad input naming --home (exit 2), and nothing is made.
func TestHomeUnusable(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir, err := os.MkdirTemp("/tmp", "hdit-small-")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=30M", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run(); os.Remove(dir) })
	small := e.run("--home", dir, "up", "--name", "itsmall")
	if small.code != 2 || !strings.Contains(small.stderr, "--home: 30M free on the file system holding "+dir+"; a lab of 3 node(s) needs about 1G") {
		t.Errorf("a home too small: exit %d\n%s", small.code, small.stderr)
	}
	if out, err := exec.Command("mount", "-o", "remount,ro", dir).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v %s", err, out)
	}
	ro := e.run("--home", dir, "up", "--name", "itsmall")
	if ro.code != 2 || !strings.Contains(ro.stderr, "--home: "+dir+" is not writable") {
		t.Errorf("a read-only home: exit %d\n%s", ro.code, ro.stderr)
	}
	if left, _ := os.ReadDir(filepath.Join(dir, "labs")); len(left) > 1 {
		t.Errorf("left in the home: %v", left)
	}
}
