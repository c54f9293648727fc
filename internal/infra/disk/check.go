package disk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/workload/fio"
)

// Measured is a volume measured against its class: fio's random 4K reads
// from its device, one at a time (latency) and many (IOPS).
type Measured struct {
	Node          string    `json:"node"`
	Volume        string    `json:"volume"`
	TargetIOPS    float64   `json:"target_iops"`
	IOPS          float64   `json:"iops"`
	TargetLatency float64   `json:"target_latency_ms"`
	LatencyP50    float64   `json:"latency_p50_ms"`
	Cached        bool      `json:"cached,omitempty"` // the host cache may answer some reads
	OK            bool      `json:"ok"`
	Error         string    `json:"error,omitempty"`
	At            time.Time `json:"at"`
	// OnHost: measured on a remote host's own disk, which holds the
	// node's files there (nothing is emulated): the figures are the host's,
	// the targets what the spec's volume asks; a comparison, not judged.
	OnHost bool `json:"on_host,omitempty"`
}

// Targets are what a volume's reads should measure: the disks' IOPS (their
// burst IOPS while a new disk's bucket is full) summed over a stripe, no
// more than the machine's own caps over its disks (m; nil: none), and the
// class's latency.
func Targets(v *plan.Volume, m *plan.Machine) (iops, latencyMs float64) {
	c := v.Class
	per := float64(c.IOPS)
	if b := c.Burst; b != nil && b.IOPS > c.IOPS {
		per = float64(b.IOPS)
	}
	if bps := float64(c.ThroughputBytes()); bps > 0 {
		per = min(per, bps/probeBlock)
	}
	iops = per * float64(len(v.Disks))
	if m != nil && m.DiskIOPS > 0 {
		iops = min(iops, float64(m.DiskIOPS))
	}
	if m != nil && m.DiskBps > 0 {
		iops = min(iops, float64(m.DiskBps)/probeBlock)
	}
	return iops, float64(c.LatencyDuration().Microseconds()) / 1000
}

// Judge compares a volume's measured figures with its targets: IOPS within
// ± 10 % (at least 10 % under, when the host cache may answer), the median
// latency within + 20 % (a file system's and loop device's own time)
// or - 10 %.
func Judge(m Measured) Measured {
	iopsOK := m.IOPS >= 0.9*m.TargetIOPS && (m.Cached || m.IOPS <= 1.1*m.TargetIOPS)
	latOK := m.Cached || (m.LatencyP50 >= 0.9*m.TargetLatency && m.LatencyP50 <= 1.2*m.TargetLatency+0.1)
	m.OK = m.Error == "" && iopsOK && latOK
	return m
}

// Problem explains a volume off its class ("" when it is not).
func (m Measured) Problem() string {
	switch {
	case m.Error != "":
		return fmt.Sprintf("%s %s volume: not measured: %s", m.Node, m.Volume, m.Error)
	case m.OK:
		return ""
	}
	return fmt.Sprintf("%s %s volume: measured %.0f IOPS (target %.0f) and %.2f ms per read alone (target %.2f ms)",
		m.Node, m.Volume, m.IOPS, m.TargetIOPS, m.LatencyP50, m.TargetLatency)
}

const (
	probeBlock    = 4096
	probeRamp     = 100 * time.Millisecond
	probeLatency  = 200 * time.Millisecond
	probeIOPS     = 500 * time.Millisecond
	probeDepthPer = 16 // outstanding reads per disk
	probesAtOnce  = 3
)

