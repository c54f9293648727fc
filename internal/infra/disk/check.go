package disk

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

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
}

// Targets are what a volume's reads should measure: the disks' IOPS (their
// burst IOPS while a new disk's bucket is full) summed over a stripe, and
// the class's latency.
func Targets(v *plan.Volume) (iops, latencyMs float64) {
	c := v.Class
	per := float64(c.IOPS)
	if b := c.Burst; b != nil && b.IOPS > c.IOPS {
		per = float64(b.IOPS)
	}
	if bps := float64(c.ThroughputBytes()); bps > 0 {
		per = min(per, bps/probeBlock)
	}
	return per * float64(len(v.Disks)), float64(c.LatencyDuration().Microseconds()) / 1000
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
// log; an unmeasurable volume (the daemon dead) fails it.
func Check(ctx context.Context, p *plan.Plan, log io.Writer) ([]Measured, error) {
	if p.Disks == nil {
		return nil, nil
	}
	if log == nil {
		log = io.Discard
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
	b, _ := json.MarshalIndent(out, "", "  ")
	if err := os.WriteFile(checkFile(p), append(b, '\n'), 0o644); err != nil {
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
	if p.Disks == nil {
		return out
	}
	if b, err := os.ReadFile(checkFile(p)); err == nil {
		_ = json.Unmarshal(b, &out)
	}
	return out
}

func checkFile(p *plan.Plan) string {
	return filepath.Join(filepath.Dir(p.Disks.Config), "measured.json")
}

// Measure runs fio's random reads against one volume's device: read only,
// direct, so neither the file system nor the page cache stands between;
// one read at a time (its latency), then many (IOPS), each after a ramp
// (fio's first tenth of a second starts its IOs).
func Measure(ctx context.Context, p *plan.Plan, n *plan.Node, v *plan.Volume) Measured {
	iops, lat := Targets(v)
	m := Measured{Node: n.Name, Volume: v.Name, TargetIOPS: iops, TargetLatency: lat, At: time.Now().UTC(), Cached: v.Class.CachingPolicy() != "none"}
	loops := loopsOf(p.Disks.Device(v.Device))
	if len(loops) == 0 {
		m.Error = "no loop device"
		return m
	}
	ms := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) + "ms" }
	out, err := exec.CommandContext(ctx, "fio", "--filename="+loops[0], "--readonly", "--rw=randread", "--bs="+strconv.Itoa(probeBlock),
		"--ioengine=libaio", "--direct=1", "--time_based", "--ramp_time="+ms(probeRamp), "--output-format=json",
		"--name=alone", "--iodepth=1", "--runtime="+ms(probeLatency),
		"--name=deep", "--stonewall", "--iodepth="+strconv.Itoa(probeDepthPer*len(v.Disks)), "--runtime="+ms(probeIOPS)).Output()
	if err != nil {
		m.Error = fmt.Sprintf("fio on %s: %v", loops[0], err)
		return m
	}
	jobs, err := fio.ParseJobs(fio.Test{Name: "probe", RW: "randread"}, out)
	if err != nil || len(jobs) < 2 {
		m.Error = fmt.Sprintf("fio on %s: %v", loops[0], err)
		return m
	}
	m.LatencyP50, m.IOPS = jobs[0].P50Ms, jobs[1].IOPS
	return Judge(m)
}
