package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hadrill/hadrill/internal/golden"
)

// TestCatalogs: what the commands that need no lab print (golden, text
// and JSON): the machine and disk types, the presets, the templates, and
// a topology file validated.
func TestCatalogs(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "lab.yaml")
	if err := os.WriteFile(file, []byte("clusters:\n  - name: db\n    nodes: 3\nload_balancers:\n  - name: lb\n    cluster: db\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, args := range [][]string{
		{"machines"}, {"machines", "-o", "json"}, {"disks"}, {"disks", "-o", "json"},
		{"presets", "list"}, {"presets", "list", "-o", "json"}, {"templates", "list"},
		{"validate", file}, {"validate", file, "-o", "json"},
	} {
		stdout, stderr, code := run(t, &app{facts: fixedFacts}, append([]string{"--home", dir}, args...)...)
		if code != 0 {
			t.Errorf("%s: exit %d\n%s", strings.Join(args, " "), code, stderr)
		}
		fmt.Fprintf(&out, "$ hadrill %s\n%s%sexit %d\n\n", strings.Join(args, " "), stdout, stderr, code)
	}
	golden.Check(t, "catalogs.txt", []byte(strings.ReplaceAll(out.String(), dir, "DIR")))
}
