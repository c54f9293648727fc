package spec

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// DiskClass is a kind of cloud disk: its IOPS and throughput caps and the
// latency of each IO, as a provider sells them.
type DiskClass struct {
	Name       string `yaml:"name" json:"name"`
	IOPS       int    `yaml:"iops" json:"iops"`             // operations per second (an IO over 256K counts as several)
	Throughput string `yaml:"throughput" json:"throughput"` // bytes per second, e.g. 60M
	Latency    string `yaml:"latency" json:"latency"`       // each IO's completion time, e.g. 2ms
	Size       string `yaml:"size,omitempty" json:"size,omitempty"`
	// Burst: credit-based bursting above the caps (nil: none).
	Burst *Burst `yaml:"burst,omitempty" json:"burst,omitempty"`
	// Caching is the host caching policy: none (default) | read | readwrite.
	Caching string `yaml:"caching,omitempty" json:"caching,omitempty"`
	// WarmUp: slower for a while after a long idle period (nil: never).
	WarmUp *WarmUp `yaml:"warmup,omitempty" json:"warmup,omitempty"`
}

// Burst lets a disk run above its caps while it has credits: at IOPS
// and Throughput for Duration from a full bucket, refilled by the unused
// share of its caps (a new disk's bucket is full).
type Burst struct {
	IOPS       int    `yaml:"iops,omitempty" json:"iops,omitempty"`
	Throughput string `yaml:"throughput,omitempty" json:"throughput,omitempty"`
	Duration   string `yaml:"duration" json:"duration"` // e.g. 30m
}

// WarmUp is document 000's "warm-up effect": a disk idle for AfterIdle or
// longer runs at Speed (a fraction of its caps) for Lasts.
type WarmUp struct {
	AfterIdle string  `yaml:"after_idle" json:"after_idle"`
	Lasts     string  `yaml:"lasts" json:"lasts"`
	Speed     float64 `yaml:"speed" json:"speed"`
}

// BuiltinDisks are the disk classes every spec may name: lab-scale versions
// of the disks the reference designs run on.
var BuiltinDisks = []DiskClass{
	{Name: "standard", IOPS: 500, Throughput: "60M", Latency: "2ms", Size: "8G"},                 // a 500-IOPS standard data disk
	{Name: "premium", IOPS: 5000, Throughput: "200M", Latency: "1ms", Size: "8G"},                // a premium SSD
	{Name: "local", IOPS: 20000, Throughput: "500M", Latency: "200us", Size: "8G"},               // a VM's local temporary disk
	{Name: "os", IOPS: 500, Throughput: "60M", Latency: "2ms", Size: "8G", Caching: "readwrite"}, // a VM's OS disk: standard, host-cached
}

// CachingPolicies are a disk class's host caching policies.
var CachingPolicies = []string{"none", "read", "readwrite"}

// Volume is a named set of disks on every node of a cluster: Count disks of
// a class, striped (RAID 0) when more than one, with a file system.
type Volume struct {
	Name  string `yaml:"name" json:"name"`
	Disk  string `yaml:"disk" json:"disk"`
	Count *int   `yaml:"count,omitempty" json:"count,omitempty"` // default 1 (Disks)
	FS    string `yaml:"fs,omitempty" json:"fs,omitempty"`       // ext4 | xfs | btrfs (default xfs)
	// Stripe is the RAID 0 chunk of a striped volume (default 64K).
	Stripe string `yaml:"stripe,omitempty" json:"stripe,omitempty"`
	// AllocationUnit is the file system's allocation size (default 4K):
	// XFS block size, ext4 bigalloc cluster size.
	AllocationUnit string `yaml:"allocation_unit,omitempty" json:"allocation_unit,omitempty"`
}

// Storage gives every node of a cluster its volumes and places its files
// on them: the datadir (default: the first volume), the redo log, the
// binary log and tmpdir (default: the datadir's volume).
type Storage struct {
	Volumes []Volume `yaml:"volumes" json:"volumes"`
	Datadir string   `yaml:"datadir,omitempty" json:"datadir,omitempty"`
	Redo    string   `yaml:"redo,omitempty" json:"redo,omitempty"`
	Binlog  string   `yaml:"binlog,omitempty" json:"binlog,omitempty"`
	Tmpdir  string   `yaml:"tmpdir,omitempty" json:"tmpdir,omitempty"`
}

// Placement is where each of a node's files goes, after defaults.
func (st Storage) Placement() (datadir, redo, binlog, tmpdir string) {
	if len(st.Volumes) > 0 {
		datadir = st.Volumes[0].Name
	}
	if st.Datadir != "" {
		datadir = st.Datadir
	}
	or := func(v string) string {
		if v == "" {
			return datadir
		}
		return v
	}
	return datadir, or(st.Redo), or(st.Binlog), or(st.Tmpdir)
}

