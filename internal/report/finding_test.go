package report

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/drill"
	"github.com/hadrill/hadrill/internal/golden"
	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/workload"
	"github.com/hadrill/hadrill/internal/workload/sysbench"
)

// sweep is a stored sysbench run at one thread count: 30 seconds around
// level (a 5 s ramp first).
func sweep(id string, threads int, level float64) Run {
	r := rand.New(rand.NewPCG(uint64(id[0]), uint64(threads)))
	var ivs []sysbench.Interval
	for i := 0; i < 30; i++ {
		v := level + r.NormFloat64()*level/100
		if i < 5 {
			v = level * float64(i+1) / 10
		}
		ivs = append(ivs, sysbench.Interval{T: float64(i + 1), TPS: v})
	}
	return Run{Run: &results.Run{ID: id, Kind: "sysbench", Lab: "lab" + id, Started: time.Unix(0, 0)}, Params: `{"workload":"oltp_read_write"}`,
		Part: sweepPartOf([]sysbench.Point{{Threads: threads, TPS: level, P99: 20, Runs: []sysbench.Result{{Intervals: ivs}}}})}
}

// sweepPartOf is a sweep of these points, as read from the store.
func sweepPartOf(pts []sysbench.Point) *sweepPart {
	return &sweepPart{Points: pts, TPS: tpsFigures(pts)}
}

// TestFinding: the report's first words: a drill's verdict with its gap
// and losses (a longest pause after the writes were back said as such), each sweep's peak with its interval, a second sweep against
// the first with whether the change stands out of the noise.
func TestFinding(t *testing.T) {
	synced := 3.2
	d := Run{Run: &results.Run{ID: "d1", Kind: "drill", Lab: "demo", Warnings: []string{"db2 sat at its CPU quota 80 % of the run"}},
		Part: &drillPart{Result: &drill.Result{Scenario: "failover", Cluster: "db", Profile: "durable", WritesPerS: 100, WritesAcked: 1234,
			Gap: drill.Gap{Seconds: 0.6}, ChecksumsAgree: true, SyncedS: &synced, Passed: true}}}
	failed := Run{Run: &results.Run{ID: "d2", Kind: "drill", Lab: "demo"},
		Part: &drillPart{Result: &drill.Result{Scenario: "partition", Cluster: "db", Profile: "durable", WritesPerS: 100, WritesAcked: 50, LostCount: 2,
			Gap: drill.Gap{Seconds: 9.5, Open: true}, Problems: []string{"2 acknowledged writes lost"}}}}
	fault := time.Unix(100, 0)
	back := 1.52
	later := Run{Run: &results.Run{ID: "d3", Kind: "drill", Lab: "demo"},
		Part: &drillPart{Result: &drill.Result{Scenario: "crash", Cluster: "db", Profile: "wan", WritesPerS: 50, WritesAcked: 560, FaultAt: fault,
			Gap: drill.Gap{From: fault.Add(4840 * time.Millisecond), Seconds: 2.13}, WritesBackS: &back, ChecksumsAgree: true, Passed: true}}}
	commits := Run{Run: &results.Run{ID: "c", Kind: "commit-latency", Lab: "demo"}, Part: &commitsPart{Commits: []workload.Latency{{Target: "db1", Count: 50, P50: 0.31, P99: 0.9}}}}
	got := strings.Join(Finding([]Run{d, failed, later, sweep("a", 16, 1000), sweep("b", 16, 1200), sweep("c", 16, 1000), commits}), "\n")
	golden.Check(t, "finding", []byte(got+"\n"))
	for _, want := range []string{"passed", "0.60 s", "0 of 1234 acknowledged writes lost", "writes never resumed",
		"writes were back 1.52 s after the fault, then stopped for 2.13 s from 4.84 s after it", "+20 % at 16 threads (beyond noise)", "+0 % at 16 threads (within noise)"} {
		if !strings.Contains(got, want) {
			t.Errorf("finding lacks %q:\n%s", want, got)
		}
	}
}
