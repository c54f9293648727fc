package mariadb

import (
	"strings"
	"testing"
)

// TestLogTailNamesAFullDisk: the first error lines are kept, and error 28
// is said to be a full file system (mariadb-install-db's last lines name
// only where to report bugs).
func TestLogTailNamesAFullDisk(t *testing.T) {
	out := `Installing MariaDB/MySQL system tables in '/x/d' ...
2026-11-25 12:51:37 0 [ERROR] InnoDB: preallocating 67108864 bytes for file ./ib_logfile101 failed with error 28
2026-11-25 12:51:37 0 [ERROR] InnoDB: Cannot set log file ./ib_logfile101 size to 64.000MiB
2026-11-25 12:51:37 0 [ERROR] Aborting
Please check all of the above before submitting a bug report
at https://mariadb.org/jira`
	got := LogTail(out, 5)
	if !strings.HasPrefix(got, "2026-11-25 12:51:37 0 [ERROR] InnoDB: preallocating") || !strings.Contains(got, "ENOSPC: the file system holding the node's files is full") ||
		strings.Contains(got, "jira") {
		t.Errorf("%s", got)
	}
	if got := LogTail("one\ntwo\nthree", 2); got != "two\nthree" {
		t.Errorf("no errors: %q", got)
	}
}

func TestIOError(t *testing.T) {
	said := "2026-11-25 12:31:42 0 [Warning] Could not increase number of max_open_files\n" +
		"2026-11-25 12:31:42 0 [ERROR] mariadbd: Can't sync file './binlog.index' to disk (Errcode: 5 \"Input/output error\")\n[ERROR] Aborting"
	if got := IOError(said); got != "2026-11-25 12:31:42 0 [ERROR] mariadbd: Can't sync file './binlog.index' to disk (Errcode: 5 \"Input/output error\")" {
		t.Errorf("%q", got)
	}
	if got := IOError("[ERROR] Errcode: 51 something\n[ERROR] Aborting"); got != "" {
		t.Errorf("not an IO error: %q", got)
	}
}
