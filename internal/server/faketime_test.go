package server

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestForgetFakeTime (the labs review's finding 7): libfaketime's files of
// a node's servers that no longer run are removed with their record; a
// running one's are kept unless the lab goes.
func TestForgetFakeTime(t *testing.T) {
	old := ShmDir
	ShmDir = t.TempDir()
	defer func() { ShmDir = old }()
	dir := t.TempDir()
	const dead = 4194303 // above any pid this kernel hands out by default
	for _, pid := range []int{dead, os.Getpid()} {
		for _, f := range FakeTimeFiles(pid) {
			if err := os.WriteFile(f, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := rememberFakeTime(dir, pid); err != nil {
			t.Fatal(err)
		}
	}
	if err := ForgetFakeTime(dir, false); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(ShmDir, "*"))
	// this test's own process runs without libfaketime: the pid is not the
	// node's server any more, so its files go too
	if len(left) != 0 {
		t.Errorf("left: %v", left)
	}
	if _, err := os.Stat(fakeTimePids(dir)); !os.IsNotExist(err) {
		t.Errorf("the record stays: %v", err)
	}
	if got := FakeTimeFiles(42); fmt.Sprint(got) != fmt.Sprintf("[%s %s]", filepath.Join(ShmDir, "faketime_shm_42"), filepath.Join(ShmDir, "sem.faketime_sem_42")) {
		t.Errorf("names: %v", got)
	}
}
