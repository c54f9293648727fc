package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/hadrill/hadrill/internal/lab"
	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/workload"
	"github.com/hadrill/hadrill/internal/workload/sysbench"
)

// disks: fio on volumes of one, two and four striped 500-IOPS standard
// disks (16k random writes at queue depth 16, interleaved), the latency of
// one IO at a time against the class's 2 ms, the disk daemon's CPU per
// 1,000 IOPS; then sysbench oltp_insert on the durable profile with
// everything on one disk, on two striped, and the redo log on a disk of
// its own (document 000's placement).
func disks(bin string, runs int) {
	spec := tempSpec(`clusters:
  - {name: one, kind: standalone, storage: {volumes: [{name: data, disk: standard}]}}
  - {name: two, kind: standalone, storage: {volumes: [{name: data, disk: standard, count: 2}]}}
  - {name: four, kind: standalone, storage: {volumes: [{name: data, disk: standard, count: 4}]}}
`)
	_, home := scratchLab(bin, "bdisk", "-f", spec)
	l, err := lab.Open(home, "bdisk", nil)
	check(err)
	mount := func(node string) string {
		n, _ := l.Plan().Node(node)
		return n.Volumes[0].Mount
	}
	daemonPid, _ := strconv.Atoi(strings.TrimSpace(string(must(os.ReadFile(l.Plan().Disks.Daemon.PidFile)))))
	iops := map[string][]float64{}
	var cpuPer1k []float64
	for i := 1; i <= runs; i++ {
		for _, node := range []string{"one1", "two1", "four1"} {
			cpu0 := cpuSeconds(daemonPid)
			r := fio(mount(node), "randwrite", 16, 8)
			iops[node] = append(iops[node], r.iops)
			if node == "four1" && r.iops > 0 {
				cpuPer1k = append(cpuPer1k, (cpuSeconds(daemonPid)-cpu0)/8/(r.iops/1000))
			}
			fmt.Fprintf(os.Stderr, "run %d/%d %s: %.0f IOPS (p50 %.2f ms)\n", i, runs, node, r.iops, r.p50)
		}
	}
	var qd1, deep []float64
	for i := 1; i <= runs; i++ {
		r := fio(mount("one1"), "randread", 1, 5)
		qd1 = append(qd1, r.p50)
		deep = append(deep, fio(mount("four1"), "randwrite", 32, 8).iops)
	}
	one, two, four := median(iops["one1"]), median(iops["two1"]), median(iops["four1"])
	lat := median(qd1)
	tps, util, cpuMs, ios := placement(bin, runs)

	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "scenario\tvolume (500-IOPS standard disks)\truns\tmedian IOPS\tmin\tmax\tratio\t")
	for _, c := range []struct {
		name, label string
		v           float64
	}{{"one1", "1 disk", one}, {"two1", "2 striped (RAID 0, 64K, xfs)", two}, {"four1", "4 striped", four}} {
		fmt.Fprintf(w, "disks fio\t%s, 16k random write, QD16\t%d\t%.0f\t%.0f\t%.0f\t%.2f\t\n", c.label, runs, c.v, minf(iops[c.name]), maxf(iops[c.name]), c.v/one)
	}
	fmt.Fprintf(w, "disks fio\t4 striped, 16k random write, QD32\t%d\t%.0f\t%.0f\t%.0f\t%.2f\t\n", runs, median(deep), minf(deep), maxf(deep), median(deep)/one)
	w.Flush()
	fmt.Printf("QD1 16k random read on 1 disk: p50 %.2f ms (configured 2 ms, %+.1f %%); the disk daemon's CPU: %.1f %% of a core per 1,000 IOPS\n",
		lat, 100*(lat/2-1), 100*median(cpuPer1k))
	w = tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "\nscenario\tlayout (durable, oltp_insert, 4 threads)\truns\tmedian tps\tratio\tCPU ms/tx\tIOs/tx\tdisks busy (last run)\t")
	base := median(tps["all on one disk"])
	per := func(v []float64) string {
		if len(v) == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f", median(v))
	}
	for _, k := range []string{"all on one disk", "all on 2 striped", "redo log on a second disk"} {
		fmt.Fprintf(w, "disks sysbench\t%s\t%d\t%.1f\t%.2f\t%s\t%s\t%s\t\n", k, runs, median(tps[k]), median(tps[k])/base, per(cpuMs[k]), per(ios[k]), util[k])
	}
	w.Flush()
	fmt.Printf("\ntarget: one disk 500 IOPS ± 5 %%: %v (%.0f); 2 striped ≥ 1.9×: %v (%.2f×); 4 striped ≥ 3.7×: %v (%.2f×); QD1 p50 within ± 10 %% of 2 ms: %v (%.2f ms)\n",
		one >= 475 && one <= 525, one, two/one >= 1.9, two/one, four/one >= 3.7, four/one, lat >= 1.8 && lat <= 2.2, lat)
}

