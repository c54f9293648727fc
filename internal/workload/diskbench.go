package workload

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/stats"
	"github.com/hadrill/hadrill/internal/workload/fio"
)

// DiskResult is one fio test on one node's volume: the median of its runs
// and what the volume's class promises (0: no promise for that figure).
type DiskResult struct {
	Node   string `json:"node"`
	Volume string `json:"volume"`
	fio.Result
	Runs       int     `json:"runs"`
	TargetIOPS float64 `json:"target_iops,omitempty"`
	TargetMBps float64 `json:"target_mb_per_s,omitempty"`
	TargetMs   float64 `json:"target_ms,omitempty"`
	TargetSecs float64 `json:"target_seconds,omitempty"` // file1g: the file at the volume's throughput caps
}

// DiskOutcome is what `hadrill bench disk --output json` prints.
type DiskOutcome struct {
	RunID       string       `json:"run_id"`
	Interrupted bool         `json:"interrupted"`
	Results     []DiskResult `json:"results"`
}

// DiskParams are a disk benchmark's settings.
type DiskParams struct {
	Volumes []string      `json:"volumes"` // node/volume
	Tests   []string      `json:"tests"`
	Time    time.Duration `json:"time"`
	Runs    int           `json:"runs"`
}

// DiskBench runs fio's tests on each volume in turn, from the volume's own
// host (its machine's CPU and memory limits apply, as on a VM), in a
// directory it removes afterwards; each test runs runs times and the
// median is kept.
func DiskBench(ctx context.Context, l Lab, vols []plan.NodeVolume, tests []fio.Test, p DiskParams, command []string, log io.Writer) (_ *DiskOutcome, err error) {
	run, err := NewRun(ctx, l, results.DiskBench, command, p)
	if err != nil {
		return nil, err
	}
	defer abandonIfFailed(l, run, &err)
	out := &DiskOutcome{RunID: run.ID}
	for _, nv := range vols {
		for _, t := range tests {
			if ctx.Err() != nil {
				break
			}
			fmt.Fprintf(log, "%s %s volume: %s (%s)\n", nv.Node.Name, nv.Volume.Name, t.Name, t.About)
			r, err := diskTest(ctx, l, nv, t, p)
			if err != nil && ctx.Err() == nil {
				return nil, err
			}
			if r.Runs > 0 {
				out.Results = append(out.Results, r)
			}
		}
	}
	out.Interrupted = ctx.Err() != nil
	return out, Finish(l, run, out.Interrupted, out.Results)
}

func diskTest(ctx context.Context, l Lab, nv plan.NodeVolume, t fio.Test, p DiskParams) (DiskResult, error) {
	res := DiskResult{Node: nv.Node.Name, Volume: nv.Volume.Name}
	var machine *plan.Machine
	if h, ok := l.Plan().Host(nv.Node.Host); ok {
		machine = h.Machine
	}
	res.TargetIOPS, res.TargetMBps, res.TargetMs, res.TargetSecs = DiskTargets(nv.Volume, machine, t)
	dir := filepath.Join(nv.Volume.Mount, "hadrill-bench")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	var runs []fio.Result
	for i := 0; i < p.Runs && ctx.Err() == nil; i++ {
		_ = os.Remove(filepath.Join(dir, "file1g"))
		b, err := l.Host(nv.Node.Host).Run(ctx, fio.Argv(t, dir, p.Time), nil)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			return res, fmt.Errorf("fio %s on %s %s: %w", t.Name, nv.Node.Name, nv.Volume.Name, err)
		}
		r, err := fio.Parse(t, b)
		if err != nil {
			return res, err
		}
		runs = append(runs, r)
	}
	if len(runs) == 0 {
		return res, nil
	}
	key := func(r fio.Result) float64 { return r.IOPS }
	switch {
	case t.File:
		key = func(r fio.Result) float64 { return r.Seconds }
	case t.Depth == 1 && !t.Fsync:
		key = func(r fio.Result) float64 { return r.P50Ms }
	case t.Block >= 1<<20:
		key = func(r fio.Result) float64 { return r.MBps }
	}
	sort.Slice(runs, func(i, j int) bool { return key(runs[i]) < key(runs[j]) })
	res.Result, res.Runs = runs[stats.MedianIndex(len(runs))], len(runs) // the median run, whole
	return res, nil
}

