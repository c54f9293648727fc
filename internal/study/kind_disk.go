package study

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/workload"
	"github.com/hadrill/hadrill/internal/workload/fio"
)

// diskKind is the step kind disk: one fio test on a node's emulated volume (by default the first
// node with volumes, its first volume, the 1 GB file test).
var diskKind = &stepKind{
	name:       "disk",
	tool:       "fio",
	serverless: true,
	least:      func(st Step, sc Scale) time.Duration { return time.Duration(sc.Time+st.IdleBefore) * time.Second },
	fields:     []string{"node", "volume", "test", "idle_before"},
	metrics:    []string{"seconds", "iops", "mbps", "p50_ms"},
	local:      true,
	step: func(st Step, add func(string, string, ...any)) {
		if _, ok := fio.Named(st.Test); st.Test != "" && !ok {
			add("test", "expected one of %s, got %q", strings.Join(fio.Names(), ", "), st.Test)
		}
		if st.IdleBefore < 0 || st.IdleBefore > 3600 {
			add("idle_before", "expected 0 to 3600 seconds, got %d", st.IdleBefore)
		}
	},
	scale: func(st Step, sc Scale, add func(string, string, ...any)) {
		if t, _ := fio.Named(st.Test); !t.File && st.Test != "" && (sc.Time < 1 || sc.Time > 3600) {
			add("time", "expected 1 to 3600 seconds (step %s), got %d", st.Name, sc.Time)
		}
	},
	measure: func(ctx context.Context, m measurement) ([]Sample, error) {
		st := m.step
		var nv *plan.NodeVolume
		for _, x := range m.lab.Plan().AllVolumes() {
			if (st.Node == "" || x.Node.Name == st.Node) && (st.Volume == "" || x.Volume.Name == st.Volume) {
				nv = &x
				break
			}
		}
		if nv == nil {
			return nil, fmt.Errorf("no volume %q on node %q (the variant needs storage)", st.Volume, st.Node)
		}
		if st.IdleBefore > 0 { // the volume idles, as before a benchmark started after a pause
			if sleepCtx(ctx, time.Duration(st.IdleBefore)*time.Second); ctx.Err() != nil {
				return nil, ctx.Err()
			}
		}
		test, _ := fio.Named(testName(st))
		p := workload.DiskParams{Volumes: []string{nv.Node.Name + "/" + nv.Volume.Name}, Tests: []string{test.Name},
			Time: time.Duration(max(m.scale.Time, 1)) * time.Second, Runs: 1}
		out, err := workload.DiskBench(ctx, m.lab, []plan.NodeVolume{*nv}, []fio.Test{test}, p, m.opts.Command, io.Discard)
		if err != nil || len(out.Results) == 0 {
			return nil, errors.Join(err, errIf(err == nil, "no fio result"))
		}
		r := out.Results[0]
		return samples(st, out.RunID, "seconds", r.Seconds, "iops", r.IOPS, "mbps", r.MBps, "p50_ms", r.P50Ms), nil
	},
	describe: func(st Step, metric string) string {
		if metric == "seconds" {
			return fmt.Sprintf("Seconds of fio's %s test", testName(st))
		}
		return fmt.Sprintf("fio's %s test, %s", testName(st), metric)
	},
}

func testName(st Step) string {
	if st.Test == "" {
		return "file1g"
	}
	return st.Test
}