func must[T any](v T, err error) T {
	check(err)
	return v
}

type fioResult struct{ iops, p50 float64 }

// fio runs one fio job on a 256 MiB file in dir (direct IO).
func fio(dir, rw string, qd, secs int) fioResult {
	out := run("fio", "--name=bench", "--directory="+dir, "--size=256M", "--rw="+rw, "--bs=16k", "--iodepth="+strconv.Itoa(qd),
		"--ioengine=libaio", "--direct=1", "--runtime="+strconv.Itoa(secs), "--time_based", "--group_reporting", "--output-format=json")
	var r struct {
		Jobs []struct {
			Read, Write struct {
				IOPS float64 `json:"iops"`
				Clat struct {
					Percentile map[string]float64 `json:"percentile"`
				} `json:"clat_ns"`
			}
		} `json:"jobs"`
	}
	check(json.Unmarshal([]byte(out), &r))
	j := r.Jobs[0].Write
	if strings.Contains(rw, "read") {
		j = r.Jobs[0].Read
	}
	return fioResult{iops: j.IOPS, p50: j.Clat.Percentile["50.000000"] / 1e6}
}

// cpuSeconds is a process's CPU time so far.
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	check(err)
	f := strings.Fields(string(b)[strings.LastIndexByte(string(b), ')')+2:])
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // clock ticks (USER_HZ)
}

// placement: durable standalone servers with three layouts, an insert-heavy
// sweep on each in turn; transactions per second by layout, and how busy
// each disk of the layout was in its last run.
func placement(bin string, runs int) (tpsBy map[string][]float64, util map[string]string, cpuMs, ios map[string][]float64) {
	spec := tempSpec(`clusters:
  - {name: a, kind: standalone, profile: durable, storage: {volumes: [{name: data, disk: standard}]}}
  - {name: b, kind: standalone, profile: durable, storage: {volumes: [{name: data, disk: standard, count: 2}]}}
  - {name: c, kind: standalone, profile: durable, storage: {volumes: [{name: data, disk: standard}, {name: redo, disk: standard}], redo: redo}}
`)
	_, home := scratchLab(bin, "bplace", "-f", spec)
	layouts := map[string]string{"a1": "all on one disk", "b1": "all on 2 striped", "c1": "redo log on a second disk"}
	tpsBy, util, cpuMs, ios = map[string][]float64{}, map[string]string{}, map[string][]float64{}, map[string][]float64{}
	for i := 1; i <= runs; i++ {
		for _, node := range []string{"a1", "b1", "c1"} {
			id, tps := sweep(bin, home, "bplace", "--target", node, "--workload", "oltp_insert",
				"--threads", "4", "--time", "10", "--tables", "1", "--table-size", "1000")
			k := layouts[node]
			tpsBy[k] = append(tpsBy[k], tps)
			util[k] = diskUtil(home, id, node)
			if c, ok := costOf(home, id, 4); ok {
				cpuMs[k], ios[k] = append(cpuMs[k], c.CPUms), append(ios[k], c.IOs)
			}
			fmt.Fprintf(os.Stderr, "run %d/%d %s: %.1f tps\n", i, runs, k, tps)
		}
	}
	return tpsBy, util, cpuMs, ios
}

// costOf is what a transaction of a stored sweep cost the lab at a thread
// count (hadrill's own figure, as runs compare gives it: CPU of every host
// but the load generator's, IOs of every emulated disk).
func costOf(home, runID string, threads int) (workload.Cost, bool) {
	r, err := results.Load(home, runID)
	check(err)
	var pts []sysbench.Point
	check(json.Unmarshal(r.Results, &pts))
	c, ok := workload.Costs(home, r, pts)[threads]
	return c, ok && c.Known
}

// diskUtil is how busy each disk of a host was over a run ("data1 93 %,
// redo1 40 %"), from its run.json.
func diskUtil(home, runID, host string) string {
	var parts []string
	for _, d := range hostSummary(home, runID, host).Disks {
		parts = append(parts, fmt.Sprintf("%s %.0f %%", strings.TrimPrefix(d.Name, host+"-"), 100*d.Util))
	}
	return strings.Join(parts, ", ")
}
