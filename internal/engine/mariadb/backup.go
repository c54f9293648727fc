package mariadb

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// BackupArgv is mariabackup's command line for a full backup of the server
// behind socket (as user, unix_socket authentication), streamed to its
// standard output (mbstream: what ExtractArgv unpacks), its temporary
// files in tmpdir. galera adds the cluster position
// (xtrabackup_galera_info).
func BackupArgv(socket, user, tmpdir string, galera bool) []string {
	argv := []string{"mariabackup", "--backup", "--stream=mbstream", "--tmpdir=" + tmpdir, "--socket=" + socket, "--user=" + user}
	if galera {
		argv = append(argv, "--galera-info")
	}
	return argv
}

// ExtractArgv unpacks a backup stream (its standard input) into dir.
func ExtractArgv(dir string) []string { return []string{"mbstream", "-x", "-C", dir} }

// Prepare makes a backup consistent (applies its redo log), ready to start a server on.
func Prepare(ctx context.Context, dir, logFile string) error {
	return RunLogged(ctx, PrepareArgv(dir), logFile)
}

// PrepareArgv prepares the backup in dir.
func PrepareArgv(dir string) []string {
	return []string{"mariabackup", "--prepare", "--target-dir=" + dir}
}

// RunLogged runs argv (already wrapped for its host), appending its output
// to logFile; on failure the error carries the output's last lines.
func RunLogged(ctx context.Context, argv []string, logFile string) error {
	f, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return err
	}
	defer f.Close()
	var buf bytes.Buffer
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = io.MultiWriter(f, &buf), io.MultiWriter(f, &buf)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w\n%s", argv[0], err, tail(buf.String(), 5))
	}
	return nil
}

// BinlogInfo is where a backup stands in its server's binary log.
type BinlogInfo struct {
	File string `json:"binlog_file"`
	Pos  int64  `json:"binlog_pos"`
	GTID string `json:"gtid"`
}

// ParseBinlogInfo parses mariabackup's xtrabackup_binlog_info: "file<TAB>pos<TAB>gtid".
func ParseBinlogInfo(text string) (BinlogInfo, error) {
	f := strings.Fields(strings.TrimSpace(text))
	if len(f) < 2 {
		return BinlogInfo{}, fmt.Errorf("xtrabackup_binlog_info: expected \"file position [gtid]\", got %q", strings.TrimSpace(text))
	}
	var b BinlogInfo
	b.File = f[0]
	if _, err := fmt.Sscan(f[1], &b.Pos); err != nil {
		return BinlogInfo{}, fmt.Errorf("xtrabackup_binlog_info: position %q: %w", f[1], err)
	}
	if len(f) > 2 {
		b.GTID = f[2]
	}
	return b, nil
}

var eventHeader = regexp.MustCompile(`^#(\d{6})\s+(\d{1,2}:\d{2}:\d{2})\s+server id\s`)

var gtidEvent = regexp.MustCompile(`\tGTID (\d+)-(\d+)-(\d+)`)

// BinlogEnd is where a series of binary log files ends: the time of the
// last event (one-second resolution, local time) and the last GTID of each
// domain, as mariadb-binlog prints them.
type BinlogEnd struct {
	Time  time.Time
	GTIDs map[string]string // domain → last GTID "d-s-n"
}

// ScanBinlogs reads binary log files (in order) with mariadb-binlog.
func ScanBinlogs(ctx context.Context, files ...string) (BinlogEnd, error) {
	out, err := exec.CommandContext(ctx, "mariadb-binlog", files...).Output()
	if err != nil && len(out) == 0 {
		return BinlogEnd{}, fmt.Errorf("mariadb-binlog %s: %w", filepath.Base(files[0]), err)
	}
	return scanBinlogs(out)
}

func scanBinlogs(out []byte) (BinlogEnd, error) {
	end := BinlogEnd{GTIDs: map[string]string{}}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		m := eventHeader.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if t, err := time.ParseInLocation("060102 15:04:05", m[1]+" "+pad(m[2]), time.Local); err == nil {
			end.Time = t
		}
		if g := gtidEvent.FindStringSubmatch(line); g != nil {
			end.GTIDs[g[1]] = g[1] + "-" + g[2] + "-" + g[3]
		}
	}
	if end.Time.IsZero() {
		return end, fmt.Errorf("no events")
	}
	return end, nil
}

func pad(hms string) string {
	if len(hms) == 7 {
		return "0" + hms
	}
	return hms
}
