// Package facts reads what a plan needs to know of this machine (root,
// memory, where the Galera library is) and checks the programs a plan
// needs are installed.
package facts

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"os/user"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/lb"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
)

// GaleraLibs are where Debian and others install the Galera 4 provider.
var GaleraLibs = []string{"/usr/lib/galera/libgalera_smm.so", "/usr/lib/libgalera_smm.so", "/usr/lib64/galera-4/libgalera_smm.so"}

// Machine reads what a plan needs to know about this machine.
// HADRILL_ROOTLESS=1 forces the rootless provider even as root.
func Machine() plan.Facts {
	f := plan.Facts{Root: os.Geteuid() == 0 && os.Getenv("HADRILL_ROOTLESS") != "1", MemBytes: memTotal(), CPUs: runtime.NumCPU()}
	if f.Root {
		f.Cgroups = readCgroupRoots(plan.CgroupControllers)
	}
	if u, err := user.Current(); err == nil {
		f.User = u.Username
	}
	f.GaleraLib = GaleraLibs[0]
	for _, p := range GaleraLibs {
		if _, err := os.Stat(p); err == nil {
			f.GaleraLib = p
			break
		}
	}
	return f
}

func memTotal() int64 { return meminfo("MemTotal:", 4<<30) }

// MemAvailable is the memory this computer can give without swapping
// (MemAvailable: free memory and what the page cache can give back).
func MemAvailable() int64 { return meminfo("MemAvailable:", 0) }

// meminfo reads one field of /proc/meminfo in bytes (def when unread).
func meminfo(field string, def int64) int64 {
	fh, err := os.Open("/proc/meminfo")
	if err != nil {
		return def
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 2 && f[0] == field {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return def
}

// Preflight checks the programs a plan needs and names every missing one.
func Preflight(p *plan.Plan, f plan.Facts) error {
	need := []string{"mariadbd", "mariadb-install-db", "mariadb", "rsync", "cp"}
	if p.Mode == plan.ModeNetns {
		need = append(need, "ip")
	}
	for i := range p.LoadBalancers {
		if k := lb.KindOf(&p.LoadBalancers[i]).Name(); !slices.Contains(need, k) {
			need = append(need, k)
		}
	}
	if slices.ContainsFunc(p.LoadBalancers, func(lb plan.LB) bool { return lb.VirtualIP }) {
		need = append(need, "keepalived")
	}
	if p.WAN != nil {
		need = append(need, "iptables", "tc")
	}
	if p.Disks != nil {
		need = append(need, "losetup", "blkid", "mount", "umount", "fusermount3", "fio")
		for _, nv := range p.AllVolumes() {
			if fs := "mkfs." + nv.Volume.FS; !slices.Contains(need, fs) {
				need = append(need, fs)
			}
		}
	}
	var missing []string
	for _, b := range need {
		if _, err := exec.LookPath(b); err != nil {
			missing = append(missing, b)
		}
	}
	if _, err := os.Stat(f.GaleraLib); err != nil {
		missing = append(missing, "libgalera_smm.so (package galera-4)")
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing on this machine: %s (install them with `make deps`)", strings.Join(missing, ", "))
	}
	return nil
}

// Options asks this computer's mariadbd how it reads each cluster's config
// overrides, and refuses those it refuses or adjusts (every one named, its
// field path with the server's own words): a value the server cannot read
// would otherwise fail only once the lab's servers start, and one it
// adjusts would run the lab with another value than the spec's. Nothing is
// asked when mariadbd is not installed here.
func Options(ctx context.Context, s *spec.Spec) error {
	var problems []string
	for i, c := range s.Clusters {
		said, ok, err := mariadb.CheckOverrides(ctx, c.Config)
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		for _, k := range slices.Sorted(maps.Keys(said)) {
			problems = append(problems, fmt.Sprintf("clusters[%d].config.%s: mariadbd refuses or changes it: %s", i, k, said[k]))
		}
	}
	return hderr.Users(problems)
}
