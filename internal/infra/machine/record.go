package machine

import (
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
	"github.com/hadrill/hadrill/internal/stats"
)

// Sample is one host over one sampling period of a run.
type Sample struct {
	T           float64 // seconds since the recording started (end of the period)
	Host        string
	Cores       float64 // CPU used over the period, in cores
	Throttled   float64 // share of the period its processes waited for the CPU quota
	MemoryBytes int64   // memory charged at the end of the period
	OOMKills    int     // memory-limit kills since the recording started
	NICs        []NICRate
	Disks       []DiskRate
}

// DiskRate is what one disk did over a period.
type DiskRate struct {
	Name, Volume   string
	IOPSCap        int
	ClassLatencyMs float64
	IOPS, Bps      float64
	// StorageIOPS are the IOs that reached the storage behind the host's
	// cache (IOPS less the reads the cache answered).
	StorageIOPS float64
	LatencyMs   float64 // mean time per IO (0: no IO)
	Util        float64 // share of the period it had IOs in flight
}

func diskRates(a, b Usage) []DiskRate {
	dt := b.At.Sub(a.At).Seconds()
	var out []DiskRate
	for _, db := range b.Disks {
		r := DiskRate{Name: db.Name, Volume: db.Volume, IOPSCap: db.IOPSCap, ClassLatencyMs: db.ClassLatencyMs}
		for _, da := range a.Disks {
			if da.Name != db.Name || dt <= 0 || db.Ops < da.Ops || db.Bytes < da.Bytes || db.TicksMs < da.TicksMs || db.BusyMs < da.BusyMs {
				continue
			}
			ops := float64(db.Ops - da.Ops)
			r.IOPS, r.Bps = ops/dt, 8*float64(db.Bytes-da.Bytes)/dt
			r.StorageIOPS = r.IOPS
			if hits := db.CacheHits - da.CacheHits; db.CacheHits >= da.CacheHits && float64(hits) <= ops {
				r.StorageIOPS = (ops - float64(hits)) / dt
			}
			r.Util = min(float64(db.BusyMs-da.BusyMs)/1000/dt, 1)
			if ops > 0 {
				r.LatencyMs = float64(db.TicksMs-da.TicksMs) / ops
			}
		}
		out = append(out, r)
	}
	return out
}

// NICRate is what a host sent and received on one NIC over a period.
type NICRate struct {
	Name, Network string
	RateBps       int64   // the NIC's cap (0: none)
	TxBps, RxBps  float64 // bits per second
}

// nicRates are the bits per second between two readings of a host's NICs.
func nicRates(a, b Usage) []NICRate {
	dt := b.At.Sub(a.At).Seconds()
	var out []NICRate
	for _, nb := range b.NICs {
		r := NICRate{Name: nb.Name, Network: nb.Network, RateBps: nb.RateBps}
		for _, na := range a.NICs {
			if na.Name == nb.Name && dt > 0 && nb.Tx >= na.Tx && nb.Rx >= na.Rx {
				r.TxBps, r.RxBps = 8*float64(nb.Tx-na.Tx)/dt, 8*float64(nb.Rx-na.Rx)/dt
			}
		}
		out = append(out, r)
	}
	return out
}

// Reader reads a host's counters (false: the host is not measured).
type Reader func(host string) (Usage, bool)

// Recorder samples every host's counters at a fixed period while a run runs.
type Recorder struct {
	stop    chan struct{}
	done    chan struct{}
	mu      sync.Mutex
	samples []Sample
}

// Record starts sampling hosts every period; Stop ends it. A host is
// measured from its first answer on (a remote host's first reading may
// miss its second: it connects then); one that never answers, or a lab
// whose hosts are not measured, gives no samples.
func Record(read Reader, hosts []plan.Host, every time.Duration) *Recorder {
	r := &Recorder{stop: make(chan struct{}), done: make(chan struct{})}
	go r.loop(read, hosts, every)
	return r
}

