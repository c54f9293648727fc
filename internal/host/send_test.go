package host

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// tarHost runs a host's commands on this computer.
type tarHost struct{ Host }

func (tarHost) Name() string { return "h1" }
func (tarHost) Run(ctx context.Context, argv []string, stdin io.Reader) ([]byte, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = stdin
	return cmd.Output()
}

func TestSendDir(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "a", "data")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(src, "app"), 0o750))
	must(os.WriteFile(filepath.Join(src, "ibdata1"), []byte("pages"), 0o640))
	must(os.WriteFile(filepath.Join(src, "app", "t.ibd"), make([]byte, 100000), 0o600))
	must(os.WriteFile(filepath.Join(src, "empty"), nil, 0o644))
	must(SendDir(context.Background(), tarHost{}, src, dst))
	for name, want := range map[string]int64{"ibdata1": 5, "app/t.ibd": 100000, "empty": 0} {
		fi, err := os.Stat(filepath.Join(dst, name))
		if err != nil || fi.Size() != want {
			t.Errorf("%s: %v %v, want %d bytes", name, fi, err, want)
		}
	}
	if fi, _ := os.Stat(filepath.Join(dst, "app", "t.ibd")); fi == nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode not kept: %v", fi)
	}
	if err := SendDir(context.Background(), tarHost{}, filepath.Join(src, "nosuch"), dst); err == nil {
		t.Errorf("a missing directory was sent")
	}
}