// DiskPromise is a test's figure against what its volume's class promises.
type DiskPromise struct {
	Promised string  // in words, "3000 IOPS" ("": no promise for the test)
	Measured string  // the same figure measured, in the same words
	Ratio    float64 // measured / promised
	// LowerBetter: the figure is a time (one IO's latency, the whole
	// file's seconds), so a ratio above 1 falls short.
	LowerBetter bool
}

// Promise is the test's figure against its class's promise.
func (r DiskResult) Promise() DiskPromise {
	switch {
	case r.TargetIOPS > 0:
		return DiskPromise{fmt.Sprintf("%.0f IOPS", r.TargetIOPS), fmt.Sprintf("%.0f IOPS", r.IOPS), r.IOPS / r.TargetIOPS, false}
	case r.TargetMBps > 0:
		return DiskPromise{fmt.Sprintf("%.0f MB/s", r.TargetMBps), fmt.Sprintf("%.1f MB/s", r.MBps), r.MBps / r.TargetMBps, false}
	case r.TargetMs > 0:
		return DiskPromise{fmt.Sprintf("%.2f ms", r.TargetMs), fmt.Sprintf("%.2f ms", r.P50Ms), r.P50Ms / r.TargetMs, true}
	case r.TargetSecs > 0:
		return DiskPromise{fmt.Sprintf("%.1f s", r.TargetSecs), fmt.Sprintf("%.1f s", r.Seconds), r.Seconds / r.TargetSecs, true}
	}
	return DiskPromise{}
}

// Short says the figure falls short of the promise by more than the
// share tol (fewer IOPS or MB/s, a slower IO or file); Beyond, that it
// beats it by more (host caching and bursts can); no promise is neither.
func (p DiskPromise) Short(tol float64) bool {
	if p.LowerBetter {
		return p.Promised != "" && p.Ratio > 1+tol
	}
	return p.Promised != "" && p.Ratio < 1-tol
}

// Beyond says the figure beats the promise by more than tol (see Short).
func (p DiskPromise) Beyond(tol float64) bool {
	if p.LowerBetter {
		return p.Promised != "" && p.Ratio < 1-tol
	}
	return p.Promised != "" && p.Ratio > 1+tol
}

// DiskTargets are what a volume's class promises for a test: IOPS for the
// random tests (its disks' IOPS, or fewer where the throughput cap binds
// first), throughput for the sequential ones, the class's latency for one
// IO at a time, and the seconds the whole-file test takes at the
// throughput caps; no more than the machine's own caps over its disks (m;
// nil: none). Host caching and bursts can beat them.
func DiskTargets(v *plan.Volume, m *plan.Machine, t fio.Test) (iops, mbps, ms, secs float64) {
	c := v.Class
	n := float64(len(v.Disks))
	ops := float64(c.IOPS) * n
	bps := float64(c.ThroughputBytes()) * n
	if m != nil && m.DiskIOPS > 0 && (ops == 0 || float64(m.DiskIOPS) < ops) {
		ops = float64(m.DiskIOPS)
	}
	if m != nil && m.DiskBps > 0 && (bps == 0 || float64(m.DiskBps) < bps) {
		bps = float64(m.DiskBps)
	}
	if t.Block >= 1<<20 && ops > 0 { // large IOs count an operation per 256K
		bps = min(bps, ops*float64(256<<10))
	}
	switch {
	case t.File:
		if bps > 0 {
			secs = float64(fio.WholeFile) / bps
		}
	case t.Fsync:
	case t.Depth == 1:
		ms = float64(c.LatencyDuration().Microseconds()) / 1000
	case t.Block >= 1<<20:
		mbps = bps / 1e6
	default:
		iops = ops
		if bps > 0 {
			iops = min(iops, bps/float64(t.Block))
		}
	}
	return iops, mbps, ms, secs
}
