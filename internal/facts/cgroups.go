package facts

import (
	"os"
	"path/filepath"
	"strings"
)

// cgroupRoots finds, for each cgroup v1 controller, the directory of the
// cgroup this process runs in: the controller's mount point joined with the
// process's path in that hierarchy (less the mount's own root, as inside a
// container). Controllers mounted only as cgroup v2 are absent.
func cgroupRoots(mountinfo, self string, controllers []string) map[string]string {
	type mount struct{ root, point string }
	mounts := map[string]mount{}
	for _, line := range strings.Split(mountinfo, "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 3 || g[0] != "cgroup" {
			continue
		}
		for _, opt := range strings.Split(g[2], ",") {
			mounts[opt] = mount{root: f[3], point: f[4]}
		}
	}
	paths := map[string]string{}
	for _, line := range strings.Split(self, "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 || f[1] == "" {
			continue
		}
		for _, c := range strings.Split(f[1], ",") {
			paths[c] = f[2]
		}
	}
	out := map[string]string{}
	for _, c := range controllers {
		m, ok := mounts[c]
		p, known := paths[c]
		if !ok || !known {
			continue
		}
		rel := strings.TrimPrefix(p, m.root)
		if m.root != "/" && rel == p { // this process is outside the mount's view
			continue
		}
		out[c] = filepath.Join(m.point, rel)
	}
	return out
}

func readCgroupRoots(controllers []string) map[string]string {
	mi, err1 := os.ReadFile("/proc/self/mountinfo")
	self, err2 := os.ReadFile("/proc/self/cgroup")
	if err1 != nil || err2 != nil {
		return nil
	}
	out := cgroupRoots(string(mi), string(self), controllers)
	for c, d := range out {
		if _, err := os.Stat(filepath.Join(d, "cgroup.procs")); err != nil {
			delete(out, c)
		}
	}
	return out
}
