package plan

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/hadrill/hadrill/internal/spec"
)

// Disks are a lab's emulated cloud disks: one daemon (`hadrill disk`)
// serves every volume as a file in its FUSE mount (its disks striped when
// it has several), each file is a loop device with a file system, mounted
// below Mounts (a shared mount, so mounts and unmounts reach the copies
// that every host's processes see).
type Disks struct {
	Daemon    Daemon `json:"daemon"`
	Config    string `json:"config"`     // disks.json: every disk the daemon serves
	ReadyFile string `json:"ready_file"` // written with its pid once mounted
	Images    string `json:"images"`     // the disks' backing files (sparse)
	Fuse      string `json:"fuse"`       // the daemon's mount: a file per disk
	Mounts    string `json:"mounts"`     // volumes are mounted below it
}

// NewDisks lays out the disks' files of the lab in dir.
func NewDisks(dir string) *Disks {
	d := filepath.Join(dir, "disks")
	return &Disks{Config: filepath.Join(d, "disks.json"), ReadyFile: filepath.Join(d, "daemon.ready"),
		Images: filepath.Join(d, "images"), Fuse: filepath.Join(d, "fuse"), Mounts: filepath.Join(dir, "volumes"),
		Daemon: Daemon{Dir: filepath.Join(d, "daemon"), LogFile: filepath.Join(d, "daemon.log"),
			PidFile: filepath.Join(d, "daemon.pid"), Marker: filepath.Join(d, "disks.json")}}
}

// Volume is part of a node's storage: Disks of a class, one file system.
type Volume struct {
	Name           string         `json:"name"`
	Class          spec.DiskClass `json:"class"`
	FS             string         `json:"fs"`
	AllocationUnit int64          `json:"allocation_unit"`
	Device         string         `json:"device"`           // its file in Disks.Fuse
	Disks          []string       `json:"disks"`            // names: images in Disks.Images
	Stripe         int64          `json:"stripe,omitempty"` // RAID 0 chunk when striped
	Mount          string         `json:"mount"`
}

// Holds reports whether path is on the volume (its mount or below it).
func (v Volume) Holds(path string) bool {
	return path == v.Mount || strings.HasPrefix(path, v.Mount+string(filepath.Separator))
}

// Size is what the volume holds: its disks' sizes together (striped).
func (v Volume) Size() int64 { return int64(len(v.Disks)) * v.Class.SizeBytes() }

// Image is a disk's backing file; Device a volume's file in the daemon's
// mount.
func (d *Disks) Image(disk string) string    { return filepath.Join(d.Images, disk+".img") }
func (d *Disks) Device(device string) string { return filepath.Join(d.Fuse, device) }

// String is how a volume is shown: "2× standard (500 IOPS, 60M/s, 2ms)
// striped 64K, xfs".
func (v Volume) String() string {
	s := fmt.Sprintf("%d× %s", len(v.Disks), v.Class)
	if v.Stripe > 0 {
		s += " striped " + spec.FormatSize(v.Stripe)
	}
	s += ", " + v.FS
	if v.AllocationUnit > 4096 {
		s += " " + spec.FormatSize(v.AllocationUnit) + " allocation unit"
	}
	return s
}

// AllVolumes lists every node's volumes (node name, volume).
func (p *Plan) AllVolumes() []NodeVolume {
	var out []NodeVolume
	for i := range p.Nodes {
		for j := range p.Nodes[i].Volumes {
			out = append(out, NodeVolume{Node: &p.Nodes[i], Volume: &p.Nodes[i].Volumes[j]})
		}
	}
	return out
}

// NodeVolume is a volume with its node.
type NodeVolume struct {
	Node   *Node
	Volume *Volume
}

// storage gives a node its volumes and places its datadir, redo log,
// binary log and tmpdir on them. Rootless labs cannot have them.
func (b *builder) storage(ci int, c spec.Cluster, n *Node) {
	st := c.Storage
	if st == nil || len(st.Volumes) == 0 {
		return
	}
	if b.p.Mode == ModeSSH { // the host's own disk, measured against what the spec asks
		b.p.Warnings = append(b.p.Warnings, fmt.Sprintf("clusters[%d].storage: disks are emulated on this computer only; on remote hosts %s's files are on the host's own disk, measured against the spec's volumes at up", ci, n.Name))
		for _, v := range st.Volumes {
			n.Asked = append(n.Asked, b.volume(n, v))
		}
		return
	}
	if b.p.Mode != ModeNetns {
		b.problems = append(b.problems, fmt.Sprintf("clusters[%d].storage: emulated disks need root (loop devices, mounts); remove storage to run rootless", ci))
		return
	}
	if b.p.Disks == nil {
		b.p.Disks = NewDisks(b.p.Dir)
	}
	mounts := map[string]string{}
	for _, v := range st.Volumes {
		vol := b.volume(n, v)
		vol.Device, vol.Mount = n.Name+"-"+v.Name, filepath.Join(b.p.Disks.Mounts, n.Name, v.Name)
		n.Volumes = append(n.Volumes, vol)
		mounts[v.Name] = vol.Mount
	}
	datadir, redo, binlog, tmpdir := st.Placement()
	n.DataDir = filepath.Join(mounts[datadir], "mysql")
	if redo != datadir {
		n.RedoDir = filepath.Join(mounts[redo], "redo")
	}
	if binlog != datadir {
		n.BinlogDir = filepath.Join(mounts[binlog], "binlog")
	}
	if st.Tmpdir != "" {
		n.TmpDir = filepath.Join(mounts[tmpdir], "tmp")
	}
}

// volume is a spec volume of node n: its class, file system and disks.
func (b *builder) volume(n *Node, v spec.Volume) Volume {
	class, _ := b.s.DiskNamed(v.Disk)
	vol := Volume{Name: v.Name, Class: class, FS: v.FileSystem(), AllocationUnit: v.AllocationBytes(), Stripe: v.StripeBytes()}
	for k := 1; k <= v.Disks(); k++ {
		vol.Disks = append(vol.Disks, fmt.Sprintf("%s-%s%d", n.Name, v.Name, k))
	}
	return vol
}

// Binlogs is where the node's binary logs are.
func (n *Node) Binlogs() string {
	if n.BinlogDir != "" {
		return n.BinlogDir
	}
	return n.DataDir
}
