package host

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hadrill/hadrill/internal/supervise"
)

// Reap ends every process of a lab on this host and removes its directory
// dir: a process is the lab's when an argument of its command line names a
// path below dir, or its working directory is below it (every daemon runs
// in a directory of the lab: garbd names no path). This process and its
// ancestors (the SSH session, sudo) are spared. Then, when no lab is left
// below root/labs, hadrill's copies of itself in root/bin and the empty
// labs directory go too: a host keeps nothing of hadrill but what the
// user asked to keep (root/installed-packages).
func Reap(root, dir string) error {
	spare := ancestors()
	var errs []error
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return err
	}
	var killed []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || spare[pid] || !ofDir(pid, dir) {
			continue
		}
		if pgid, err := syscall.Getpgid(pid); err == nil && pgid == pid {
			_ = syscall.Kill(-pid, syscall.SIGKILL) // helpers it started (SST scripts)
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("kill %d: %w", pid, err))
		}
		killed = append(killed, pid)
	}
	for _, pid := range killed {
		if !supervise.WaitGone(pid, 10*time.Second) {
			errs = append(errs, fmt.Errorf("pid %d survived SIGKILL", pid))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	labs := filepath.Join(root, "labs")
	if left, err := os.ReadDir(labs); err == nil && len(left) == 0 {
		return errors.Join(os.Remove(labs), os.RemoveAll(filepath.Join(root, "bin")))
	}
	return nil
}

// ofDir reports whether pid's command line names a path below dir, or its
// working directory is below it.
func ofDir(pid int, dir string) bool {
	below := func(p string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }
	if cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid)); err == nil && below(cwd) {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	for _, arg := range strings.Split(string(b), "\x00") {
		if _, v, ok := strings.Cut(arg, "="); ok && below(v) { // --defaults-file=PATH
			return true
		}
		if below(arg) {
			return true
		}
	}
	return false
}

// ancestors are this process and every process above it.
func ancestors() map[int]bool {
	out := map[int]bool{}
	for pid := os.Getpid(); pid > 1 && !out[pid]; {
		out[pid] = true
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			break
		}
		next := 0
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "PPid:"); ok {
				next, _ = strconv.Atoi(strings.TrimSpace(v))
			}
		}
		pid = next
	}
	return out
}