func (r *Recorder) loop(read Reader, hosts []plan.Host, every time.Duration) {
	defer close(r.done)
	start := time.Now()
	first, prev := map[string]Usage{}, map[string]Usage{}
	tick := time.NewTicker(every)
	defer tick.Stop()
	sample := func() {
		for _, h := range hosts {
			a, measured := prev[h.Name]
			u, ok := read(h.Name)
			switch {
			case !ok:
				continue
			case !measured: // its first answer: what the next is measured against
				first[h.Name], prev[h.Name] = u, u
				continue
			}
			s := Sample{T: u.At.Sub(start).Seconds(), Host: h.Name, Cores: Cores(a, u), MemoryBytes: u.MemoryBytes,
				OOMKills: u.OOMKills - first[h.Name].OOMKills, NICs: nicRates(a, u), Disks: diskRates(a, u)}
			if dt := u.At.Sub(a.At); dt > 0 && u.Throttled >= a.Throttled {
				s.Throttled = float64(u.Throttled-a.Throttled) / float64(dt)
			}
			prev[h.Name] = u
			r.mu.Lock()
			r.samples = append(r.samples, s)
			r.mu.Unlock()
		}
	}
	sample() // every host's first reading
	for {
		select {
		case <-r.stop:
			sample() // the last part-period
			return
		case <-tick.C:
			sample()
		}
	}
}

// Stop ends the recording and returns every sample.
func (r *Recorder) Stop() []Sample {
	select {
	case <-r.stop:
	default:
		close(r.stop)
	}
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.samples
}

// Summary is one host over a whole run, beside its machine's caps.
type Summary struct {
	Host    string        `json:"host"`
	Machine *plan.Machine `json:"machine,omitempty"`
	// CPU used, in cores: mean, 95th percentile and maximum of the periods.
	CPUMean float64 `json:"cpu_mean"`
	CPUP95  float64 `json:"cpu_p95"`
	CPUMax  float64 `json:"cpu_max"`
	// AtCap is the share of periods the host used ≥ 95 % of its CPU quota.
	AtCap            float64       `json:"cpu_at_cap,omitempty"`
	ThrottledSeconds float64       `json:"throttled_seconds,omitempty"`
	MemoryPeakBytes  int64         `json:"memory_peak_bytes"`
	OOMKills         int           `json:"oom_kills,omitempty"`
	NICs             []NICSummary  `json:"nics,omitempty"`
	Disks            []DiskSummary `json:"disks,omitempty"`
}

// DiskSummary is one emulated disk over a run: its IOPS (mean and highest
// period) against its class's cap, its throughput, the mean time per IO,
// how busy it was, and the share of the run it sat at its IOPS cap.
type DiskSummary struct {
	Name      string  `json:"name"`
	Volume    string  `json:"volume"`
	IOPSCap   int     `json:"iops_cap"`
	IOPSMean  float64 `json:"iops_mean"`
	IOPSMax   float64 `json:"iops_max"`
	MBpsMean  float64 `json:"mbps_mean"` // megabits per second
	LatencyMs float64 `json:"latency_ms"`
	// ClassLatencyMs is the class's time per IO: LatencyMs above it is
	// queueing (or a busy machine).
	ClassLatencyMs float64 `json:"class_latency_ms"`
	Util           float64 `json:"util"`
	AtCap          float64 `json:"at_cap"`
}

// NICSummary is one NIC over a run: its cap, what crossed it (bytes), and
// the mean and highest rate of the periods, each direction.
type NICSummary struct {
	Name      string  `json:"name"`
	Network   string  `json:"network"`
	RateBps   int64   `json:"rate_bps,omitempty"`
	TxBytes   float64 `json:"tx_bytes"`
	RxBytes   float64 `json:"rx_bytes"`
	TxMeanBps float64 `json:"tx_mean_bps"`
	TxMaxBps  float64 `json:"tx_max_bps"`
	RxMeanBps float64 `json:"rx_mean_bps"`
	RxMaxBps  float64 `json:"rx_max_bps"`
}

// Summarize reduces a run's samples to one line per host, in plan order.
func Summarize(samples []Sample, hosts []plan.Host) []Summary {
	by := map[string][]Sample{}
	for _, s := range samples {
		by[s.Host] = append(by[s.Host], s)
	}
	var out []Summary
	for _, h := range hosts {
		ss := by[h.Name]
		if len(ss) == 0 {
			continue
		}
		sum := Summary{Host: h.Name, Machine: h.Machine}
		var cores []float64
		var prevT float64
		atCap := 0
		sum.Disks, sum.NICs = summarizeDisks(ss), summarizeNICs(ss)
		for _, s := range ss {
			cores = append(cores, s.Cores)
			sum.CPUMean += s.Cores
			sum.CPUMax = max(sum.CPUMax, s.Cores)
			sum.ThrottledSeconds += s.Throttled * (s.T - prevT)
			prevT = s.T
			sum.MemoryPeakBytes = max(sum.MemoryPeakBytes, s.MemoryBytes)
			sum.OOMKills = max(sum.OOMKills, s.OOMKills)
			if h.Machine != nil && s.Cores >= 0.95*h.Machine.CPUs {
				atCap++
			}
		}
		sum.CPUMean /= float64(len(ss))
		sort.Float64s(cores)
		sum.CPUP95 = stats.Percentile(cores, 95)
		if h.Machine != nil {
			sum.AtCap = float64(atCap) / float64(len(ss))
		}
		out = append(out, sum)
	}
	return out
}