// Check measures every volume of the plan (probesAtOnce at a time: more
// starve each other of this computer's cores; about a second each),
// records the result in the lab (Last) and writes a line per volume to
// log; an unmeasurable volume (the daemon dead) fails it. On remote hosts
// (on gives each by name) it measures instead the disk of each node that
// the spec gives volumes, against them (checkHosts).
func Check(ctx context.Context, p *plan.Plan, on func(string) host.Host, log io.Writer) ([]Measured, error) {
	if log == nil {
		log = io.Discard
	}
	if p.Mode == plan.ModeSSH {
		return checkHosts(ctx, p, on, log)
	}
	if p.Disks == nil {
		return nil, nil
	}
	vols := p.AllVolumes()
	out := make([]Measured, len(vols))
	var wg sync.WaitGroup
	slots := make(chan struct{}, probesAtOnce)
	for i, nv := range vols {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			out[i] = Measure(ctx, p, nv.Node, nv.Volume)
		}()
	}
	wg.Wait()
	var failed []string
	for _, m := range out {
		switch {
		case m.Error != "":
			failed = append(failed, m.Problem())
		case !m.OK:
			fmt.Fprintf(log, "warning: %s: the machine is busy or the disk daemon starved; what is measured now carries the difference\n", m.Problem())
		default:
			fmt.Fprintf(log, "volume %s/%s: %.0f IOPS (target %.0f), %.2f ms per read alone (target %.2f ms)\n",
				m.Node, m.Volume, m.IOPS, m.TargetIOPS, m.LatencyP50, m.TargetLatency)
		}
	}
	if err := save(p, out); err != nil {
		return out, err
	}
	if len(failed) > 0 {
		return out, fmt.Errorf("emulated disks do not answer:\n  %s", strings.Join(failed, "\n  "))
	}
	return out, ctx.Err()
}

// Last is the lab's last disk check (none before the first).
func Last(p *plan.Plan) []Measured {
	var out []Measured
	if b, err := os.ReadFile(checkFile(p)); err == nil {
		_ = json.Unmarshal(b, &out)
	}
	return out
}

// checkFile is where a lab keeps its last disk check: beside its disks, or
// in the lab's directory here when its hosts are remote.
func checkFile(p *plan.Plan) string {
	if p.Disks != nil {
		return filepath.Join(filepath.Dir(p.Disks.Config), "measured.json")
	}
	return filepath.Join(p.Dir, "disks-measured.json")
}

func save(p *plan.Plan, out []Measured) error {
	b, _ := json.MarshalIndent(out, "", "  ")
	return os.WriteFile(checkFile(p), append(b, '\n'), 0o644)
}

// Measure runs fio's random reads against one volume's device: read only,
// direct, so neither the file system nor the page cache stands between;
// one read at a time (its latency), then many (IOPS), each after a ramp
// (fio's first tenth of a second starts its IOs).
func Measure(ctx context.Context, p *plan.Plan, n *plan.Node, v *plan.Volume) Measured {
	var machine *plan.Machine
	if h, ok := p.Host(n.Host); ok {
		machine = h.Machine
	}
	iops, lat := Targets(v, machine)
	m := Measured{Node: n.Name, Volume: v.Name, TargetIOPS: iops, TargetLatency: lat, At: time.Now().UTC(), Cached: v.Class.CachingPolicy() != "none"}
	loops := loopsOf(p.Disks.Device(v.Device))
	if len(loops) == 0 {
		m.Error = "no loop device"
		return m
	}
	out, err := exec.CommandContext(ctx, "fio", probeArgs(loops[0], probeDepthPer*len(v.Disks), "--readonly")...).Output()
	if err != nil {
		m.Error = fmt.Sprintf("fio on %s: %v", loops[0], err)
		return m
	}
	if m.LatencyP50, m.IOPS, err = parseProbe(out); err != nil {
		m.Error = fmt.Sprintf("fio on %s: %v", loops[0], err)
		return m
	}
	return Judge(m)
}

// probeArgs are fio's arguments for the probe of file: random 4K reads,
// direct, one at a time (latency), then depth at once (IOPS), each after
// a ramp (fio's first tenth of a second starts its IOs).
func probeArgs(file string, depth int, extra ...string) []string {
	ms := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) + "ms" }
	return append(append([]string{"--filename=" + file}, extra...), "--rw=randread", "--bs="+strconv.Itoa(probeBlock),
		"--ioengine=libaio", "--direct=1", "--time_based", "--ramp_time="+ms(probeRamp), "--output-format=json",
		"--name=alone", "--iodepth=1", "--runtime="+ms(probeLatency),
		"--name=deep", "--stonewall", "--iodepth="+strconv.Itoa(depth), "--runtime="+ms(probeIOPS))
}

