package disk

import (
	"context"
	"io"
	"os"
	"os/exec"
	"testing"

	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
)

func TestTargets(t *testing.T) {
	std, _ := (&spec.Spec{}).DiskNamed("standard")
	slowBytes := spec.DiskClass{Name: "slow", IOPS: 5000, Throughput: "4M", Latency: "1ms"}
	bursty := spec.DiskClass{Name: "b", IOPS: 500, Throughput: "100M", Latency: "2ms", Burst: &spec.Burst{IOPS: 3500, Duration: "30m"}}
	sixteen := make([]string, 16)
	for _, c := range []struct {
		v         plan.Volume
		m         *plan.Machine
		iops, lat float64
	}{
		{plan.Volume{Class: std, Disks: []string{"a", "b"}}, nil, 1000, 2},
		{plan.Volume{Class: slowBytes, Disks: []string{"a"}}, nil, 4 << 20 / probeBlock, 1}, // the throughput cap binds first
		{plan.Volume{Class: bursty, Disks: []string{"a"}}, nil, 3500, 2},                    // a new disk's bucket is full
		{plan.Volume{Class: std, Disks: sixteen}, &plan.Machine{DiskIOPS: 3200}, 3200, 2},   // 16 × 500 IOPS on a machine capped at 3,200
		{plan.Volume{Class: std, Disks: sixteen}, &plan.Machine{DiskBps: 4 << 20}, 4 << 20 / probeBlock, 2},
		{plan.Volume{Class: std, Disks: []string{"a", "b"}}, &plan.Machine{DiskIOPS: 3200}, 1000, 2}, // below the machine's cap
	} {
		iops, lat := Targets(&c.v, c.m)
		if iops != c.iops || lat != c.lat {
			t.Errorf("%s ×%d: targets %.0f IOPS, %.2f ms; want %.0f, %.2f", c.v.Class.Name, len(c.v.Disks), iops, lat, c.iops, c.lat)
		}
	}
}

func TestJudge(t *testing.T) {
	for _, c := range []struct {
		m    Measured
		want bool
	}{
		{Measured{TargetIOPS: 1000, IOPS: 960, TargetLatency: 2, LatencyP50: 2.15}, true},
		{Measured{TargetIOPS: 1000, IOPS: 850, TargetLatency: 2, LatencyP50: 2.15}, false},  // too few IOPS
		{Measured{TargetIOPS: 1000, IOPS: 1200, TargetLatency: 2, LatencyP50: 2.15}, false}, // more than the cap: not paced
		{Measured{TargetIOPS: 1000, IOPS: 5000, TargetLatency: 2, LatencyP50: 0.3, Cached: true}, true},
		{Measured{TargetIOPS: 1000, IOPS: 1000, TargetLatency: 2, LatencyP50: 3}, false}, // slow
		{Measured{TargetIOPS: 1000, IOPS: 1000, TargetLatency: 2, LatencyP50: 2, Error: "no loop device"}, false},
	} {
		if got := Judge(c.m); got.OK != c.want {
			t.Errorf("%+v judged OK=%v, want %v", c.m, got.OK, c.want)
		}
	}
	if p := (Measured{Node: "db1", Volume: "data", Error: "fio: x"}).Problem(); p != "db1 data volume: not measured: fio: x" {
		t.Errorf("problem: %q", p)
	}
}

// here is a remote host that is this computer: argv run here.
type here struct{ host.Host }

func (here) Run(ctx context.Context, argv []string, _ io.Reader) ([]byte, error) {
	return exec.CommandContext(ctx, argv[0], argv[1:]...).Output()
}
func (here) RemoveAll(_ context.Context, path string) error { return os.RemoveAll(path) }

// A remote host's own disk measured by the real fio against each volume
// the spec gives the node; the probe's file is removed.
func TestMeasureHost(t *testing.T) {
	if _, err := exec.LookPath("fio"); err != nil {
		t.Skip("no fio")
	}
	std, _ := (&spec.Spec{}).DiskNamed("standard")
	slow := spec.DiskClass{Name: "slow", IOPS: 100, Throughput: "10M", Latency: "5ms"}
	n := &plan.Node{Name: "db1", Dir: t.TempDir(), Asked: []plan.Volume{{Name: "data", Class: std, Disks: []string{"a", "b"}}, {Name: "logs", Class: slow, Disks: []string{"c"}}}}
	ms := MeasureHost(context.Background(), here{}, n)
	if len(ms) != 2 || ms[0].Volume != "data" || ms[1].Volume != "logs" {
		t.Fatalf("measured %+v", ms)
	}
	for _, m := range ms {
		if m.Error != "" || !m.OnHost || m.IOPS <= 0 || m.LatencyP50 <= 0 || m.IOPS != ms[0].IOPS {
			t.Errorf("%+v", m)
		}
	}
	if ms[0].TargetIOPS != 1000 || ms[1].TargetIOPS != 100 || ms[1].TargetLatency != 5 {
		t.Errorf("targets: %+v", ms)
	}
	if left, _ := os.ReadDir(n.Dir); len(left) > 0 {
		t.Errorf("left in the node's directory: %v", left)
	}
	// a host where the probe fails: said on every volume
	n.Dir = "/proc"
	for _, m := range MeasureHost(context.Background(), here{}, n) {
		if m.Error == "" {
			t.Errorf("no error: %+v", m)
		}
	}
}
