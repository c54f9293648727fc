package main

import (
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/backup"
	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/golden"
	"github.com/hadrill/hadrill/internal/netem"
	"github.com/hadrill/hadrill/internal/preflight"
	"github.com/hadrill/hadrill/internal/workload"
	"github.com/hadrill/hadrill/internal/workload/fio"
	"github.com/hadrill/hadrill/internal/workload/slap"
	"github.com/hadrill/hadrill/internal/workload/sysbench"
	"github.com/hadrill/hadrill/internal/workload/tpcc"
)

// TestPrintTables: the text of a slap sweep, a WAN check, a sysbench sweep
// (interrupted, a point partial) and a TPC-C run (golden); of the WAN check:
// a link on target, one off it on a busy machine, one on top of remote
// machines' own round trip, and one broken with nothing measured; a
// backup list with its archive's last recoverable time, and one empty; a
// disk benchmark against each kind of promise; a preflight of a host
// ready (with a warning) and one not reached.
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
	out.WriteString("\n")
	printSweep(&out, &workload.Outcome{RunID: "20261129-090000-bbbb", Target: "lb", Interrupted: true, Results: []sysbench.Point{
		{Threads: 1, TPS: 251.3, QPS: 5026, P50: 3.9, P95: 5.2, P99: 6.1, Runs: make([]sysbench.Result, 3)},
		{Threads: 64, TPS: 467.2, QPS: 9344, P50: 130, P95: 210.4, P99: 320.7, ErrPerSec: 0.05, Runs: make([]sysbench.Result, 1), Partial: true}}})
	out.WriteString("\n")
	printTPCC(&out, &workload.TPCCOutcome{RunID: "20261129-100000-cccc", Target: "lb", Warehouses: 1,
		Results: []tpcc.Point{tpccPoint(2, 11000, 11500, 12000), tpccPoint(4, 12700)}, Costs: map[int]workload.Cost{2: {CPUms: 2.85, Known: true}},
		Check: &workload.TPCCCheck{Failures: []string{"condition 3.3.2.1 failed on warehouse 1"}}})
	out.WriteString("\n")
	inUTC(t)
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	printBackups(&out, []backup.Info{
		{ID: "20261129-080000-db2", Node: "db2", Cluster: "db", Finished: now.Add(-time.Hour), Bytes: 48_300_000, BinlogInfo: mariadb.BinlogInfo{GTID: "1-1-1200"}},
		{ID: "20261129-083000-db3", Node: "db3", Cluster: "db", Finished: now.Add(-30 * time.Minute), Bytes: 51_000_000, BinlogInfo: mariadb.BinlogInfo{GTID: "1-1-5400"}}},
		[]*backup.ArchiveEnd{{Cluster: "db", Node: "db1", Last: now.Add(-1500 * time.Millisecond), Pos: "1-1-9001"}}, now)
	out.WriteString("\n")
	printBackups(&out, nil, nil, now)
	out.WriteString("\n")
	printDisk(&out, &workload.DiskOutcome{RunID: "20261129-110000-dddd", Interrupted: true, Results: []workload.DiskResult{
		{Node: "db1", Volume: "data", Result: fio.Result{Test: "randwrite16k", IOPS: 502, MBps: 7.8, P50Ms: 31.5, P99Ms: 42.1, Seconds: 10}, Runs: 3, TargetIOPS: 500},
		{Node: "db1", Volume: "data", Result: fio.Result{Test: "seqwrite1m", IOPS: 58, MBps: 58.7, P50Ms: 16.9, P99Ms: 20.2, Seconds: 10}, Runs: 3, TargetMBps: 60},
		{Node: "db1", Volume: "data", Result: fio.Result{Test: "lat4k", IOPS: 430, MBps: 1.7, P50Ms: 2.3, P99Ms: 3.1, Seconds: 10}, Runs: 3, TargetMs: 2},
		{Node: "db2", Volume: "os", Result: fio.Result{Test: "file1g", MBps: 55, Seconds: 18.6}, Runs: 1, TargetSecs: 17.9},
		{Node: "db2", Volume: "tmp", Result: fio.Result{Test: "randread4k", IOPS: 91000, MBps: 355, P50Ms: 0.02, P99Ms: 0.05, Seconds: 10}, Runs: 1}}})
	out.WriteString("\n")
	var warn strings.Builder
	printPreflight(&out, &warn, &preflight.Report{Inventory: "hosts.yaml", Hosts: []preflight.HostReport{
		{Name: "db1", Target: "root@198.18.5.11:22", Need: preflight.Need{Roles: []string{"db"}}, Reached: true, Installed: []string{"galera-4", "mariadb-server"},
			Facts:    &preflight.Facts{OS: "debian 12", Arch: "x86_64", CPUs: 2, MemBytes: 8 << 30, FreeBytes: 40 << 30, Skew: 3 * time.Millisecond, SkewError: time.Millisecond},
			Warnings: []string{"db1: its clock is 3 ms ahead of this computer's"}},
		{Name: "lb", Target: "root@198.18.5.101:22", Need: preflight.Need{Roles: []string{"lb", "client"}}, Problems: []string{"lb: cannot connect: connection refused"}}}})
	out.WriteString("(warnings)\n" + warn.String())
	golden.Check(t, "tables.txt", []byte(out.String()))
}