// parseProbe reads the probe's median latency alone and its IOPS deep.
func parseProbe(out []byte) (p50Ms, iops float64, err error) {
	jobs, err := fio.ParseJobs(fio.Test{Name: "probe", RW: "randread"}, out)
	if err == nil && len(jobs) < 2 {
		err = fmt.Errorf("%d jobs in fio's output, not 2", len(jobs))
	}
	if err != nil {
		return 0, 0, err
	}
	return jobs[0].P50Ms, jobs[1].IOPS, nil
}

// hostProbeSize is the file the probe of a remote host's disk reads: laid
// out by fio, removed after.
const hostProbeSize = "64M"

// checkHosts measures, every host at once, the disk under the directory of
// each node the spec gives volumes, and compares it with each volume (the
// node's files are all on that disk). A host not measured is said, not a
// failure: nothing there is emulated to be broken.
func checkHosts(ctx context.Context, p *plan.Plan, on func(string) host.Host, log io.Writer) ([]Measured, error) {
	var nodes []*plan.Node
	for i := range p.Nodes {
		if len(p.Nodes[i].Asked) > 0 {
			nodes = append(nodes, &p.Nodes[i])
		}
	}
	if len(nodes) == 0 {
		return nil, nil
	}
	each := make([][]Measured, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Go(func() { each[i] = MeasureHost(ctx, on(n.Host), n) })
	}
	wg.Wait()
	var out []Measured
	for _, ms := range each {
		out = append(out, ms...)
		if len(ms) == 0 {
			continue
		}
		if m := ms[0]; m.Error != "" {
			fmt.Fprintf(log, "warning: %s: its host's disk not measured: %s\n", m.Node, m.Error)
			continue
		}
		for _, m := range ms {
			fmt.Fprintf(log, "%s: the host's own disk holds the %s volume: %.0f IOPS, %.2f ms per read alone; the spec's (%s) asks %.0f IOPS, %.2f ms\n",
				m.Node, m.Volume, m.IOPS, m.LatencyP50, volumeOf(nodes, m), m.TargetIOPS, m.TargetLatency)
		}
	}
	if err := save(p, out); err != nil {
		return out, err
	}
	return out, ctx.Err()
}

func volumeOf(nodes []*plan.Node, m Measured) string {
	for _, n := range nodes {
		for _, v := range n.Asked {
			if n.Name == m.Node && v.Name == m.Volume {
				return v.String()
			}
		}
	}
	return ""
}

// MeasureHost measures the disk under node n's directory on its remote
// host with the probe (as deep as the node's widest volume would be), and
// returns it against each volume the spec gives the node.
func MeasureHost(ctx context.Context, h host.Host, n *plan.Node) []Measured {
	depth := 0
	for _, v := range n.Asked {
		depth = max(depth, probeDepthPer*len(v.Disks))
	}
	file := path.Join(n.Dir, "disk-probe")
	at := time.Now().UTC()
	out, err := h.Run(ctx, append([]string{"fio"}, probeArgs(file, depth, "--size="+hostProbeSize)...), nil)
	rmErr := h.RemoveAll(context.WithoutCancel(ctx), file)
	var lat, iops float64
	if err == nil {
		lat, iops, err = parseProbe(out)
	}
	err = errors.Join(err, rmErr)
	var ms []Measured
	for _, v := range n.Asked {
		tIOPS, tLat := Targets(&v, nil) // the host's own disk: nothing emulated
		m := Measured{Node: n.Name, Volume: v.Name, TargetIOPS: tIOPS, TargetLatency: tLat, IOPS: iops, LatencyP50: lat, OnHost: true, At: at}
		if err != nil {
			m.Error = err.Error()
		}
		ms = append(ms, m)
	}
	return ms
}