// FileSystems are the file systems a volume may have.
var FileSystems = []string{"ext4", "xfs", "btrfs"}

// Bounds of a disk class.
const (
	MaxDiskIOPS    = 1_000_000
	MaxDisksInRAID = 16 // document 003 striped 16 disks
)

// DiskNamed resolves a disk class: the spec's own first, then the built-ins.
func (s *Spec) DiskNamed(name string) (DiskClass, bool) {
	return lookup(name, diskName, s.Disks, BuiltinDisks)
}

func (s *Spec) diskNames() []string { return namesOf(diskName, s.Disks, BuiltinDisks) }

// LatencyDuration is the class's latency per IO (0 when unset or bad).
func (d DiskClass) LatencyDuration() time.Duration { l, _ := time.ParseDuration(d.Latency); return l }

// ThroughputBytes is the class's bytes per second (0 when unset or bad).
func (d DiskClass) ThroughputBytes() int64 { b, _ := ParseSize(d.Throughput); return b }

// SizeBytes is one disk's size (8G when unset).
func (d DiskClass) SizeBytes() int64 {
	if d.Size == "" {
		return 8 << 30
	}
	b, _ := ParseSize(d.Size)
	return b
}

// String is how a class is shown: "standard (500 IOPS, 60M/s, 2ms)", with
// its burst, host caching and warm-up when it has them.
func (d DiskClass) String() string {
	extra := ""
	if b := d.Burst; b != nil {
		extra += ", bursts to"
		if b.IOPS > 0 {
			extra += fmt.Sprintf(" %d IOPS", b.IOPS)
		}
		if b.Throughput != "" {
			extra += fmt.Sprintf(" %s/s", b.Throughput)
		}
		extra += " for " + b.Duration
	}
	if c := d.CachingPolicy(); c != "none" {
		extra += ", host cache " + c
	}
	if w := d.WarmUp; w != nil {
		extra += fmt.Sprintf(", warms up at %g× for %s after %s idle", w.Speed, w.Lasts, w.AfterIdle)
	}
	return fmt.Sprintf("%s (%d IOPS, %s/s, %s%s)", d.Name, d.IOPS, d.Throughput, d.Latency, extra)
}

// FileSystem is the volume's file system after defaults.
func (v Volume) FileSystem() string {
	if v.FS != "" {
		return v.FS
	}
	return "xfs"
}

// Disks is how many disks the volume stripes: its count, 1 when not given.
func (v Volume) Disks() int {
	if v.Count == nil {
		return 1
	}
	return *v.Count
}

// StripeBytes is a striped volume's chunk (64K unless set; 0 for one disk).
func (v Volume) StripeBytes() int64 {
	if v.Disks() < 2 {
		return 0
	}
	if b, err := ParseSize(v.Stripe); err == nil && v.Stripe != "" {
		return b
	}
	return 64 << 10
}

// AllocationBytes is the volume's allocation unit (4K unless set).
func (v Volume) AllocationBytes() int64 {
	if b, err := ParseSize(v.AllocationUnit); err == nil && v.AllocationUnit != "" {
		return b
	}
	return 4 << 10
}

// CachingPolicy is the class's host caching after defaults.
func (d DiskClass) CachingPolicy() string {
	if d.Caching == "" {
		return "none"
	}
	return d.Caching
}

func powerOfTwo(b, lo, hi int64) bool { return b >= lo && b <= hi && b&(b-1) == 0 }

func (v *validator) disks(s *Spec) {
	seen := map[string]string{}
	for i, d := range s.Disks {
		p := fmt.Sprintf("disks[%d]", i)
		v.name(p+".name", d.Name, seen)
		if d.IOPS < 1 || d.IOPS > MaxDiskIOPS {
			v.add(p+".iops", "expected 1 to %d operations per second, got %d", MaxDiskIOPS, d.IOPS)
		}
		if b, err := ParseSize(d.Throughput); err != nil || b < 1<<20 {
			v.add(p+".throughput", "expected bytes per second of at least 1M like 60M or 1G, got %q", d.Throughput)
		}
		if l, err := time.ParseDuration(d.Latency); err != nil || l < 0 || l > time.Second {
			v.add(p+".latency", "expected a duration from 0 to 1s like 2ms or 200us, got %q", d.Latency)
		}
		if b, err := ParseSize(d.Size); d.Size != "" && (err != nil || b < 1<<30 || b > 1<<40) {
			v.add(p+".size", "expected a size from 1G to 1T like 8G, got %q", d.Size)
		}
		if d.Caching != "" && !slices.Contains(CachingPolicies, d.Caching) {
			v.add(p+".caching", "expected one of %s, got %q", strings.Join(CachingPolicies, ", "), d.Caching)
		}
		v.burst(p+".burst", d)
		v.warmUp(p+".warmup", d.WarmUp)
	}
}

