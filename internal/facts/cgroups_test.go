package facts

import (
	"fmt"
	"testing"
)

const mountinfoSeparate = `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd`

const mountinfoComounted = `25 24 0:22 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid - cgroup cgroup rw,cpu,cpuacct
26 24 0:23 /docker/abc /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory`

const mountinfoV2 = `30 23 0:27 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate`

func TestCgroupRoots(t *testing.T) {
	controllers := []string{"cpu", "cpuacct", "memory"}
	for _, c := range []struct {
		name, mountinfo, self, want string
	}{
		{"separate hierarchies, nested memory cgroup", mountinfoSeparate,
			"4:memory:/process_api/6cf8\n2:cpuacct:/\n1:cpu:/\n0::/",
			"map[cpu:/sys/fs/cgroup/cpu cpuacct:/sys/fs/cgroup/cpuacct memory:/sys/fs/cgroup/memory/process_api/6cf8]"},
		{"co-mounted, inside a container", mountinfoComounted,
			"3:cpu,cpuacct:/user.slice\n2:memory:/docker/abc/inner",
			"map[cpu:/sys/fs/cgroup/cpu,cpuacct/user.slice cpuacct:/sys/fs/cgroup/cpu,cpuacct/user.slice memory:/sys/fs/cgroup/memory/inner]"},
		{"cgroup v2 only", mountinfoV2, "0::/user.slice", "map[]"},
		{"outside the mount's view", mountinfoComounted, "3:cpu,cpuacct:/\n2:memory:/other", "map[cpu:/sys/fs/cgroup/cpu,cpuacct cpuacct:/sys/fs/cgroup/cpu,cpuacct]"},
	} {
		if got := fmt.Sprint(cgroupRoots(c.mountinfo, c.self, controllers)); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}
