package mariadb

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// InstallDB initialises a fresh datadir with mariadb-install-db on this
// computer (see InstallArgs).
func InstallDB(ctx context.Context, datadir, osUser, redoLog string) error {
	argv := InstallArgs(datadir, osUser, osUser == "root", redoLog)
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("mariadb-install-db: %v: %s", err, LogTail(string(out), 5))
	}
	return nil
}

// InstallArgs is the mariadb-install-db command that initialises datadir.
// socketUser is the account that administers the server over its unix
// socket: root@localhost (and socketUser@localhost when it is not root)
// authenticate by unix socket, so no password exists. asRoot: the server
// runs as root (the install runs as root too). The bootstrap server's
// temporary files go beside the datadir, not into the machine's shared
// tmpdir: a server starting removes every "#sql" file it finds in its
// tmpdir, so installs running at once on one machine (hosts of a lab
// sharing it) removed each other's temporary tables ("Could not remove
// temporary table", then "Aborting").
func InstallArgs(datadir, socketUser string, asRoot bool, redoLog string) []string {
	argv := []string{"mariadb-install-db", "--no-defaults", "--datadir=" + datadir, "--auth-root-authentication-method=socket",
		"--skip-test-db", "--skip-name-resolve", "--innodb-log-file-size=" + redoLog,
		"--innodb-data-file-path=ibdata1:12M:autoextend", "--tmpdir=" + filepath.Dir(filepath.Clean(datadir))}
	if asRoot {
		argv = append(argv, "--user=root")
	}
	if socketUser != "root" {
		argv = append(argv, "--auth-root-socket-user="+socketUser)
	}
	return argv
}

