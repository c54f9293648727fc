package disk

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestLocate: a file's written bytes have a place on the device; a hole
// has none, and says so.
func TestLocate(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(make([]byte, 65536), 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 20); err != nil { // a hole after the first 64K
		t.Fatal(err)
	}
	f.Close()
	off, err := Locate(name, 16384, 16384, true)
	if errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOTTY) {
		t.Skipf("this file system maps no extents: %v", err)
	}
	if err != nil || off < 0 {
		t.Fatalf("written bytes: %d, %v", off, err)
	}
	if _, err := Locate(name, 512<<10, 4096, false); err == nil || !strings.Contains(err.Error(), "hole") || !errors.Is(err, ErrNotPlaced) {
		t.Errorf("a hole: %v", err)
	}
}
