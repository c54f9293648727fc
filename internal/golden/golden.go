// Package golden compares test output with testdata/*.golden files;
// `go test ./pkg -update` rewrites them (review the diff before committing).
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// Check compares got with testdata/<name>.golden.
func Check(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test with -update)", err)
	}
	if string(want) != string(got) {
		t.Errorf("%s differs from the output; if the change is intended, run go test with -update and review git diff", path)
	}
}