func (v *validator) burst(p string, d DiskClass) {
	b := d.Burst
	if b == nil {
		return
	}
	if b.IOPS == 0 && b.Throughput == "" {
		v.add(p, "expected iops or throughput above the class's (like {iops: 3500, duration: 30m})")
	}
	if b.IOPS != 0 && (b.IOPS <= d.IOPS || b.IOPS > MaxDiskIOPS) {
		v.add(p+".iops", "expected more than the class's %d and at most %d operations per second, got %d", d.IOPS, MaxDiskIOPS, b.IOPS)
	}
	if b.Throughput != "" {
		if t, err := ParseSize(b.Throughput); err != nil || t <= d.ThroughputBytes() {
			v.add(p+".throughput", "expected bytes per second above the class's %s, got %q", d.Throughput, b.Throughput)
		}
	}
	if t, err := time.ParseDuration(b.Duration); err != nil || t < time.Second || t > 24*time.Hour {
		v.add(p+".duration", "expected how long a full bucket lasts at the burst rate, 1s to 24h like 30m, got %q", b.Duration)
	}
}

func (v *validator) warmUp(p string, w *WarmUp) {
	if w == nil {
		return
	}
	if t, err := time.ParseDuration(w.AfterIdle); err != nil || t < time.Second {
		v.add(p+".after_idle", "expected the idle time that starts a warm-up, at least 1s like 20m, got %q", w.AfterIdle)
	}
	if t, err := time.ParseDuration(w.Lasts); err != nil || t < time.Second {
		v.add(p+".lasts", "expected how long a warm-up lasts, at least 1s like 10m, got %q", w.Lasts)
	}
	if w.Speed <= 0 || w.Speed >= 1 {
		v.add(p+".speed", "expected the share of the caps a warming disk runs at, above 0 and below 1 like 0.5, got %g", w.Speed)
	}
}

// storage checks a cluster's storage: its volumes (names, known classes,
// counts, file systems) and that every placement names one of them.
func (v *validator) storage(s *Spec, p string, st *Storage) {
	if st == nil {
		return
	}
	p += ".storage"
	if len(st.Volumes) == 0 {
		v.add(p+".volumes", "at least one volume is required (like {name: data, disk: standard})")
	}
	names := map[string]string{}
	for i, vol := range st.Volumes {
		vp := fmt.Sprintf("%s.volumes[%d]", p, i)
		v.name(vp+".name", vol.Name, names)
		if vol.Disk == "" {
			v.add(vp+".disk", "required (name of a disk class: %s)", strings.Join(s.diskNames(), ", "))
		} else if _, ok := s.DiskNamed(vol.Disk); !ok {
			v.add(vp+".disk", "unknown disk class %q (known: %s)", vol.Disk, strings.Join(s.diskNames(), ", "))
		}
		if n := vol.Disks(); n < 1 || n > MaxDisksInRAID {
			v.add(vp+".count", "expected 1 to %d disks, got %d", MaxDisksInRAID, n)
		}
		if vol.FS != "" && !slices.Contains(FileSystems, vol.FS) {
			v.add(vp+".fs", "expected one of %s, got %q", strings.Join(FileSystems, ", "), vol.FS)
		}
		if vol.Stripe != "" {
			if vol.Disks() < 2 {
				v.add(vp+".stripe", "a stripe needs a striped volume (count 2 or more), count is %d", vol.Disks())
			} else if b, err := ParseSize(vol.Stripe); err != nil || !powerOfTwo(b, 4<<10, 1<<20) {
				v.add(vp+".stripe", "expected a power of two from 4K to 1M like 64K, got %q", vol.Stripe)
			}
		}
		if vol.AllocationUnit != "" {
			b, err := ParseSize(vol.AllocationUnit)
			switch {
			case err != nil || !powerOfTwo(b, 4<<10, 64<<10):
				v.add(vp+".allocation_unit", "expected a power of two from 4K to 64K like 64K, got %q", vol.AllocationUnit)
			case vol.FileSystem() == "btrfs" && b != 4<<10:
				v.add(vp+".allocation_unit", "btrfs allocates in 4K sectors here (larger ones need pages of that size), got %q; use xfs (block size) or ext4 (bigalloc clusters)", vol.AllocationUnit)
			}
		}
	}
	for _, ref := range []struct{ field, name string }{{"datadir", st.Datadir}, {"redo", st.Redo}, {"binlog", st.Binlog}, {"tmpdir", st.Tmpdir}} {
		if ref.name != "" && names[ref.name] == "" && len(st.Volumes) > 0 {
			v.add(p+"."+ref.field, "unknown volume %q (volumes: %s)", ref.name, strings.Join(keys(names), ", "))
		}
	}
}
