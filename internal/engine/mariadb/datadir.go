package mariadb

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// InstallDB initialises a fresh datadir with mariadb-install-db. osUser is
// the account that will own the server: root@localhost (and osUser@localhost
// when it is not root) authenticate by unix socket, so no password exists.
func InstallDB(ctx context.Context, datadir, osUser, redoLog string) error {
	args := []string{"--no-defaults", "--datadir=" + datadir, "--auth-root-authentication-method=socket",
		"--skip-test-db", "--skip-name-resolve", "--innodb-log-file-size=" + redoLog,
		"--innodb-data-file-path=ibdata1:12M:autoextend"}
	if osUser == "root" {
		args = append(args, "--user=root")
	} else {
		args = append(args, "--auth-root-socket-user="+osUser)
	}
	out, err := exec.CommandContext(ctx, "mariadb-install-db", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("mariadb-install-db: %v: %s", err, tail(string(out), 5))
	}
	return nil
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
func SeedGalera(datadir, stateUUID string, seqno int64, myUUID string, members []string) error {
	gra, err := RenderGrastate(stateUUID, seqno, len(members) == 1)
	if err != nil {
		return err
	}
	gvw, err := RenderGvwstate(myUUID, members)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(datadir, "grastate.dat"), []byte(gra), 0o660); err != nil {
		return err
	}
	if len(members) == 1 {
		return nil
	}
	return os.WriteFile(filepath.Join(datadir, "gvwstate.dat"), []byte(gvw), 0o660)
}

// MarkSafeToBootstrap sets safe_to_bootstrap: 1 in grastate.dat, once the
// caller has decided this node is the one to bootstrap from.
func MarkSafeToBootstrap(datadir string) error {
	path := filepath.Join(datadir, "grastate.dat")
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	text := regexp.MustCompile(`(?m)^safe_to_bootstrap:.*$`).ReplaceAllString(string(b), "safe_to_bootstrap: 1")
	return os.WriteFile(path, []byte(text), 0o660)
}

// LogTail returns the first n error lines of a log (the first errors name
// the cause; later ones are its consequences), or its last n lines when it
// has none: what a user needs when a server would not start.
func LogTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var errs []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "[ERROR]") {
			errs = append(errs, strings.TrimSpace(l))
		}
	}
	if len(errs) > n {
		errs = errs[:n]
	}
	if len(errs) > 0 {
		return strings.Join(errs, "\n")
	}
	return tail(string(b), n)
}

func tail(s string, n int) string {
	return strings.Join(last(strings.Split(strings.TrimRight(s, "\n"), "\n"), n), "\n")
}

func last(l []string, n int) []string {
	if len(l) > n {
		return l[len(l)-n:]
	}
	return l
}