// CopyDatadir copies a datadir (reflinks where the filesystem can).
func CopyDatadir(ctx context.Context, src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, "cp", "-a", "--reflink=auto", src, dst).CombinedOutput()
	if err != nil {
		return fmt.Errorf("copy datadir: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// PlaceLogs moves a copied datadir's redo log into redoDir and makes
// binlogDir and tmpDir, when the node keeps them on a volume of their own
// ("": they stay where they are).
func PlaceLogs(ctx context.Context, datadir, redoDir, binlogDir, tmpDir string) error {
	for _, d := range []string{redoDir, binlogDir, tmpDir} {
		if d != "" {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
	}
	if redoDir == "" {
		return nil
	}
	logs, _ := filepath.Glob(filepath.Join(datadir, "ib_logfile*"))
	for _, f := range logs {
		out, err := exec.CommandContext(ctx, "mv", f, redoDir+"/").CombinedOutput()
		if err != nil {
			return fmt.Errorf("move the redo log: %v: %s", err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// SeedGalera writes grastate.dat and gvwstate.dat so that every member of a
// new cluster holds the same state (stateUUID:seqno) and the same last
// primary view: started together, they re-form the primary component from
// pc.recovery without a bootstrap and without any state transfer, exactly as
// a cluster does after all nodes crashed at the same position.
// A lone member (one-node cluster) gets no view: it bootstraps instead.
// It returns the files to write into the datadir, by name.
func SeedGalera(stateUUID string, seqno int64, myUUID string, members []string) (map[string]string, error) {
	gra, err := RenderGrastate(stateUUID, seqno, len(members) == 1)
	if err != nil {
		return nil, err
	}
	files := map[string]string{Grastate: gra}
	if len(members) == 1 {
		return files, nil
	}
	gvw, err := RenderGvwstate(myUUID, members)
	if err != nil {
		return nil, err
	}
	files[Gvwstate] = gvw
	return files, nil
}

// Galera's state files in a datadir.
const (
	Grastate = "grastate.dat"
	Gvwstate = "gvwstate.dat"
)

// SafeToBootstrap is grastate.dat's text with safe_to_bootstrap: 1, once
// the caller has decided this node is the one to bootstrap from.
func SafeToBootstrap(grastate string) string {
	return regexp.MustCompile(`(?m)^safe_to_bootstrap:.*$`).ReplaceAllString(grastate, "safe_to_bootstrap: 1")
}

// LogTail returns the first n error lines of a log's text (the first
// errors name the cause; later ones are its consequences), or its last n
// lines when it has none: what a user needs when a server would not start.
func LogTail(log string, n int) string {
	lines := strings.Split(log, "\n")
	log = strings.Join(lines[lastRun(lines):], "\n") // a server's last run: an earlier one's errors are not why this one failed
	var errs []string
	for _, l := range lines[lastRun(lines):] {
		if strings.Contains(l, "[ERROR]") {
			errs = append(errs, strings.TrimSpace(l))
		}
	}
	if len(errs) > n {
		errs = errs[:n]
	}
	out := tail(log, n)
	if len(errs) > 0 {
		out = strings.Join(errs, "\n")
	}
	if noSpace.MatchString(log) {
		out += "\n(error 28 is ENOSPC: the file system holding the node's files is full)"
	}
	return out
}

// IOError is the line of a server's words that reports an IO error (errno
// 5: the disk under it failed), "" when none does.
func IOError(said string) string {
	for _, l := range strings.Split(said, "\n") {
		if ioError.MatchString(l) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

var ioError = regexp.MustCompile(`(Input/output error|Errcode: 5\b|operating system error 5\b)`)

// noSpace finds a server's words for a full file system (errno 28).
var noSpace = regexp.MustCompile(`(?i)(failed with error 28\b|Errcode: 28\b|error 28 \(|No space left on device)`)

func tail(s string, n int) string {
	return strings.Join(last(strings.Split(strings.TrimRight(s, "\n"), "\n"), n), "\n")
}

func last(l []string, n int) []string {
	if len(l) > n {
		return l[len(l)-n:]
	}
	return l
}

// StoppedBecause says, from a server's error log, why it stopped on its
// own: the fatal (else the first) error of its last run logged at or after
// after (zero: any; what came before a heal is not why it stopped later),
// with an errno named ("fdatasync() returned 5 (EIO)"). "" when its last
// run ended with a clean shutdown or logged no error since (a kill -9 says
// nothing).
func StoppedBecause(log string, after time.Time) string {
	lines := strings.Split(log, "\n")
	start := lastRun(lines)
	var first, fatal string
	for _, l := range lines[start:] {
		if t, ok := LogTime(l); ok && !after.IsZero() && t.Before(after.Truncate(time.Second)) {
			continue
		}
		switch {
		case strings.Contains(l, "Shutdown complete"):
			return ""
		case !strings.Contains(l, "[ERROR]") || strings.Contains(l, "got signal"):
		case strings.Contains(l, "[FATAL]") && fatal == "":
			fatal = l
		case first == "":
			first = l
		}
	}
	why := fatal
	if why == "" {
		why = first
	}
	if why == "" {
		return ""
	}
	why = strings.TrimSpace(why[strings.Index(why, "[ERROR]")+len("[ERROR]"):])
	why = strings.TrimSpace(strings.TrimPrefix(why, "[FATAL]"))
	if m := errnoSaid.FindStringSubmatch(why); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil && errnoName[n] != "" {
			why += fmt.Sprintf(" (%s: %s)", errnoName[n], syscall.Errno(n).Error())
		}
	}
	return why
}

// VotedOut says, from a Galera member's error log, why its cluster voted
// it out in its last run: the error it met applying a write set the others
// applied, as it put it to the vote ("Table `app`.`f` is corrupted…,
// Error_code: 1877"). "" when the log holds no such vote.
func VotedOut(log string) string {
	lines := strings.Split(log, "\n")
	why := ""
	for _, l := range lines[lastRun(lines):] {
		if i := strings.Index(l, " initiates vote on "); i >= 0 && strings.Contains(l, "WSREP: Member") {
			rest := l[i+len(" initiates vote on "):]
			if j := strings.Index(rest, ": "); j >= 0 { // after the "uuid:seqno,hash" it votes on
				why = strings.TrimSuffix(strings.TrimSpace(rest[j+2:]), ";")
			}
		}
		if strings.Contains(l, "Inconsistent by consensus") && why != "" {
			return why
		}
	}
	return ""
}

// Reversals are the times a Galera member left its cluster because the
// primary component it was rejoining had applied fewer write sets than it
// had ("Reversing history: 117387 -> 117367, this member has applied 20
// more events than the primary component.Data loss is possible. Must
// abort."): what it had applied beyond, the cluster no longer has. Each is
// its log line's time and Galera's words, in the log's order.
func Reversals(log string) []string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		i := strings.Index(l, "Reversing history: ")
		if i < 0 {
			continue
		}
		what := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(l[i:]), "Must abort."))
		what = strings.Replace(what, "component.Data", "component. Data", 1)
		if len(l) >= 19 && l[4] == '-' && l[13] == ':' {
			what = l[:19] + " " + what
		}
		out = append(out, what)
	}
	return out
}

// SemiSyncFallbacks are the times a semi-sync primary's log says it gave
// up waiting for a replica's acknowledgement (rpl_semi_sync_master_timeout
// passed) and went on committing without one, each with when it switched
// back on (its replicas caught up) or "" when the log does not say it did.
// The commits in between were acknowledged to their clients while on the
// primary alone.
func SemiSyncFallbacks(log string) []Fallback {
	var out []Fallback
	for _, l := range strings.Split(log, "\n") {
		at := ""
		if len(l) >= 19 && l[4] == '-' && l[13] == ':' {
			at = l[:19]
		}
		switch {
		case strings.Contains(l, "Timeout waiting for reply of binlog"):
			if len(out) == 0 || out[len(out)-1].On != "" {
				out = append(out, Fallback{Off: at})
			}
		case strings.Contains(l, "Semi-sync replication switched ON"), strings.Contains(l, "] Starting MariaDB "):
			if len(out) > 0 && out[len(out)-1].On == "" {
				out[len(out)-1].On = at
				if strings.Contains(l, "Starting MariaDB") {
					out[len(out)-1].Restarted = true
				}
			}
		}
	}
	return out
}

// Fallback is one time a semi-sync primary went on without
// acknowledgements: from Off to On (its log's times; On "" while it
// still did, Restarted when the server started again before it switched
// back on).
type Fallback struct {
	Off, On   string
	Restarted bool
}

// Text says it in a line.
func (f Fallback) Text() string {
	switch {
	case f.On == "":
		return "from " + f.Off + " on"
	case f.Restarted:
		return "from " + f.Off + " until the server started again at " + f.On
	}
	return "from " + f.Off + " to " + f.On
}

// Reversed is the reversal that ended the member's last run ("": none).
func Reversed(log string) string {
	lines := strings.Split(log, "\n")
	r := Reversals(strings.Join(lines[lastRun(lines):], "\n"))
	if len(r) == 0 {
		return ""
	}
	return r[len(r)-1]
}

// JoinAborted says why a Galera joiner's last run ended in the middle of
// joining, when it ended for a reason a new start may well get past ("":
// it did not): its donor left the group during its state transfer ("Donor
// … is no longer in the group. State transfer cannot be completed, need to
// abort"), its donor reported the transfer failed ("Will never receive
// state. Need to abort."), or its incremental transfer broke off (Galera:
// "Receiving IST failed, node restart required", "… Restart required."),
// or the exchange of states that admits it to the membership failed
// ("Failed to handle state message: -131 (State not recoverable)", once
// under a busy computer as a crashed cluster re-formed) without it being
// ahead of the others (Reversed: no new start gets past that).
func JoinAborted(log string) string {
	lines := strings.Split(log, "\n")
	for _, l := range lines[lastRun(lines):] {
		switch {
		case strings.Contains(l, "is no longer in the group. State transfer cannot be completed"):
			return "its donor left the group during its state transfer, which Galera then abandons"
		case strings.Contains(l, "Will never receive state. Need to abort"):
			return "its donor reported its state transfer failed, and Galera aborts the joiner (Will never receive state)"
		case strings.Contains(strings.ToLower(l), "restart required"):
			return fmt.Sprintf("its state transfer broke off, and Galera asks for a restart (%s)", galeraSays(l))
		case strings.Contains(l, "Failed to handle state message") && Reversed(log) == "":
			return fmt.Sprintf("the exchange of states that forms its cluster's membership failed as it joined, and Galera left the group (%s)", galeraSays(l))
		}
	}
	return ""
}

// galeraSays is a Galera log line without its time stamp and level.
func galeraSays(line string) string {
	if i := strings.Index(line, "WSREP: "); i >= 0 {
		line = line[i+len("WSREP: "):]
	}
	if len(line) > 160 {
		line = line[:160] + "…"
	}
	return strings.TrimSpace(line)
}

// DamagedAfterSST explains a server that cannot read its table
// definitions when the last thing that wrote them was a full state
// transfer never followed by a clean shutdown: mariabackup does not flush
// what it receives, so a machine that loses power before its kernel
// writes those files back (vm.dirty_expire_centisecs, 30 s by default)
// loses them. "" when the log says otherwise.
func DamagedAfterSST(log string) string {
	lines := strings.Split(log, "\n")
	damaged := ""
	for _, l := range lines[lastRun(lines):] {
		if file := damagedFile(l); file != "" {
			damaged = file
			break
		}
	}
	if damaged == "" {
		return ""
	}
	sst, hurt := "", false // the last transfer; damage seen since
	for _, l := range lines {
		switch {
		case strings.Contains(l, "SST succeeded for position"):
			sst, hurt = stamp(l), false
		case damagedFile(l) != "":
			hurt = true
		case strings.Contains(l, "Shutdown complete") && !hurt:
			sst = "" // a clean shutdown after the transfer flushed what it wrote
		}
	}
	if sst == "" {
		return ""
	}
	return fmt.Sprintf("its table definitions are damaged (%s): the last thing that wrote them was the full state transfer it received at %s, "+
		"and it stopped without a clean shutdown since; mariabackup does not flush what a state transfer writes, so a machine that loses power "+
		"before its kernel writes those files back (30 s by default) loses them, and only a new full state transfer repairs them", damaged, sst)
}

// damagedFile is the table definition a log line says is damaged ("").
func damagedFile(line string) string {
	const said = "Incorrect information in file: "
	i := strings.Index(line, said)
	if i < 0 {
		return ""
	}
	if f := strings.Fields(line[i+len(said):]); len(f) > 0 {
		return f[0]
	}
	return "?"
}

// lastRun is the index of the line where a server log's last run begins
// (10.11 says "Starting MariaDB … as process N", earlier releases also
// "… starting as process N …"); 0 when none does.
func lastRun(lines []string) int {
	start := 0
	for i, l := range lines {
		if strings.Contains(l, "] Starting MariaDB ") || strings.Contains(l, " starting as process ") {
			start = i
		}
	}
	return start
}

// WaitsForSpace says whether the server's last run found its disk full
// and waits for space (MariaDB sleeps a minute between its tries: freed
// space is seen at its next try, not before).
func WaitsForSpace(log string) bool {
	lines := strings.Split(log, "\n")
	waits := false
	for _, l := range lines[lastRun(lines):] {
		switch {
		case strings.Contains(l, "Waiting for someone to free space"):
			waits = true
		case strings.Contains(l, "Shutdown complete"):
			waits = false
		}
	}
	return waits
}

// LogTime is when a server log line was written (the server's local
// time, this computer's zone), false for a line without a time.
func LogTime(line string) (time.Time, bool) {
	f := strings.Fields(line)
	if len(f) < 2 {
		return time.Time{}, false
	}
	t, err := time.ParseInLocation("2006-01-02 15:04:05", f[0]+" "+f[1], time.Local)
	return t, err == nil
}

// RunStarted is when the server's last run began (by its log), false when
// the log does not say.
func RunStarted(log string) (time.Time, bool) {
	lines := strings.Split(log, "\n")
	i := lastRun(lines)
	if !strings.Contains(lines[i], "Starting MariaDB") && !strings.Contains(lines[i], " starting as process ") {
		return time.Time{}, false
	}
	return LogTime(lines[i])
}

// stamp is a server log line's time ("2026-11-26 13:59:09").
func stamp(line string) string {
	if f := strings.Fields(line); len(f) >= 2 {
		return f[0] + " " + f[1]
	}
	return "?"
}

var errnoSaid = regexp.MustCompile(`(?:returned|[Ee]rrcode:|errno:|error number|OS error|error) (\d+)\b`)

// errnoName names the errors a disk gives.
var errnoName = map[int]string{int(syscall.EIO): "EIO", int(syscall.ENOSPC): "ENOSPC", int(syscall.EROFS): "EROFS", int(syscall.ENOENT): "ENOENT",
	int(syscall.EACCES): "EACCES", int(syscall.EUCLEAN): "EUCLEAN", int(syscall.ENXIO): "ENXIO"}

// DonatingTo is the joiner a Galera member was chosen to donate a state
// transfer to in its last run and has not finished with ("": none): the
// group's "Member 2.0 (db3) requested state transfer from '*any*'.
// Selected 0.0 (db1)(SYNCED) as donor." with self as the donor, not
// followed by "0.0 (db1): State transfer to 2.0 (db3) complete." (or
// failed).
func DonatingTo(log, self string) string {
	lines := strings.Split(log, "\n")
	joiner := ""
	for _, l := range lines[lastRun(lines):] {
		switch {
		case strings.Contains(l, " requested state transfer from ") && strings.Contains(l, "Selected "):
			j, d := parenthesised(l[strings.Index(l, "Member "):]), parenthesised(l[strings.Index(l, "Selected "):])
			if d == self {
				joiner = j
			}
		case joiner != "" && strings.Contains(l, "("+self+"): State transfer to ") && strings.Contains(l, "("+joiner+")"):
			joiner = ""
		}
	}
	return joiner
}

// parenthesised is the first "(…)" of s, without its parentheses.
func parenthesised(s string) string {
	i := strings.IndexByte(s, '(')
	j := strings.IndexByte(s[i+1:], ')')
	if i < 0 || j < 0 {
		return ""
	}
	return s[i+1 : i+1+j]
}
