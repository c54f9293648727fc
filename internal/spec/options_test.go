package spec

import (
	"strings"
	"testing"
)

func TestCheckOption(t *testing.T) {
	for _, c := range []struct {
		key, value string
		want       string // a fragment of the problem; "" = accepted
	}{
		{"innodb_flush_method", "O_DIRECT", ""},
		{"innodb-buffer-pool-size", "256M", ""},
		{"wsrep_provider_options", "gcache.size=128M; evs.suspect_timeout=PT2S", ""},
		{"innodb_data_file_path", "ibdata1:12M:autoextend", ""},
		{"general_log_file", "general.log", ""},
		{"loose_innodb_foo", "1", ""},
		// every spelling the server reads as a refused option
		{"wsrep_on", "0", "switch Galera off"},
		{"wsrep-on", "0", "reads \"wsrep-on\" as wsrep_on"},
		{"WSREP_PROVIDER", "none", "as wsrep_provider"},
		{"wsrep-provider", "none", "as wsrep_provider"},
		{"loose_wsrep_on", "OFF", "as wsrep_on"},
		{"skip-log-bin", "", "as log_bin"},
		{"disable_log_bin", "", "as log_bin"},
		{"skip_grant_tables", "", "disable authentication"},
		{"skip-networking", "", "off the lab's network"},
		{"init_file", "/tmp/x.sql", "run code or SQL"},
		{"plugin_load_add", "auth_ed25519", "run code or SQL"},
		{"plugin-load", "x.so", "run code or SQL"},
		{"!include", "/etc/passwd", "option-file directive"},
		{"!includedir", "/etc", "option-file directive"},
		{"maximum-wsrep_on", "0", "as wsrep_on"},
		{"wsrep_new_cluster", "1", "start-up action"},
		{"server-id", "7", "managed by hadrill"},
		{"datadir", "/var/lib/mysql", "managed by hadrill"},
		{"wsrep_sst_meth", "rsync", "abbreviated option name"},
		{"bind", "0.0.0.0", "abbreviated option name"},
		// nothing written outside the lab
		{"general_log_file", "/etc/passwd", "outside the node's directory"},
		{"tmpdir", "../../x", "outside the node's directory"},
		{"wsrep_provider_options", "gcache.dir=/root", "outside the node's directory"},
		{"bad key", "1", "not a valid my.cnf option name"},
		{"sql_mode", "a\nb", "one line"},
	} {
		got := CheckOption(c.key, c.value)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("CheckOption(%q, %q) = %q, want %q", c.key, c.value, got, c.want)
		}
	}
}

// TestServerReads (the review's H1): an override is read as the server
// reads it: skip-/disable- set the option off whatever the value, enable-
// on, an abbreviation is the option it abbreviates; the durable and
// relaxed profiles refuse every spelling that breaks their promise
// (integration's TestOptionsAsTheServerReads holds these against
// mariadbd itself).
func TestServerReads(t *testing.T) {
	for _, c := range []struct {
		key, value, option, val string
		sets                    bool
	}{
		{"skip_innodb_flush_log_at_trx_commit", "1", "innodb_flush_log_at_trx_commit", "0", true},
		{"skip-sync-binlog", "1", "sync_binlog", "0", true},
		{"disable_innodb_doublewrite", "ON", "innodb_doublewrite", "0", true},
		{"enable-innodb-flush-log-at-trx-commit", "2", "innodb_flush_log_at_trx_commit", "1", true},
		{"loose-skip-innodb-doublewrite", "", "innodb_doublewrite", "0", true},
		{"skip-sync-binlog", "0", "sync_binlog", "1", true}, // a skip of 0 sets it on, as the server does
		{"enable-sync-binlog", "0", "sync_binlog", "0", true},
		{"skip-loose-innodb-doublewrite", "", "loose_innodb_doublewrite", "0", true}, // not an option the server knows
		{"maximum-sync-binlog", "0", "sync_binlog", "0", false},
		{"Sync-Binlog", "ON", "sync_binlog", "ON", true},
	} {
		option, val, sets := ServerReads(c.key, c.value)
		if option != c.option || val != c.val || sets != c.sets {
			t.Errorf("ServerReads(%q, %q) = %s, %s, %v", c.key, c.value, option, val, sets)
		}
	}
	for _, c := range []struct {
		profile, key, value, want string
	}{
		{"durable", "skip_innodb_flush_log_at_trx_commit", "1", "the server reads skip_innodb_flush_log_at_trx_commit=1 as innodb_flush_log_at_trx_commit=0"},
		{"durable", "skip-sync-binlog", "1", "as sync_binlog=0"},
		{"durable", "disable_innodb_doublewrite", "ON", "as innodb_doublewrite=0"},
		{"durable", "sync_binl", "0", "as sync_binlog=0"},
		{"durable", "innodb_flush_log_at_tr", "0", "as innodb_flush_log_at_trx_commit=0"},
		{"durable", "innodb_doublewr", "0", "as innodb_doublewrite=0"},
		{"durable", "innodb_flush_method", "nosync", "littlesync and nosync skip it"},
		{"durable", "innodb_flush_method", "3", "littlesync and nosync skip it"},
		{"relaxed", "enable_innodb_flush_log_at_trx_commit", "2", "as innodb_flush_log_at_trx_commit=1"},
		{"durable", "innodb_flush_method", "O_DIRECT", ""},
		{"durable", "enable-sync-binlog", "0", "as sync_binlog=0"},    // enable- of 0 sets 0
		{"durable", "enable-sync-binlog", "OFF", ""},                  // and of anything else 1
		{"durable", "sync_binlog", "true", "sync_binlog=true breaks"}, // the server reads a number's "true" as 0
		{"durable", "sync_binlog", "1K", "sync_binlog=1K breaks"},
		{"durable", "innodb_doublewrite", "yes", ""},
		{"durable", "skip-innodb-adaptive-hash-index", "", ""},
	} {
		got := ProfileConflicts(c.profile, map[string]string{c.key: c.value})[c.key]
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s, %s=%s: %q, want %q", c.profile, c.key, c.value, got, c.want)
		}
	}
	if got := SameOption(map[string]string{"sync_binlog": "1", "sync-binlog": "0", "skip-sync-binlog": "", "max_connections": "9"}); len(got) != 2 || got["sync_binlog"] != "skip-sync-binlog" || got["sync-binlog"] != "skip-sync-binlog" {
		t.Errorf("one option under three spellings: %v", got)
	}
	if why := CheckOption("maximum-max-connections", "50"); !strings.Contains(why, "refuses it in an option file") {
		t.Errorf("maximum-: %q", why)
	}
}

