package state

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/hderr"
)

func TestLockNamesItsHolder(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(LabDir(home, "lab1"), 0o755); err != nil {
		t.Fatal(err)
	}
	unlock, err := Lock(home, "lab1", Writer, 0)
	if err != nil {
		t.Fatal(err)
	}
	h, ok := HolderOf(home, "lab1", Writer)
	if !ok || h.Pid != os.Getpid() || !strings.HasPrefix(h.Command, "hadrill") || time.Since(h.Since) > time.Minute {
		t.Fatalf("holder %+v %v", h, ok)
	}
	// a second taker (its own open file: flock is per open file) is refused, naming the holder
	_, err = lock(home, "lab1", Writer, 150*time.Millisecond)
	var busy *BusyError
	if !errors.As(err, &busy) || busy.Holder.Pid != os.Getpid() || !strings.Contains(err.Error(), "is busy") || !IsBusy(err) {
		t.Fatalf("second lock: %v", err)
	}
	// the bench lock is another lock
	unbench, err := Lock(home, "lab1", Bench, 0)
	if err != nil {
		t.Fatalf("bench lock beside the writer's: %v", err)
	}
	unbench()
	unlock()
	if _, ok := HolderOf(home, "lab1", Writer); ok {
		t.Fatal("released, yet held")
	}
	again, err := Lock(home, "lab1", Writer, 0)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	// the lab gone, its lock files go with the unlock
	os.RemoveAll(LabDir(home, "lab1"))
	again()
	if left, _ := filepath.Glob(filepath.Join(home, "labs", ".lab1.lock")); len(left) > 0 {
		t.Fatalf("left %v", left)
	}
}

// TestUnwritableHome: a home hadrill may not write is bad input naming
// --home; a full one is not (it is what it is, and says so).
func TestUnwritableHome(t *testing.T) {
	for _, c := range []struct {
		err  error
		user bool
	}{
		{&os.PathError{Op: "open", Path: "/h/labs/.x.lock", Err: syscall.EROFS}, true},
		{&os.PathError{Op: "mkdir", Path: "/h/labs", Err: syscall.EACCES}, true},
		{&os.PathError{Op: "open", Path: "/h/labs/.x.lock", Err: syscall.ENOSPC}, false},
	} {
		err := unwritable("/h", c.err)
		if hderr.IsUser(err) != c.user || (c.user && !strings.Contains(err.Error(), "--home: /h is not writable")) ||
			(!c.user && !strings.Contains(err.Error(), "no space left on device")) {
			t.Errorf("%v: %v", c.err, err)
		}
	}
}
