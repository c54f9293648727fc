package workload

import (
	"strings"
	"testing"
)

// TestTail: a failed bulk INSERT's error stays in what is said, its
// echoed query cut.
func TestTail(t *testing.T) {
	out := "sysbench 1.0.20\nCreating table 'sbtest1'...\nFATAL: mysql_drv_query() returned error 1114 (The table 'sbtest1' is full) for query 'INSERT INTO sbtest1(k, c, pad) VALUES" +
		strings.Repeat("(1, 2, '3-4-5'),", 5000) + "'\nFATAL: `sysbench.cmdline.call_command' function failed: /usr/share/sysbench/oltp_common.lua:230: db_bulk_insert_next() failed\n"
	got := tail([]byte(out))
	if !strings.Contains(got, "returned error 1114 (The table 'sbtest1' is full)") || !strings.Contains(got, "db_bulk_insert_next() failed") || len(got) > 600 {
		t.Errorf("tail (%d): %s", len(got), got)
	}
}
