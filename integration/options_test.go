package integration

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hadrill/hadrill/internal/facts"
	"github.com/hadrill/hadrill/internal/spec"
	"github.com/hadrill/hadrill/internal/study"
)

// TestOptionsAsTheServerReads (the review's H1): for every spelling of an
// override a hostile or careless spec may use, the durable profile accepts
// it exactly when mariadbd, given the durable settings and then the
// override as hadrill renders them, still flushes the redo log and syncs
// the binary log at every commit, keeps the doublewrite buffer and a
// flushing method (read from `mariadbd --verbose --help`, which parses the
// options and starts nothing).
func TestOptionsAsTheServerReads(t *testing.T) {
	t.Parallel()
	durable, err := os.ReadFile("../internal/engine/mariadb/templates/profiles/durable.cnf")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	line := regexp.MustCompile(`^(innodb-flush-log-at-trx-commit|sync-binlog|innodb-doublewrite|innodb-flush-method)\s+(\S+)$`)
	for _, o := range [][2]string{
		{"skip_innodb_flush_log_at_trx_commit", "1"}, {"skip-sync-binlog", "1"}, {"disable_innodb_doublewrite", "ON"},
		{"enable-innodb-flush-log-at-trx-commit", "2"}, {"enable-sync-binlog", "0"}, {"sync_binl", "0"},
		{"innodb_flush_log_at_tr", "0"}, {"innodb_doublewr", "0"}, {"innodb_flush_method", "nosync"},
		{"innodb_flush_method", "littlesync"}, {"innodb_flush_method", "3"}, {"innodb_flush_method", "O_DIRECT"},
		{"loose-skip-innodb-doublewrite", ""}, {"innodb_doublewrite", "OFF"}, {"sync_binlog", "ON"},
		{"innodb-flush-log-at-trx-commit", "3"}, {"skip-innodb-adaptive-hash-index", ""}, {"loose_sync_binlog", "0"},
		{"skip-sync-binlog", "0"}, {"enable-sync-binlog", "OFF"}, {"sync_binlog", "true"}, {"sync_binlog", "1K"},
		{"innodb_flush_log_at_trx_commit", "true"}, {"innodb_doublewrite", "yes"}, {"innodb_doublewrite", "2"},
	} {
		cnf := filepath.Join(dir, "my.cnf")
		body := "[mariadbd]\n" + string(durable) + "# overrides\n" + o[0]
		if o[1] != "" {
			body += " = " + o[1]
		}
		if err := os.WriteFile(cnf, []byte(body+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out, _ := exec.Command("mariadbd", "--defaults-file="+cnf, "--user=nobody", "--verbose", "--help").CombinedOutput()
		got := map[string]string{}
		for _, l := range strings.Split(string(out), "\n") {
			if m := line.FindStringSubmatch(l); m != nil {
				got[m[1]] = strings.ToLower(m[2])
			}
		}
		if len(got) != 4 { // the server refuses the file: no lab runs with it
			if !strings.Contains(string(out), "[ERROR]") {
				t.Fatalf("%s=%s: mariadbd said %v\n%s", o[0], o[1], got, out)
			}
			t.Logf("%s=%s: the server refuses it (%s)", o[0], o[1], strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0]))
			continue
		}
		keeps := slices.Contains([]string{"1", "3"}, got["innodb-flush-log-at-trx-commit"]) && got["sync-binlog"] == "1" &&
			got["innodb-doublewrite"] == "true" && !slices.Contains([]string{"nosync", "littlesync"}, got["innodb-flush-method"])
		accepted := len(spec.ProfileConflicts("durable", map[string]string{o[0]: o[1]})) == 0
		if keeps != accepted {
			t.Errorf("%s=%s: the server reads %v (keeps durable: %v), hadrill accepts it under durable: %v", o[0], o[1], got, keeps, accepted)
		}
	}
}

// TestShippedOverridesAsTheServerReads: every embedded study's variants'
// config overrides are read by mariadbd as written (nothing refused,
// nothing adjusted), and a spec's that are not are refused by validate,
// every one named with the server's words (the review's L5).
func TestShippedOverridesAsTheServerReads(t *testing.T) {
	t.Parallel()
	n := 0
	for _, name := range study.Names() {
		s, err := study.Embedded(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range s.Variants {
			if v.Preset == "" {
				continue
			}
			sp, err := v.Spec()
			if err != nil {
				t.Fatalf("%s %s: %v", name, v.Name, err)
			}
			for _, c := range sp.Clusters {
				n += len(c.Config)
			}
			if err := facts.Options(context.Background(), sp); err != nil {
				t.Errorf("study %s, variant %s: %v", name, v.Name, err)
			}
		}
	}
	t.Logf("%d overrides of the embedded studies' variants", n)
	e := newEnv(t)
	bad := e.writeSpec("bad.yaml", `clusters: [{name: db, config: {wsrep_sync_wait: "99", max_connections: "1; DROP", bogus: "1", innodb_buffer_pool_instances: "4"}}]`)
	r := e.run("validate", bad)
	for _, want := range []string{"clusters[0].config.bogus: mariadbd refuses or changes it: unknown variable 'bogus=1'",
		"clusters[0].config.max_connections: mariadbd refuses or changes it: Unknown suffix ';'",
		"clusters[0].config.wsrep_sync_wait: mariadbd refuses or changes it: option 'wsrep_sync_wait': unsigned value 99 adjusted to 15"} {
		if r.code != 2 || !strings.Contains(r.stderr, want) {
			t.Errorf("validate: exit %d, want %q in\n%s", r.code, want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "innodb_buffer_pool_instances") {
		t.Errorf("an option the server takes was refused: %s", r.stderr)
	}
}
