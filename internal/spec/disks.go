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
}

// BuiltinDisks are the disk classes every spec may name: lab-scale versions
// of the disks the reference designs run on.
var BuiltinDisks = []DiskClass{
	{Name: "standard", IOPS: 500, Throughput: "60M", Latency: "2ms", Size: "8G"},   // a 500-IOPS standard data disk
	{Name: "premium", IOPS: 5000, Throughput: "200M", Latency: "1ms", Size: "8G"},  // a premium SSD
	{Name: "local", IOPS: 20000, Throughput: "500M", Latency: "200us", Size: "8G"}, // a VM's local temporary disk
}

// Volume is a named set of disks on every node of a cluster: Count disks of
// a class, striped (RAID 0) when more than one, with a file system.
type Volume struct {
	Name  string `yaml:"name" json:"name"`
	Disk  string `yaml:"disk" json:"disk"`
	Count int    `yaml:"count,omitempty" json:"count,omitempty"` // default 1
	FS    string `yaml:"fs,omitempty" json:"fs,omitempty"`       // ext4 | xfs | btrfs (default xfs; btrfs when striped)
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
	MaxDisksInRAID = 8
)

// DiskNamed resolves a disk class: the spec's own first, then the built-ins.
func (s *Spec) DiskNamed(name string) (DiskClass, bool) {
	return lookup(name, diskName, s.Disks, BuiltinDisks)
}

func (s *Spec) diskNames() []string { return catalog(diskName, s.Disks, BuiltinDisks) }

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

// String is how a class is shown: "standard (500 IOPS, 60M/s, 2ms)".
func (d DiskClass) String() string {
	return fmt.Sprintf("%s (%d IOPS, %s/s, %s)", d.Name, d.IOPS, d.Throughput, d.Latency)
}

// FileSystem is the volume's file system after defaults.
func (v Volume) FileSystem() string {
	switch {
	case v.FS != "":
		return v.FS
	case v.Count > 1:
		return "btrfs"
	}
	return "xfs"
}

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
		if vol.Count < 0 || vol.Count > MaxDisksInRAID {
			v.add(vp+".count", "expected 1 to %d disks, got %d", MaxDisksInRAID, vol.Count)
		}
		if vol.FS != "" && !slices.Contains(FileSystems, vol.FS) {
			v.add(vp+".fs", "expected one of %s, got %q", strings.Join(FileSystems, ", "), vol.FS)
		} else if vol.Count > 1 && vol.FS != "" && vol.FS != "btrfs" {
			v.add(vp+".fs", "%d striped disks are one btrfs volume (raid0; there is no md here), got %q", vol.Count, vol.FS)
		}
	}
	for _, ref := range []struct{ field, name string }{{"datadir", st.Datadir}, {"redo", st.Redo}, {"binlog", st.Binlog}, {"tmpdir", st.Tmpdir}} {
		if ref.name != "" && names[ref.name] == "" && len(st.Volumes) > 0 {
			v.add(p+"."+ref.field, "unknown volume %q (volumes: %s)", ref.name, strings.Join(keys(names), ", "))
		}
	}
}
