package mariadb

import (
	"slices"
	"strings"
	"testing"
	"time"
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

func TestStoppedBecause(t *testing.T) {
	run := "2026-11-26  5:32:48 0 [Note] Starting MariaDB 10.11.14-MariaDB-0+deb12u2-log source revision  server_uid x as process 29533\n" +
		"2026-11-26  5:32:48 0 [Note] mariadbd (server 10.11.14-MariaDB-0+deb12u2-log) starting as process 29533 ...\n"
	for _, c := range []struct{ name, log, want string }{
		{"fsync EIO", run + "2026-11-26  5:33:00 0 [ERROR] InnoDB: File ./ib_logfile0 was not found\n" +
			"2026-11-26  5:33:00 0 [ERROR] [FATAL] InnoDB: fdatasync() returned 5\n261126  5:33:00 [ERROR] mariadbd got signal 6 ;\n",
			"InnoDB: fdatasync() returned 5 (EIO: input/output error)"},
		{"first error when none is fatal", run + "2026-11-26 0 [ERROR] mariadbd: Disk full (./binlog.000001); waiting for someone to free some space... (errno: 28 \"No space left on device\")\n" +
			"2026-11-26 0 [ERROR] mariadbd: Error writing file 'x' (Errcode: 28 \"No space left on device\")\n",
			"mariadbd: Disk full (./binlog.000001); waiting for someone to free some space... (errno: 28 \"No space left on device\") (ENOSPC: no space left on device)"},
		{"errors of an earlier run", "x [ERROR] [FATAL] InnoDB: fdatasync() returned 5\n" + run, ""},
		{"errors of an earlier run, 10.11.19", "x [ERROR] [FATAL] InnoDB: fdatasync() returned 5\n" +
			"2026-11-26 14:41:58 0 [Note] Starting MariaDB 10.11.19-MariaDB-0+deb12u1-log source revision 5843d84 server_uid x= as process 4556\n", ""},
		{"clean shutdown", run + "x [ERROR] WSREP: something\nx [Note] mariadbd: Shutdown complete\n", ""},
		{"killed", run + "x [Note] WSREP: Synchronized with group, ready for connections\n", ""},
		{"write error", run + "x [ERROR] InnoDB: Operating system error number 28 in a file operation.\n", "InnoDB: Operating system error number 28 in a file operation. (ENOSPC: no space left on device)"},
		{"errcode", run + "x [ERROR] mariadbd: Error writing file 'y' (Errcode: 30 \"Read-only file system\")\n", "mariadbd: Error writing file 'y' (Errcode: 30 \"Read-only file system\") (EROFS: read-only file system)"},
	} {
		if got := StoppedBecause(c.log, time.Time{}); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	// the labs review's finding 4: an error of a fault healed since is not
	// why the server stopped later (a kill -9 after it said nothing)
	full := run + "2026-11-26  5:34:00 0 [ERROR] mariadbd: Disk got full writing 'information_schema.(temporary)' (Errcode: 28 \"No space left on device\")\n" +
		"2026-11-26  5:36:10 0 [Note] WSREP: Synchronized with group, ready for connections\n"
	healed := time.Date(2026, 11, 26, 5, 35, 0, 0, time.Local)
	if got := StoppedBecause(full, healed); got != "" {
		t.Errorf("a healed fault's error: %q", got)
	}
	if got := StoppedBecause(full, healed.Add(-2*time.Minute)); !strings.Contains(got, "Disk got full") {
		t.Errorf("an error since the heal: %q", got)
	}
	if at, ok := RunStarted(full); !ok || at.Format("15:04:05") != "05:32:48" {
		t.Errorf("run started %v %v", at, ok)
	}
	// and a server's start that failed is explained by its own run's
	// errors, not an earlier run's (the drill quoted an EIO healed before)
	two := "2026-11-26  5:20:00 0 [ERROR] [FATAL] InnoDB: fdatasync() returned 5\n" + run + "2026-11-26  5:33:00 0 [Note] WSREP: joining\n"
	if got := LogTail(two, 4); strings.Contains(got, "fdatasync") {
		t.Errorf("an earlier run's error in the tail: %q", got)
	}
}

// A node rebuilt by a full state transfer and then crashed before its
// kernel wrote the files back: its table definitions are damaged, and the
// explanation names the transfer; a clean shutdown after the transfer, or
// damage without a transfer, is not explained so.
func TestDamagedAfterSST(t *testing.T) {
	start := func(pid string) string { // as 10.11.19 says it
		return "2026-11-26 13:58:35 0 [Note] Starting MariaDB 10.11.19-MariaDB-0+deb12u1-log source revision 5843d84 server_uid x= as process " + pid + "\n"
	}
	sst := "2026-11-26 13:59:09 3 [Note] WSREP: SST succeeded for position b60b27d3-bbd6-5e17-a1b0-d72896fa0d5b:13225\n"
	damaged := "2026-11-26 13:59:30 0 [ERROR] mariadbd: Incorrect information in file: './mysql/plugin.frm'\n" +
		"2026-11-26 13:59:30 3 [ERROR] mariadbd: Incorrect information in file: './mysql/gtid_slave_pos.frm'\n"
	for _, c := range []struct{ name, log, want string }{
		{"crashed after a transfer", start("1") + sst + start("2") + damaged, "its table definitions are damaged ('./mysql/plugin.frm'): the last thing that wrote them was the full state transfer it received at 2026-11-26 13:59:09"},
		{"a position recovered in between", start("1") + sst + start("2") + damaged + "2026-11-26 13:59:31 0 [Note] mariadbd: Shutdown complete\n" + start("3") + damaged,
			"its table definitions are damaged ('./mysql/plugin.frm'): the last thing that wrote them was the full state transfer it received at 2026-11-26 13:59:09"},
		{"shut down cleanly after it", start("1") + sst + "2026-11-26 14:00:00 0 [Note] mariadbd: Shutdown complete\n" + start("2") + damaged, ""},
		{"no transfer", start("1") + start("2") + damaged, ""},
		{"a transfer, no damage", start("1") + sst + start("2"), ""},
	} {
		got := DamagedAfterSST(c.log)
		if (c.want == "") != (got == "") || !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: %q, want %q…", c.name, got, c.want)
		}
	}
}

// TestVotedOut: the reason a member put to the vote that took it out of
// its cluster, as its log says it; none without the consensus line.
func TestVotedOut(t *testing.T) {
	log := `2026-11-27 19:30:25 2 [ERROR] Slave SQL: Error executing row event: 'Table ` + "`app`.`f`" + ` is corrupted. Please drop the table and recreate.', Internal MariaDB error code: 1877
2026-11-27 19:30:25 0 [Note] WSREP: Member 2(db1) initiates vote on 225af243-9492-5eae-aa65-7b4508f79fca:20,d39b94bb6d14af07:  Table ` + "`app`.`f`" + ` is corrupted. Please drop the table and recreate., Error_code: 1877;
2026-11-27 19:30:25 0 [Note] WSREP: Member 0(db3) responds to vote on 225af243-9492-5eae-aa65-7b4508f79fca:20,0000000000000000: Success
2026-11-27 19:30:25 2 [ERROR] WSREP: Inconsistency detected: Inconsistent by consensus on 225af243-9492-5eae-aa65-7b4508f79fca:20
`
	want := "Table `app`.`f` is corrupted. Please drop the table and recreate., Error_code: 1877"
	if got := VotedOut(log); got != want {
		t.Errorf("voted out: %q, want %q", got, want)
	}
	if got := VotedOut(strings.Split(log, "2026-11-27 19:30:25 2 [ERROR] WSREP: Inconsistency")[0]); got != "" {
		t.Errorf("a vote it won: %q", got)
	}
}

// TestJoinAborted: a join that broke off for a reason a new start may get
// past is named; one started again since, or ended otherwise, is not.
func TestJoinAborted(t *testing.T) {
	for _, c := range []struct{ log, want string }{
		{"2026-11-27 20:50:12 0 [Warning] WSREP: Donor 693a7696-2439 is no longer in the group. State transfer cannot be completed, need to abort.\n",
			"its donor left the group during its state transfer, which Galera then abandons"},
		{"2026-11-27 21:40:03 2 [ERROR] WSREP: Receiving IST failed, node restart required: IST receiver reported failure: 71 (Protocol error)\n",
			"its state transfer broke off, and Galera asks for a restart (Receiving IST failed, node restart required: IST receiver reported failure: 71 (Protocol error))"},
		{"2026-11-27 21:40:03 2 [ERROR] WSREP: Receiving IST failed, node restart required: x\n2026-11-27 21:40:09 0 [Note] Starting MariaDB 10.11.14 source revision\n", ""},
		{"2026-11-28  9:07:52 0 [ERROR] WSREP: ./gcs/src/gcs_group.cpp:gcs_group_handle_join_msg():1225: Will never receive state. Need to abort.\n",
			"its donor reported its state transfer failed, and Galera aborts the joiner (Will never receive state)"},
		{"2026-11-30 16:41:01 0 [ERROR] WSREP: ./gcs/src/gcs_core.cpp:core_handle_state_msg():1085: Failed to handle state message: -131 (State not recoverable)\n",
			"the exchange of states that forms its cluster's membership failed as it joined, and Galera left the group (./gcs/src/gcs_core.cpp:core_handle_state_msg():1085: Failed to handle state message: -131 (State not recoverable))"},
		// ahead of the primary component it joined: a new start does not get past that
		{"2026-11-30 16:41:01 0 [ERROR] WSREP: ./gcs/src/gcs_group.cpp:group_post_state_exchange():443: Reversing history: 117387 -> 117367, this member has applied 20 more events than the primary component.Data loss is possible. Must abort.\n" +
			"2026-11-30 16:41:01 0 [ERROR] WSREP: ./gcs/src/gcs_core.cpp:core_handle_state_msg():1085: Failed to handle state message: -131 (State not recoverable)\n", ""},
		{"2026-11-27 20:50:12 0 [ERROR] InnoDB: something else\n", ""},
	} {
		if got := JoinAborted(c.log); got != c.want {
			t.Errorf("%q: %q, want %q", c.log, got, c.want)
		}
	}
}

// TestReversals: a member that left because the primary component had
// applied fewer write sets than it had is found with its time; one
// started again since has no reversal in its last run.
func TestReversals(t *testing.T) {
	log := "2026-11-27 22:38:21 0 [Note] WSREP: Full re-merge of primary 3c192031 found: 2 of 2.\n" +
		"2026-11-27 22:38:21 0 [ERROR] WSREP: ./gcs/src/gcs_group.cpp:group_post_state_exchange():453: Reversing history: 117387 -> 117367, this member has applied 20 more events than the primary component.Data loss is possible. Must abort.\n"
	want := "2026-11-27 22:38:21 Reversing history: 117387 -> 117367, this member has applied 20 more events than the primary component. Data loss is possible."
	if got := Reversals(log); len(got) != 1 || got[0] != want {
		t.Errorf("reversals %q, want [%q]", got, want)
	}
	if got := Reversed(log); got != want {
		t.Errorf("reversed %q", got)
	}
	if got := Reversed(log + "2026-11-27 22:38:40 0 [Note] Starting MariaDB 10.11.14 source revision\n"); got != "" {
		t.Errorf("started again since: %q", got)
	}
}

// TestSemiSyncFallbacks: a timed-out acknowledgement opens a fallback
// (the timeouts after it, while still off, do not open another), the
// switch back on or a restart closes it, one still open has no end.
func TestSemiSyncFallbacks(t *testing.T) {
	const (
		timeout = "2026-11-28 13:47:28 1514 [Warning] Timeout waiting for reply of binlog (file: binlog.000002, pos: 8480), semi-sync up to file binlog.000002, position 8100.\n"
		off     = "2026-11-28 13:47:28 1514 [Note] Semi-sync replication switched OFF.\n"
		again   = "2026-11-28 13:47:31 1520 [Warning] Timeout waiting for reply of binlog (file: binlog.000002, pos: 9000), semi-sync up to file binlog.000002, position 8100.\n"
		on      = "2026-11-28 13:47:35 41 [Note] Semi-sync replication switched ON at (binlog.000002, 9400)\n"
		start   = "2026-11-28 13:48:02 0 [Note] Starting MariaDB 10.11.6-MariaDB-0+deb12u1-log source revision  as process 7360\n"
		byHand  = "2026-11-28 13:46:00 9 [Note] Semi-sync replication switched OFF.\n"
	)
	for _, c := range []struct {
		name, log string
		want      []string
	}{
		{"none", byHand + on, nil},
		{"off, then on", timeout + off + again + on, []string{"from 2026-11-28 13:47:28 to 2026-11-28 13:47:35"}},
		{"still off", timeout + off, []string{"from 2026-11-28 13:47:28 on"}},
		{"ended by a restart", timeout + off + start, []string{"from 2026-11-28 13:47:28 until the server started again at 2026-11-28 13:48:02"}},
		{"twice", timeout + on + again, []string{"from 2026-11-28 13:47:28 to 2026-11-28 13:47:35", "from 2026-11-28 13:47:31 on"}},
	} {
		var got []string
		for _, f := range SemiSyncFallbacks(c.log) {
			got = append(got, f.Text())
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestDonatingTo(t *testing.T) {
	const (
		start  = "2026-11-28  1:40:00 0 [Note] Starting MariaDB 10.11.6-MariaDB-0+deb12u1-log source revision  as process 7360\n"
		chosen = "2026-11-28  1:41:29 0 [Note] WSREP: Member 2.0 (db3) requested state transfer from '*any*'. Selected 0.0 (db1)(SYNCED) as donor.\n"
		other  = "2026-11-28  1:41:29 0 [Note] WSREP: Member 2.0 (db3) requested state transfer from '*any*'. Selected 1.0 (db2)(SYNCED) as donor.\n"
		none   = "2026-11-28  1:03:05 0 [Note] WSREP: Member 1.0 (db2) requested state transfer from '*any*', but it is impossible to select State Transfer donor: No donor candidates temporarily available in suitable state\n"
		done   = "2026-11-28  1:41:41 0 [Note] WSREP: 0.0 (db1): State transfer to 2.0 (db3) complete.\n"
		failed = "2026-11-28  1:41:41 0 [Note] WSREP: 0.0 (db1): State transfer to 2.0 (db3) failed: -32 (Broken pipe)\n"
	)
	for _, c := range []struct {
		name, log, want string
	}{
		{"donating", start + chosen + none, "db3"},
		{"another member donates", start + other, ""},
		{"finished", start + chosen + done, ""},
		{"failed", start + chosen + failed, ""},
		{"an earlier run's", chosen + start, ""},
		{"nothing", start + none, ""},
	} {
		if got := DonatingTo(c.log, "db1"); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
