package results

import (
	"fmt"
	"testing"
)

func TestDifferences(t *testing.T) {
	a := Settings(`# a comment
[mariadbd]
datadir = /h/labs/stasync/nodes/db1/data
bind-address = 198.19.40.11
innodb_flush_log_at_trx_commit = 2
log_bin = /h/labs/stasync/nodes/db1/data/binlog
[galera]
wsrep_on = OFF
`, "stasync")
	b := Settings(`[mariadbd]
datadir = /h/labs/stgalera1/nodes/db1/data
bind_address = 198.19.77.11
innodb_flush_log_at_trx_commit = 2
[galera]
wsrep_on = ON
wsrep_slave_threads = 16
`, "stgalera1")
	got := fmt.Sprint(Differences(map[string]map[string]string{"async": a, "galera1": b}))
	want := "[{galera.wsrep_on map[async:OFF galera1:ON]} {galera.wsrep_slave_threads map[async: galera1:16]} {mariadbd.log_bin map[async:/h/labs/<lab>/nodes/db1/data/binlog galera1:]}]"
	if got != want {
		t.Errorf("differences:\n got %s\nwant %s", got, want)
	}
}
