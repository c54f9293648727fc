package main

import (
	"strings"
	"testing"

	"github.com/hadrill/hadrill/internal/golden"
	"github.com/hadrill/hadrill/internal/workload"
)

// TestPrintProbes: the text of the two-node probes (golden): a write's
// visibility without and with causal reads, bulk replication of two row
// counts, a conflict test that diverged and one that did not, and a probe
// of another kind as its JSON.
func TestPrintProbes(t *testing.T) {
	var out strings.Builder
	for _, o := range []*workload.ProbeOutcome{
		{RunID: "20261129-080000-aaaa", Results: []workload.Visibility{
			{From: "db1", To: "db2", SyncWait: 0, Count: 200, P50: 0.41, P95: 0.92, P99: 1.37, Max: 2.05, Polls: 1.32},
			{From: "db1", To: "db2", SyncWait: 1, Count: 200, P50: 0.83, P95: 1.21, P99: 1.6, Max: 3.4, Polls: 1}}},
		{RunID: "20261129-090000-bbbb", Results: []workload.Bulk{
			{From: "a", To: "b", Rows: 1000, WriteS: 0.73, VisibleS: 0.74, AfterLastS: 0.01},
			{From: "a", To: "b", Rows: 10000, WriteS: 12.1, VisibleS: 13.1, AfterLastS: 1.02}}},
		{RunID: "20261129-100000-cccc", Results: []workload.Conflict{
			{A: "a", B: "b", Keys: workload.KeysShared, Rows: 10, Acked: 400, WriteS: 1.2, SettleS: 0.3, Diverged: 3, ChecksumA: "10:8812", ChecksumB: "10:9120", Lost: 17},
			{A: "a", B: "b", Keys: workload.KeysOwn, Rows: 10, Acked: 400, WriteS: 1.1, SettleS: 0.2, ChecksumA: "20:7711", ChecksumB: "20:7711"}}},
		{RunID: "20261129-110000-dddd", Results: []workload.Receipt{{Primary: "db1", Replica: "db2", Commits: 50, AckedSemiSync: 50, AvgMs: 102.1, P99Ms: 104}}},
	} {
		printProbeText(&out, o)
		out.WriteString("\n")
	}
	golden.Check(t, "probes.txt", []byte(out.String()))
}
