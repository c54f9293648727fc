package main

import (
	"strings"
	"testing"

	"github.com/hadrill/hadrill/internal/golden"
	"github.com/hadrill/hadrill/internal/netem"
	"github.com/hadrill/hadrill/internal/workload"
	"github.com/hadrill/hadrill/internal/workload/slap"
)

// TestPrintTables: the text of a slap sweep and of a WAN check (golden):
// a link on target, one off it on a busy machine, one on top of remote
// machines' own round trip, and one broken with nothing measured.
func TestPrintTables(t *testing.T) {
	var out strings.Builder
	printSlap(&out, &workload.SlapOutcome{RunID: "20261129-080000-aaaa", Target: "lb", Results: []slap.Point{
		{Concurrency: 1, AvgS: 0.512, MinS: 0.5, MaxS: 0.53, QueriesPerClient: 1000, QPS: 1953.1},
		{Concurrency: 50, AvgS: 2.25, MinS: 2.1, MaxS: 2.6, QueriesPerClient: 20, QPS: 444.4}}})
	out.WriteString("\n")
	printLinks(&out, []netem.Measured{
		{Link: "east-west", From: "db1", To: "db3", TargetMs: 100, P50Ms: 100.4, P99Ms: 101.2, MinMs: 100.1, MaxMs: 101.9, Samples: 21, OK: true, Usable: true, Tolerance: 3},
		{Link: "east-west", From: "db3", To: "db1", TargetMs: 100, P50Ms: 104.2, P99Ms: 109, MinMs: 100.2, MaxMs: 112, Samples: 21, Failed: 1, Usable: true, Tolerance: 3},
		{Link: "dc1-dc2", From: "a", To: "b", TargetMs: 70, P50Ms: 70.9, P99Ms: 71.5, MinMs: 70.6, MaxMs: 72, Samples: 21, OK: true, Usable: true, Tolerance: 2.4, BaseMs: 0.31},
		{Link: "dc1-dc2", From: "b", To: "a", TargetMs: 70, NotMeasured: "every probe failed: connection refused"},
	})
	golden.Check(t, "tables.txt", []byte(out.String()))
}
