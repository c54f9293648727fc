package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/hadrill/hadrill/internal/hderr"
)

// Kind is one of a lab's two locks. Writer is held by every command that changes the lab
// (up, down, start/stop, faults, drills, promote, backups...): one at a time,
// so faults take effect, and are recorded, in a single order. Bench is held
// by a benchmark: one measurement at a time, while faults may still be
// injected under it (a core use). `down` ends a running benchmark first.
type Kind string

const (
	Writer Kind = "writer"
	Bench  Kind = "bench"
)

// Holder is who holds a lock, as its holder wrote it down.
type Holder struct {
	Pid     int       `json:"pid"`
	Command string    `json:"command"`
	Since   time.Time `json:"since"`
}

// BusyError says a lab is locked by another command, naming it.
type BusyError struct {
	Lab    string
	Kind   Kind
	Holder Holder
}

func (e *BusyError) Error() string {
	what := "another hadrill command is changing it"
	if e.Kind == Bench {
		what = "a benchmark is running on it"
	}
	if e.Holder.Pid == 0 {
		return fmt.Sprintf("lab %q is busy: %s (try again when it ends, or pass --wait)", e.Lab, what)
	}
	return fmt.Sprintf("lab %q is busy: %s — pid %d, `%s`, since %s (%s ago); try again when it ends, or pass --wait",
		e.Lab, what, e.Holder.Pid, e.Holder.Command, e.Holder.Since.Local().Format("15:04:05"),
		time.Since(e.Holder.Since).Round(time.Second))
}

// IsBusy reports whether err is a busy lab.
func IsBusy(err error) bool {
	var b *BusyError
	return errors.As(err, &b)
}

func lockPath(home, name string, k Kind) string {
	if k == Bench {
		return filepath.Join(home, "labs", "."+name+".bench.lock")
	}
	return filepath.Join(home, "labs", "."+name+".lock")
}

// Lock takes a lab's lock of kind k, waiting at most wait for a busy lab
// (the --wait flag; 0 refuses at once); the holder
// (pid, command line, time) is written into the lock file for whoever finds
// it busy. The kernel releases it when the process dies. Lock files sit
// beside the lab directory so that they outlive it.
func Lock(home, name string, k Kind, wait time.Duration) (unlock func(), err error) {
	return lock(home, name, k, wait)
}

// unwritable words an error writing into the home: a home hadrill may not
// write (read-only, not its own) is bad input, naming --home; anything else
// (a full disk) is what it is.
func unwritable(home string, err error) error {
	if errors.Is(err, syscall.EROFS) || errors.Is(err, os.ErrPermission) {
		return hderr.User("--home: %s is not writable (%v): give a home hadrill may write (--home or HADRILL_HOME)", home, err)
	}
	return err
}

func lock(home, name string, k Kind, wait time.Duration) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Join(home, "labs"), 0o755); err != nil {
		return nil, unwritable(home, err)
	}
	path := lockPath(home, name, k)
	deadline := time.Now().Add(wait)
	for {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			return nil, unwritable(home, err)
		}
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil && linked(f, path) {
			h := Holder{Pid: os.Getpid(), Command: command(), Since: time.Now().UTC()}
			b, _ := json.Marshal(h)
			_ = f.Truncate(0)
			_, _ = f.WriteAt(append(b, '\n'), 0)
			return func() { release(home, name, k, f) }, nil
		}
		f.Close()
		if err == nil {
			continue // the file was removed between open and lock (a lab going away): take the new one
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if time.Now().After(deadline) {
			h, _ := HolderOf(home, name, k)
			return nil, &BusyError{Lab: name, Kind: k, Holder: h}
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// linked reports whether f is still the file at path (not one unlinked by
// the previous holder as it removed the lab).
func linked(f *os.File, path string) bool {
	a, err1 := f.Stat()
	b, err2 := os.Stat(path)
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

func release(home, name string, k Kind, f *os.File) {
	_ = f.Truncate(0)
	if _, err := os.Stat(LabDir(home, name)); errors.Is(err, os.ErrNotExist) {
		_ = os.Remove(lockPath(home, name, k)) // the lab is gone: leave nothing of it behind
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	f.Close()
}

// HolderOf reads who holds a lab's lock; ok is false when nobody does.
func HolderOf(home, name string, k Kind) (h Holder, ok bool) {
	f, err := os.Open(lockPath(home, name, k))
	if err != nil {
		return h, false
	}
	defer f.Close()
	if syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB) == nil {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return h, false
	}
	b, _ := os.ReadFile(f.Name())
	if json.Unmarshal(b, &h) != nil {
		return Holder{}, true
	}
	return h, true
}

func command() string {
	a := os.Args[1:]
	for i := 0; i < len(a); i++ { // the home is noise in a message about a lab
		if a[i] == "--home" && i+1 < len(a) {
			a = append(append([]string{}, a[:i]...), a[i+2:]...)
			i--
		}
	}
	return strings.TrimSpace("hadrill " + strings.Join(a, " "))
}

// LockEnding takes a lab's lock of kind k; when another command holds it,
// that command is interrupted (SIGINT: it stops, keeps what it measured and
// releases the lock) and the lock is taken once it has let go, within grace.
// `down` uses it to end a running benchmark first.
func LockEnding(home, name string, k Kind, grace time.Duration, say func(string)) (unlock func(), err error) {
	unlock, err = lock(home, name, k, 0)
	var busy *BusyError
	if !errors.As(err, &busy) || busy.Holder.Pid <= 0 || busy.Holder.Pid == os.Getpid() {
		return unlock, err
	}
	say(fmt.Sprintf("ending `%s` (pid %d) on lab %s first", busy.Holder.Command, busy.Holder.Pid, name))
	if err := syscall.Kill(busy.Holder.Pid, syscall.SIGINT); err != nil && !errors.Is(err, syscall.ESRCH) {
		return nil, fmt.Errorf("lab %s: interrupt pid %d: %w", name, busy.Holder.Pid, err)
	}
	return lock(home, name, k, grace)
}
