package main

import (
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/consistency"
	"github.com/hadrill/hadrill/internal/drill"
	"github.com/hadrill/hadrill/internal/drill/schedule"
	"github.com/hadrill/hadrill/internal/golden"
	"github.com/hadrill/hadrill/internal/lb"
	"github.com/hadrill/hadrill/internal/workload"
)

func sec(v float64) *float64 { return &v }

// TestPrintDrill: a drill's text (golden) as it passed, as it lost writes
// with its history's anomalies and TPC-C beside it (and what its load
// balancer did), as a chaos drill with its steps, and as a failover
// whose longest pause came after the writes were back (a phase with no
// write acknowledged shows no latency).
func TestPrintDrill(t *testing.T) {
	at := time.Date(2026, 11, 29, 8, 0, 3, 0, time.UTC)
	passed := &drill.Result{RunID: "20261129-080000-aaaa", Scenario: "failover", Cluster: "db", Profile: "durable", Targets: []string{"db1"},
		WritesPerS: 100, Writes: 1200, WritesAcked: 1190, WritesFailed: 10, Reads: 600, ReadsFailed: 4,
		Gap: drill.Gap{Seconds: 0.62}, WritesBackS: sec(0.62), ReformedS: sec(0.55), SyncedS: sec(3.1),
		Codes:          []drill.CodeSpan{{Code: "2013", Writes: 6, Reads: 2, First: 0.01, Last: 0.4}, {Code: "1047", Writes: 4, Reads: 2, First: 0.2, Last: 0.6}},
		Phases:         []drill.Phase{{Name: "before", Seconds: 3, AckedPerS: 100, P50Ms: 1.2, P99Ms: 4}, {Name: "during", Seconds: 3.1, AckedPerS: 96.8, Failed: 10, P50Ms: 1.5, P99Ms: 9}},
		Audit:          []drill.NodeAudit{{Node: "db1", State: drill.NodeVerified, Checked: 1190}, {Node: "db2", State: drill.NodeVerified, Checked: 1190}},
		ChecksumsAgree: true, Verdict: drill.VerdictPassed, Passed: true, FaultAt: at,
		Balancer: &drill.BalancerLog{Name: "lb", Events: []lb.Event{
			{At: at.Add(300 * time.Millisecond), Instance: "lb", Proxy: "writes", Server: "db1", What: "down", Reason: "Layer4 connection problem, info: \"Connection refused\"", Sessions: 5},
			{At: at.Add(300 * time.Millisecond), Instance: "lb", Proxy: "reads", Server: "db1", What: "down", Reason: "Layer4 connection problem, info: \"Connection refused\""},
			{At: at.Add(2900 * time.Millisecond), Instance: "lb", Proxy: "writes", Server: "db1", What: "up", Reason: "Layer7 check passed, code: 200"}}}}
	lost := &drill.Result{RunID: "20261129-090000-bbbb", Scenario: "partition", Cluster: "db", Profile: "relaxed", Targets: []string{"db3"},
		WritesPerS: 100, Writes: 3000, WritesAcked: 2900, Gap: drill.Gap{Seconds: 9.5, Open: true},
		Audit:     []drill.NodeAudit{{Node: "db1", State: drill.NodeMissing, Checked: 2900, Missing: []int64{7, 8}, Reason: "its server restarted with innodb_flush_log_at_trx_commit=2"}, {Node: "db3", State: drill.NodeLagging, Checked: 2900, Missing: []int64{9}, Reason: "its applier is 3 s behind"}},
		LostCount: 2, SemiSyncFallbacks: []string{"db1 from 10.2 s to 12.0 s"}, Reversals: []string{"db2 at 11.0 s: Reversing history: 289022 -> 289019"},
		Workload: "bank", Consistency: &consistency.Result{Model: "serializable", Ops: 400, OK: 150, Fail: 40, Info: 10, Forbidden: []string{"wrong-total"},
			Anomalies: []consistency.Anomaly{{Type: "wrong-total", Count: 3, Unit: "reads", Forbidden: true, Example: "read 7 saw a total of 498, not 500"}}},
		FirstAnomaly: &drill.Placed{Type: "wrong-total", AtS: 2.5, Where: "2.5 s after the partition, while db3 was cut off"},
		TPCC:         &workload.TPCCUnderFault{Warehouses: 1, Clients: 2, RunSeconds: 5, NewOrders: 420, TpmC: 1800, Runs: []float64{2100, 0, 1900}, Failed: 1, ByCode: map[string]int{"1213": 3}, Check: &workload.TPCCCheck{Failures: []string{"condition 3.3.2.1 failed on warehouse 1"}}},
		Verdict:      drill.VerdictLost, Problems: []string{"2 acknowledged writes lost", "the bank workload's history shows wrong-total"}}
	chaos := &drill.Result{RunID: "20261129-100000-cccc", Scenario: drill.ChaosDrill, Cluster: "db", Profile: "durable", WritesPerS: 30, Writes: 900, WritesAcked: 900,
		Gap: drill.Gap{Seconds: 1.1}, WritesBackS: sec(1.1), SyncedS: sec(20),
		Schedule: &schedule.Schedule{Seed: 42, Faults: []string{"kill", "partition"}, Steps: make([]schedule.Step, 3)},
		Applied: []drill.Applied{{Step: 1, Says: "kill db2", AtS: 5, HealedS: 12}, {Step: 2, Says: "partition db1 from db2, db3", AtS: 20.4, LateS: 0.4, HealedS: 31, Skipped: []string{"pause db2: it is restarting"}},
			{Step: 3, Says: "kill db3", AtS: 40, HealedS: 52, HealFailed: "db3 did not rejoin within 90 s"}},
		Interventions: []string{"the quorum given back to db1 (pc.bootstrap)"}, ChecksumsAgree: true, Interrupted: true, Verdict: drill.VerdictInterrupted}
	later := &drill.Result{RunID: "20261129-110000-dddd", Scenario: "crash", Cluster: "db", Profile: "wan", Targets: []string{"db1"},
		WritesPerS: 50, Writes: 600, WritesAcked: 560, WritesFailed: 40, FaultAt: at,
		Gap: drill.Gap{From: at.Add(4840 * time.Millisecond), To: at.Add(6970 * time.Millisecond), Seconds: 2.13}, WritesBackS: sec(1.52), ReformedS: sec(1.3), SyncedS: sec(9),
		Phases:         []drill.Phase{{Name: "before", Seconds: 3, AckedPerS: 50, P50Ms: 2, P99Ms: 5}, {Name: "during", Seconds: 0.2, Failed: 8}, {Name: "after", Seconds: 9, AckedPerS: 48, P50Ms: 2.2, P99Ms: 6}},
		Audit:          []drill.NodeAudit{{Node: "db2", State: drill.NodeVerified, Checked: 560}},
		ChecksumsAgree: true, Verdict: drill.VerdictPassed, Passed: true}
	var out strings.Builder
	for _, r := range []*drill.Result{passed, lost, chaos, later} {
		printDrill(&out, r)
		out.WriteString("\n")
	}
	golden.Check(t, "drill.txt", []byte(out.String()))
}
