package mariadb

import (
	"testing"
	"time"
)

func TestParseBinlogInfo(t *testing.T) {
	b, err := ParseBinlogInfo("binlog.000002\t1234\t1-100-57,101-100-3\n")
	if err != nil || b.File != "binlog.000002" || b.Pos != 1234 || b.GTID != "1-100-57,101-100-3" {
		t.Fatalf("%+v %v", b, err)
	}
	if b, err := ParseBinlogInfo("binlog.000001\t329\n"); err != nil || b.GTID != "" {
		t.Fatalf("no gtid: %+v %v", b, err)
	}
	for _, bad := range []string{"", "binlog.000001", "binlog.000001 x"} {
		if _, err := ParseBinlogInfo(bad); err == nil {
			t.Fatalf("%q parsed", bad)
		}
	}
}

func TestLastEventTime(t *testing.T) {
	out := []byte(`# at 4
#261122  5:29:24 server id 101  end_log_pos 256 CRC32 0x270e889e 	Start: binlog v 4
# at 285
#261122 15:30:01 server id 101  end_log_pos 367 CRC32 0xb947e47f 	GTID 0-101-1 ddl
/*!*/;
# End of log file
`)
	got, err := scanBinlogs(out)
	want := time.Date(2026, 11, 22, 15, 30, 1, 0, time.Local)
	if err != nil || !got.Time.Equal(want) || got.GTIDs["0"] != "0-101-1" || len(got.GTIDs) != 1 {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := scanBinlogs([]byte("nothing")); err == nil {
		t.Fatal("no events must fail")
	}
}