// TestProviderOptions (M6, L5): what a cluster's provider options may not
// say (what hadrill sets for a reason the spec states elsewhere), and what
// they may but an operator should hear of.
func TestProviderOptions(t *testing.T) {
	_, err := Load([]byte(`
regions: [{name: east}, {name: west}]
links: [{between: [east, west], rtt: 10ms}]
clusters: [{name: db, nodes: 4, regions: [east, west], failure_detection: fast,
  config: {wsrep_provider_options: "gcache.size=128M; evs.suspect_timeout=PT5S; gmcast.segment=0; ist.recv_addr=1.2.3.4; oops"}}]`))
	for _, want := range []string{
		"expected name=value options separated by semicolons, got \"oops\"",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want %q in %v", want, err)
		}
	}
	_, err = Load([]byte(`
regions: [{name: east}, {name: west}]
links: [{between: [east, west], rtt: 10ms}]
clusters: [{name: db, nodes: 4, regions: [east, west], failure_detection: fast,
  config: {wsrep_provider_options: "gcache.size=128M; evs.suspect_timeout=PT5S; gmcast.segment=0; ist.recv_addr=1.2.3.4:4568"}}]`))
	for _, want := range []string{
		"clusters[0].config.wsrep_provider_options: evs.suspect_timeout: failure_detection: fast sets it",
		"clusters[0].config.wsrep_provider_options: gmcast.segment: hadrill places each region's nodes in a segment of their own",
		"clusters[0].config.wsrep_provider_options: ist.recv_addr: hadrill sets each node's listening addresses",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want %q in %v", want, err)
		}
	}
	if err != nil && strings.Contains(err.Error(), "gcache.size") {
		t.Errorf("gcache.size may be given: %v", err)
	}
	_, err = Load([]byte(`clusters: [{name: db, nodes: 3, failure_detection: wan, config: {wsrep_provider_options: "evs.keepalive_period=PT1S"}}]`))
	if want := "evs.keepalive_period: failure_detection: wan sets it (a silent member suspected after 1.5 s)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("want %q in %v", want, err)
	}
	_, err = Load([]byte(`clusters: [{name: db, nodes: 3, failure_detection: aggressive, config: {wsrep_provider_options: "evs.suspect_timeout=PT1S"}}]`))
	if want := "evs.suspect_timeout: failure_detection: aggressive sets it (a silent member suspected after 0.3 s)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("want %q in %v", want, err)
	}
	_, err = Load([]byte(`clusters: [{name: db, nodes: 3, failure_detection: slow}]`))
	if want := "clusters[0].failure_detection"; err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "wan") {
		t.Errorf("want %q naming wan in %v", want, err)
	}
	s, err := Load([]byte(`clusters: [{name: db, config: {wsrep_provider_options: "evs.suspect_timeout=PT2S; pc.ignore_sb=true"}}]`))
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(Warnings(s), "\n"); !strings.Contains(w, "pc.ignore_sb=true lets the cluster's parts take writes without a majority (split brain)") {
		t.Errorf("warnings: %s", w)
	}
	if got := MergeProviderOptions("a=1;b=2", []ProviderOption{{"B", "3"}, {"c", "4"}}); got != "a=1;b=3;c=4" {
		t.Errorf("merge: %s", got)
	}
}
