package host

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/supervise"
)

// Ops are the operations Serve answers, for usage messages.
const Ops = "daemon ensure|pid|stop|kill|signal (the daemon as JSON on stdin), write PATH MODE (the content on stdin), read PATH, rm PATH, reap LAB_DIR, version, runner (commands framed on stdin, replies on stdout, until stdin ends)"

// DaemonReply is what a daemon operation prints.
type DaemonReply struct {
	Process
	Started bool `json:"started,omitempty"`
}

// Serve runs one operation on this host for a controller that reached it
// over SSH (`hadrill host --root DIR OP ARGS`). Every path it touches,
// and every file of a daemon, lies below root (hadrill's directory on the
// host): a mistake of the controller can never write or remove anything
// else. version is this binary's version.
func Serve(root, version string, args []string, stdin io.Reader, stdout io.Writer) error {
	if !filepath.IsAbs(root) || filepath.Clean(root) == "/" {
		return hderr.User("--root: expected hadrill's directory on the host (an absolute path, not /), got %q", root)
	}
	root = filepath.Clean(root)
	if len(args) == 0 {
		return hderr.User("host: expected an operation: %s", Ops)
	}
	arg := func(i int, what string) (string, error) {
		if len(args) <= i {
			return "", hderr.User("host %s: expected %s", args[0], what)
		}
		return args[i], nil
	}
	switch args[0] {
	case "version":
		_, err := fmt.Fprintln(stdout, version)
		return err
	case "runner":
		return Runner(version, stdin, stdout)
	case "daemon":
		op, err := arg(1, "ensure, pid, stop, kill or signal")
		if err != nil {
			return err
		}
		grace := 10 * time.Second
		if op == "stop" && len(args) > 2 {
			if grace, err = time.ParseDuration(args[2]); err != nil || grace < 0 {
				return hderr.User("host daemon stop: grace: expected a duration, got %q", args[2])
			}
		}
		var sig syscall.Signal
		if op == "signal" {
			n, err := strconv.Atoi(strings.Join(args[2:], ""))
			if sig := syscall.Signal(n); err != nil || (sig != syscall.SIGSTOP && sig != syscall.SIGCONT && sig != syscall.SIGHUP) {
				return hderr.User("host daemon signal: expected %d (STOP), %d (CONT) or %d (HUP: reload), got %q", syscall.SIGSTOP, syscall.SIGCONT, syscall.SIGHUP, strings.Join(args[2:], " "))
			}
			sig = syscall.Signal(n)
		}
		var d Daemon
		if err := json.NewDecoder(io.LimitReader(stdin, 1<<20)).Decode(&d); err != nil {
			return hderr.User("host daemon %s: the daemon as JSON on stdin: %v", op, err)
		}
		if err := d.Check(); err != nil {
			return hderr.User("host daemon %s: %v", op, err)
		}
		for _, p := range []string{d.Dir, d.LogFile, d.PidFile} {
			if err := Within(root, p); err != nil {
				return err
			}
		}
		reply, err := daemonOp(op, d, grace, sig)
		if err != nil {
			return err
		}
		return json.NewEncoder(stdout).Encode(reply)
	case "write":
		path, err := arg(1, "PATH MODE")
		if err != nil {
			return err
		}
		mode, err := arg(2, "PATH MODE")
		if err != nil {
			return err
		}
		perm, perr := strconv.ParseUint(mode, 8, 32)
		if perr != nil || perm > 0o777 {
			return hderr.User("host write: MODE: expected octal permissions like 0644, got %q", mode)
		}
		if err := Within(root, path); err != nil {
			return err
		}
		return WriteAtomic(path, stdin, os.FileMode(perm))
	case "read":
		path, err := arg(1, "PATH")
		if err != nil {
			return err
		}
		if err := Within(root, path); err != nil {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(stdout, f)
		return err
	case "reap":
		dir, err := arg(1, "LAB_DIR (below ROOT/labs)")
		if err != nil {
			return err
		}
		if filepath.Dir(filepath.Clean(dir)) != filepath.Join(root, "labs") {
			return hderr.User("host reap: expected a lab's directory %s/labs/LAB, got %q", root, dir)
		}
		if err := Within(root, dir); err != nil {
			return err
		}
		return Reap(root, filepath.Clean(dir))
	case "rm":
		path, err := arg(1, "PATH")
		if err != nil {
			return err
		}
		if err := Within(root, path); err != nil {
			return err
		}
		return os.RemoveAll(path)
	}
	return hderr.User("host: unknown operation %q (expected %s)", args[0], Ops)
}

func daemonOp(op string, d Daemon, grace time.Duration, sig syscall.Signal) (DaemonReply, error) {
	sd := d.WithArgv(d.Argv)
	switch op {
	case "ensure":
		if pid := sd.Pid(); pid != 0 {
			return DaemonReply{Process: Process{Pid: pid}}, nil
		}
		p, err := sd.Start()
		if err != nil {
			return DaemonReply{}, err
		}
		return DaemonReply{Process: Process{Pid: p.Pid}, Started: true}, nil
	case "pid":
		return DaemonReply{Process: ProcessOf(sd)}, nil
	case "signal":
		return DaemonReply{}, SignalOf(sd, sig)
	case "stop":
		return DaemonReply{}, sd.Stop(grace)
	case "kill":
		pid := sd.Pid()
		if err := sd.Kill(); err != nil {
			return DaemonReply{}, err
		}
		if pid != 0 {
			supervise.WaitGone(pid, 10*time.Second)
		}
		return DaemonReply{}, nil
	}
	return DaemonReply{}, hderr.User("host daemon: unknown operation %q (expected ensure, pid, stop, kill or signal)", op)
}

// ProcessOf is a supervised daemon's process on this computer.
func ProcessOf(d supervise.Daemon) Process {
	pid := d.Pid()
	return Process{Pid: pid, Paused: pid != 0 && supervise.Paused(pid)}
}

// SignalOf sends a supervised daemon's process sig while it runs here.
func SignalOf(d supervise.Daemon, sig syscall.Signal) error {
	running, err := d.Signal(sig)
	if !running {
		return fmt.Errorf("%s is not running", d.Name)
	}
	return err
}

// Within refuses a path that is not below root once symbolic links are
// followed (as far as the path exists).
func Within(root, path string) error {
	refuse := func() error {
		return hderr.User("host: %s is outside hadrill's directory %s", path, root)
	}
	if !filepath.IsAbs(path) {
		return refuse()
	}
	path = filepath.Clean(path)
	if !strings.HasPrefix(path, root+"/") {
		return refuse()
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil // nothing below it exists yet, so nothing can lead out of it
	}
	if err != nil {
		return err
	}
	// the deepest part of path that exists, with its links followed
	existing, rest := path, ""
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = filepath.Dir(existing)
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return err
	}
	if full := filepath.Join(real, rest); full != realRoot && !strings.HasPrefix(full, realRoot+"/") {
		return refuse()
	}
	return nil
}

// WriteAtomic replaces path with what r holds: a temporary file beside it,
// synced and renamed over it (its directory made first).
func WriteAtomic(path string, r io.Reader, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