// Warnings name what a run's hosts suffered that its figures depend on: a
// memory-limit kill, or a CPU quota the host sat at for most of the run.
func Warnings(sums []Summary) []string {
	var out []string
	for _, s := range sums {
		switch {
		case s.OOMKills > 0 && s.Machine != nil:
			out = append(out, fmt.Sprintf("host %s: %d process(es) killed by the memory limit of its machine %s", s.Host, s.OOMKills, s.Machine))
		case s.OOMKills > 0:
			out = append(out, fmt.Sprintf("host %s: %d process(es) killed by the kernel's out-of-memory killer", s.Host, s.OOMKills))
		}
		for _, d := range s.Disks {
			if d.AtCap >= 0.5 {
				out = append(out, fmt.Sprintf("host %s: disk %s (%s) at its IOPS cap (%d) %.0f %% of the run: it was the bottleneck",
					s.Host, d.Name, d.Volume, d.IOPSCap, 100*d.AtCap))
			}
		}
		if s.Machine != nil && s.AtCap >= 0.5 {
			out = append(out, fmt.Sprintf("host %s: at its machine's CPU quota (%s cores) %.0f %% of the run: its CPU was the bottleneck",
				s.Host, spec.FormatCores(s.Machine.CPUs), 100*s.AtCap))
		}
	}
	return out
}

// byName keeps one entry per name, in the order names first appear.
type byName[T any] struct {
	m     map[string]*T
	order []string
}

// get returns name's entry, made by first when it is new.
func (b *byName[T]) get(name string, first func() T) *T {
	if b.m == nil {
		b.m = map[string]*T{}
	}
	e, ok := b.m[name]
	if !ok {
		v := first()
		e = &v
		b.m[name] = e
		b.order = append(b.order, name)
	}
	return e
}

// summarizeNICs reduces one host's samples to a line per NIC: bytes each
// way over the run, mean and highest rate.
func summarizeNICs(ss []Sample) []NICSummary {
	var nics byName[NICSummary]
	var prevT float64
	for _, s := range ss {
		for _, r := range s.NICs {
			n := nics.get(r.Name, func() NICSummary { return NICSummary{Name: r.Name, Network: r.Network, RateBps: r.RateBps} })
			n.TxBytes += r.TxBps / 8 * (s.T - prevT)
			n.RxBytes += r.RxBps / 8 * (s.T - prevT)
			n.TxMaxBps, n.RxMaxBps = max(n.TxMaxBps, r.TxBps), max(n.RxMaxBps, r.RxBps)
		}
		prevT = s.T
	}
	span := ss[len(ss)-1].T
	var out []NICSummary
	for _, name := range nics.order {
		n := nics.m[name]
		if span > 0 {
			n.TxMeanBps, n.RxMeanBps = 8*n.TxBytes/span, 8*n.RxBytes/span
		}
		out = append(out, *n)
	}
	return out
}

// summarizeDisks reduces one host's samples to a line per disk.
func summarizeDisks(ss []Sample) []DiskSummary {
	var disks byName[DiskSummary]
	n := map[string]float64{}
	ios := map[string]float64{}
	for _, s := range ss {
		for _, r := range s.Disks {
			d := disks.get(r.Name, func() DiskSummary {
				return DiskSummary{Name: r.Name, Volume: r.Volume, IOPSCap: r.IOPSCap, ClassLatencyMs: r.ClassLatencyMs}
			})
			n[r.Name]++
			d.IOPSMean += r.IOPS
			d.IOPSMax = max(d.IOPSMax, r.IOPS)
			d.MBpsMean += r.Bps / 1e6
			d.LatencyMs += r.LatencyMs * r.IOPS // weighted by IOs
			ios[r.Name] += r.IOPS
			d.Util += r.Util
			if r.IOPSCap > 0 && r.IOPS >= 0.95*float64(r.IOPSCap) {
				d.AtCap++
			}
		}
	}
	var out []DiskSummary
	for _, name := range disks.order {
		d, k := disks.m[name], n[name]
		if ios[name] > 0 {
			d.LatencyMs /= ios[name]
		}
		d.IOPSMean, d.MBpsMean, d.Util, d.AtCap = d.IOPSMean/k, d.MBpsMean/k, d.Util/k, d.AtCap/k
		out = append(out, *d)
	}
	return out
}
