package disk

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHeldElsewhere: a file system unmounted here but mounted in another
// mount namespace still holds its device, and the namespace's process is
// named; once that process ends, the device is free.
func TestHeldElsewhere(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (loop devices, mounts)")
	}
	for _, tool := range []string{"losetup", "mkfs.ext4", "unshare"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	dir := t.TempDir()
	img, mnt := filepath.Join(dir, "img"), filepath.Join(dir, "m")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 32<<20); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("losetup", "--find", "--show", img).Output()
	if err != nil {
		t.Fatal(err)
	}
	loop := strings.TrimSpace(string(out))
	t.Cleanup(func() { _ = exec.Command("losetup", "-d", loop).Run() })
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", loop).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	// a private parent: an unmount under a shared one would reach the
	// other namespace's copy too
	if out, err := exec.Command("sh", "-c", `mount --bind "$0" "$0" && mount --make-private "$0"`, dir).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })
	if out, err := exec.Command("mount", loop, mnt).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", mnt).Run() })
	// a private copy of the mount in a namespace of its own
	holder := exec.Command("unshare", "-m", "--propagation", "slave", "sleep", "60")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = holder.Process.Kill(); _ = holder.Wait() })
	time.Sleep(200 * time.Millisecond) // the namespace made, sleep executed
	if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	// Another test's process that made a mount namespace meanwhile holds a
	// copy too (a new namespace copies every mount): only this holder is
	// looked for.
	mine := func() []string {
		var out []string
		for _, h := range heldElsewhere([]string{loop}) {
			if strings.HasPrefix(h, fmt.Sprintf("pid %d ", holder.Process.Pid)) {
				out = append(out, h)
			}
		}
		return out
	}
	if want, held := fmt.Sprintf("pid %d (sleep) at %s", holder.Process.Pid, mnt), mine(); len(held) != 1 || held[0] != want {
		t.Errorf("unmounted here, mounted in pid %d's namespace: held %q, want %q", holder.Process.Pid, held, want)
	}
	_ = holder.Process.Kill()
	_ = holder.Wait()
	if held := mine(); len(held) > 0 {
		t.Fatalf("the namespace's process ended, the device still held: %v", held)
	}
}
