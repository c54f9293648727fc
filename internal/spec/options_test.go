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
