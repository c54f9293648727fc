package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"
)

// machines: two standalone servers on 0.5-CPU and 1-CPU machines, a
// read-only sysbench sweep against each (interleaved), the CPU each host
// used as its cgroup counted it, and the throughput ratio; then a server
// whose machine has less memory than its buffer pool fills, to see the
// kill reported as such.
func machines(bin string, runs int) {
	spec := tempSpec(`machines: [{name: half, cpus: 0.5, memory: 1G}, {name: one, cpus: 1, memory: 1G}]
clusters: [{name: da, kind: standalone, machine: half}, {name: db, kind: standalone, machine: one}]
`)
	_, home := scratchLab(bin, "bmach", "-f", spec)
	type sample struct{ tps, cpuP95, cpuMean float64 }
	got := map[string][]sample{}
	for i := 1; i <= runs; i++ {
		for _, node := range []string{"da1", "db1"} {
			id, tps := sweep(bin, home, "bmach", "--target", node, "--workload", "oltp_read_only",
				"--threads", "8", "--time", "8", "--tables", "2", "--table-size", "10000")
			host := hostSummary(home, id, node)
			got[node] = append(got[node], sample{tps, host.CPUP95, host.CPUMean})
			fmt.Fprintf(os.Stderr, "run %d/%d %s: %.0f tps, cpu mean %.3f p95 %.3f\n", i, runs, node, tps, host.CPUMean, host.CPUP95)
		}
	}
	col := func(node string, f func(sample) float64) []float64 {
		var v []float64
		for _, s := range got[node] {
			v = append(v, f(s))
		}
		return v
	}
	tps := func(s sample) float64 { return s.tps }
	p95 := func(s sample) float64 { return s.cpuP95 }
	mean := func(s sample) float64 { return s.cpuMean }
	halfP95, oneP95 := median(col("da1", p95)), median(col("db1", p95))
	ratio := median(col("db1", tps)) / median(col("da1", tps))

	killed, detail := memoryKill(bin)
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "scenario\tmachine\truns\tmedian tps\tcpu mean\tcpu p95 (cores)\tp95 ÷ quota\tratio\t")
	fmt.Fprintf(w, "machines\t0.5 CPU, oltp_read_only 8 threads\t%d\t%.0f\t%.3f\t%.3f\t%.2f\t1.00\t\n", runs, median(col("da1", tps)), median(col("da1", mean)), halfP95, halfP95/0.5)
	fmt.Fprintf(w, "machines\t1 CPU, oltp_read_only 8 threads\t%d\t%.0f\t%.3f\t%.3f\t%.2f\t%.2f\t\n", runs, median(col("db1", tps)), median(col("db1", mean)), oneP95, oneP95/1, ratio)
	w.Flush()
	fmt.Printf("memory limit below the server's needs: %s\n", detail)
	fmt.Printf("\ntarget: a 0.5-CPU host uses ≤ 55 %% of a core: %v (%.1f %%); a memory-limit kill is reported as such: %v\n",
		halfP95 <= 0.55, 100*halfP95, killed)
}

type hostUse struct {
	Host    string  `json:"host"`
	CPUMean float64 `json:"cpu_mean"`
	CPUP95  float64 `json:"cpu_p95"`
	Disks   []struct {
		Name string  `json:"name"`
		Util float64 `json:"util"`
	} `json:"disks"`
}

func hostSummary(home, runID, host string) hostUse {
	b, err := os.ReadFile(filepath.Join(home, "runs", runID, "run.json"))
	check(err)
	var r struct {
		Hosts []hostUse `json:"hosts"`
	}
	check(json.Unmarshal(b, &r))
	for _, h := range r.Hosts {
		if h.Host == host {
			return h
		}
	}
	fail("run %s recorded no host %s", runID, host)
	return hostUse{}
}

// memoryKill fills a 1G buffer pool on a 256M machine and reads what the
// failing command said.
func memoryKill(bin string) (bool, string) {
	spec := tempSpec(`machines: [{name: cramped, cpus: 2, memory: 256M}]
clusters: [{name: db, kind: standalone, machine: cramped, config: {innodb_buffer_pool_size: 1G}}]
`)
	_, home := scratchLab(bin, "boom", "-f", spec)
	t0 := time.Now()
	c := exec.Command(bin, "--home", home, "bench", "sysbench", "--name", "boom", "--target", "db1", "--threads", "1", "--time", "5",
		"--tables", "4", "--table-size", "400000")
	out, err := c.CombinedOutput()
	took := time.Since(t0).Seconds()
	code := 0
	if x, ok := err.(*exec.ExitError); ok {
		code = x.ExitCode()
	}
	msg := "no kill"
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "killed by the memory limit") {
			msg = strings.TrimPrefix(line, "hadrill: ")
		}
	}
	return code == 1 && msg != "no kill", fmt.Sprintf("exit %d after %.1f s: %s", code, took, msg)
}
