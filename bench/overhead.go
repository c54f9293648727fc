package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"text/tabwriter"

	"github.com/hadrill/hadrill/internal/lab"
	"github.com/hadrill/hadrill/internal/workload/sysbench"
)

// overhead: TPS through `hadrill bench sysbench` vs the same sysbench
// command run by hand from the client host, interleaved.
func overhead(bin string, runs int) {
	work, home := scratchLab(bin, "bover")
	defer runCleanups()
	common := []string{"--tables", "4", "--table-size", "10000", "--threads", "4", "--time", "10", "--rand-type", "uniform"}
	hd := func() float64 {
		var out struct {
			Results []struct{ TPS float64 } `json:"results"`
		}
		check(json.Unmarshal([]byte(run(bin, append([]string{"--home", home, "bench", "sysbench", "--name", "bover", "-o", "json"}, common...)...)), &out))
		return out.Results[0].TPS
	}
	hd() // prepares the dataset both variants use
	l, err := lab.Open(home, "bover", nil)
	check(err)
	lb := l.Plan().LoadBalancers[0]
	pw, err := os.ReadFile(l.Plan().Secrets.App)
	check(err)
	cfg := filepath.Join(work, "raw.cnf")
	check(os.WriteFile(cfg, []byte(sysbench.ConfigFile("app", string(pw[:len(pw)-1]))), 0o600))
	p := sysbench.Params{Workload: "oltp_read_write", Tables: 4, TableSize: 10000, Time: 10, RandType: "uniform", Interval: 1}
	raw := func() float64 {
		argv := sysbench.Argv(p, sysbench.Target{Host: lb.Address, Port: lb.Port, Config: cfg}, 4, "run")
		out, err := l.Prov.Host(l.Plan().Client.Host).Run(context.Background(), argv, nil)
		check(err)
		r, err := sysbench.Parse(string(out))
		check(err)
		return r.TPS
	}
	paired("overhead", runs, "tps", "hadrill bench sysbench", hd, "raw sysbench (same argv)", raw)
}

// paired measures hadrill's figure (hd) against the same tool run by hand
// (raw), interleaved (which goes first alternating, so that drift hits
// both alike), and prints both with the median of the paired ratios
// against the target of 0.97.
func paired(scenario string, runs int, unit, hdName string, hd func() float64, rawName string, raw func() float64) {
	var hds, raws, ratios []float64
	for i := 1; i <= runs; i++ {
		var h, r float64
		if i%2 == 1 {
			h, r = hd(), raw()
		} else {
			r, h = raw(), hd()
		}
		hds, raws, ratios = append(hds, h), append(raws, r), append(ratios, h/r)
		fmt.Fprintf(os.Stderr, "%s %d/%d: %s %.1f %s, %s %.1f %s (%.3f)\n", scenario, i, runs, hdName, h, unit, rawName, r, unit, h/r)
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "scenario\tvariant\truns\tmedian %s\tmin\tmax\tratio\t\n", unit)
	fmt.Fprintf(w, "%s\t%s\t%d\t%.1f\t%.1f\t%.1f\t%s\t\n", scenario, hdName, runs, median(hds), minf(hds), maxf(hds), strconv.FormatFloat(median(ratios), 'f', 3, 64))
	fmt.Fprintf(w, "%s\t%s\t%d\t%.1f\t%.1f\t%.1f\t1.000\t\n", scenario, rawName, runs, median(raws), minf(raws), maxf(raws))
	w.Flush()
	fmt.Printf("\ntarget: %s ≥ 0.97 × %s (median of paired ratios): %v\n", hdName, rawName, median(ratios) >= 0.97)
}
