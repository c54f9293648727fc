package disk

import (
	"strings"
	"testing"

	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
)

// TestRoom: a lab's sparse disk images may promise up to Overcommit times
// the free space (a warning beyond 1×), never more, and never with less
// than Headroom free; the figures are named.
func TestRoom(t *testing.T) {
	s, err := spec.Preset("cloud3") // 12 disks of 8G: 96G
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build(s, "room", "/h", plan.Facts{Root: true, User: "root", MemBytes: 24 << 30, CPUs: 2, GaleraLib: "/x",
		Cgroups: map[string]string{"cpu": "/c/cpu", "cpuacct": "/c/cpuacct", "memory": "/c/memory"}})
	if err != nil {
		t.Fatal(err)
	}
	const G = 1 << 30
	for _, c := range []struct {
		free         int64
		refuse, warn string
	}{
		{200 * G, "", ""},
		{80 * G, "", "12 disks of 96G in all, 80G free on the file system holding /h/labs/room/disks/images: the images are sparse"},
		{24 * G, "", "ENOSPC"},
		{20 * G, "may promise up to 4× the free space, not 5×", ""},
		{1 * G, "less than the 2G hadrill keeps free", ""},
	} {
		refuse, warn := Room(p, c.free)
		if (c.refuse == "") != (refuse == "") || !strings.Contains(refuse, c.refuse) || (c.warn == "") != (warn == "") || !strings.Contains(warn, c.warn) {
			t.Errorf("free %s: refuse %q, warn %q; want %q, %q", spec.FormatSize(c.free), refuse, warn, c.refuse, c.warn)
		}
	}
	if r, w := Room(&plan.Plan{}, 0); r != "" || w != "" {
		t.Errorf("no disks: %q %q", r, w)
	}
	if free, err := Free("/nonexistent/deeper/still"); err != nil || free <= 0 {
		t.Errorf("Free of a path not made yet: %d %v", free, err)
	}
}
