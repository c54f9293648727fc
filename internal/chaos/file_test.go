package chaos

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hadrill/hadrill/internal/plan"
)

// TestFileResolve: a file fault finds its file on the node's volume and
// the bytes it acts on (an .ibd's page 3 by default, a flip 150 bytes into
// it), and names every problem of bad input at once.
func TestFileResolve(t *testing.T) {
	dir := t.TempDir()
	mount := filepath.Join(dir, "volumes", "db1", "data")
	data := filepath.Join(mount, "mysql")
	if err := os.MkdirAll(filepath.Join(data, "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, size := range map[string]int64{"app/t.ibd": 6 * Page, "ib_logfile0": 100 << 10, "app/t.frm": 1000, "app/small.ibd": 4000} {
		if err := os.WriteFile(filepath.Join(data, name), make([]byte, size), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	p := &plan.Plan{Lab: "f", Disks: plan.NewDisks(dir), Nodes: []plan.Node{
		{Name: "db1", DataDir: data, Volumes: []plan.Volume{{Name: "data", FS: "xfs", Mount: mount}}},
		{Name: "db2"},
	}}
	for _, c := range []struct {
		f               File
		at, page, n, to int64
		problems        []string
	}{
		{f: File{Node: "db1", Path: "app/t.ibd", Flip: true}, at: 3*Page + 150, page: 3 * Page, n: Page, to: -1},
		{f: File{Node: "db1", Path: "app/t.ibd", Torn: true}, at: 3 * Page, page: 3 * Page, n: Page, to: -1},
		{f: File{Node: "db1", Path: "ib_logfile0", LoseWrite: true, At: "70000"}, at: 70000, page: 4 * Page, n: Page, to: -1},
		{f: File{Node: "db1", Path: "app/t.frm", Truncate: "100"}, to: 100},
		{f: File{Node: "db1", Path: "app/small.ibd", Torn: true, At: "100"}, problems: []string{"--torn: the page of app/small.ibd at 0 is 4000 bytes"}},
		{f: File{Node: "db1", Path: "app/t.frm", Truncate: "2K"}, problems: []string{"--truncate: app/t.frm is 1000 (1000 bytes): expected a size below that, got 2K"}},
		{f: File{Node: "db1", Path: "../etc/passwd", Flip: true, Torn: true, Bit: 8, At: "x"}, problems: []string{
			"not --flip and --torn", "--bit: expected a bit of a byte, 0 to 7, got 8", `--at: expected a byte offset such as 49302 or 48K, got "x"`, `FILE: expected a path in the server's data directory`}},
		{f: File{Node: "db1", Path: "app/none.ibd", LoseWrite: true, Bit: 2}, problems: []string{"--bit: the bit --flip flips; give --flip too", "FILE: db1 has no file app/none.ibd in " + data}},
		{f: File{Node: "db2", Path: "app/t.ibd"}, problems: []string{"give one of --flip, --lose-write, --torn, --truncate", "NODE: db2 has no emulated volume"}},
		{f: File{Node: "db9", Path: "app/t.ibd", Flip: true, At: "1G"}, problems: []string{`NODE: "db9" is not a node of lab f (nodes: db1, db2)`}},
	} {
		tg, err := c.f.Resolve(p)
		if len(c.problems) > 0 {
			for _, w := range c.problems {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("%+v: %v, want %q", c.f, err, w)
				}
			}
			continue
		}
		if err != nil || tg.at != c.at || tg.page != c.page || tg.pageN != c.n || tg.to != c.to {
			t.Errorf("%+v: at %d page %d+%d to %d, %v; want %d %d+%d %d", c.f, tg.at, tg.page, tg.pageN, tg.to, err, c.at, c.page, c.n, c.to)
		}
	}
}
