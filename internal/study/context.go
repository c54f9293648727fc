package study

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hadrill/hadrill/internal/infra/machine"
	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/workload/sysbench"
)

// Context is what a study's report shows beside its figures, read from
// the runs its steps stored: what differs between the variants, every
// host of every variant as measured, the computer they all ran on, and
// sysbench's latency histograms.
type Context struct {
	Settings, Versions []results.Difference
	Hosts              []HostRow
	Computer           map[string]string // the physical machine: cpus, memory, kernel
	Histograms         []Histogram
}

// HostRow is one host of a variant's lab over the variant's first run:
// its machine, the CPU and memory it used, its disks and NICs.
type HostRow struct {
	Variant, Host, Machine, CPU, Memory, Disks, NICs string
}

// Histogram is one sysbench step at one thread count: each variant's
// latency buckets summed over its rounds.
type Histogram struct {
	Step     string
	Threads  int
	Variants map[string][]sysbench.Bucket
}

// Gather reads a study run's context from the run store (runs that are
// gone are left out).
func Gather(home string, res *Result) Context {
	var c Context
	cnf, vers := map[string]map[string]string{}, map[string]map[string]string{}
	hist := map[string]*Histogram{}
	histograms := map[string]bool{}
	for _, st := range res.Study.Steps {
		if k := kindOf(st); k != nil {
			histograms[st.Name] = k.histograms
		}
	}
	for _, v := range res.Variants {
		seen := map[string]bool{}
		first := true
		for _, x := range res.Samples {
			if x.Variant != v || x.RunID == "" || seen[x.RunID] {
				continue
			}
			seen[x.RunID] = true
			r, err := results.Load(home, x.RunID)
			if err != nil {
				continue
			}
			if first {
				first = false
				cnf[v], vers[v] = r.FirstSettings(), r.Versions
				c.Hosts = append(c.Hosts, hostRows(v, r, res.Inventory != "")...)
				if c.Computer == nil && res.Inventory == "" { // remote hosts: each its own machine
					c.Computer = r.Host
				}
			}
			if histograms[x.Step] {
				addHistograms(hist, x.Step, v, r)
			}
		}
	}
	c.Settings, c.Versions = results.Differences(cnf), results.Differences(vers)
	var keys []string
	for k := range hist {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		c.Histograms = append(c.Histograms, *hist[k])
	}
	return c
}

func hostRows(variant string, r *results.Run, remote bool) []HostRow {
	var sums []machine.Summary
	if b, err := json.Marshal(r.Hosts); err != nil || json.Unmarshal(b, &sums) != nil {
		return nil
	}
	var out []HostRow
	for _, s := range sums {
		own := "shares the computer"
		if remote {
			own = "a machine of its own"
		}
		row := HostRow{Variant: variant, Host: s.Host, Machine: own,
			CPU:    fmt.Sprintf("%.2f mean, %.2f p95", s.CPUMean, s.CPUP95),
			Memory: fmt.Sprintf("%.0f MiB peak", float64(s.MemoryPeakBytes)/(1<<20))}
		if s.Machine != nil {
			row.Machine = s.Machine.String()
		}
		var disks, nics []string
		for _, d := range s.Disks {
			disks = append(disks, fmt.Sprintf("%s (%s): %d IOPS cap, %.0f mean, %.0f %% busy", d.Name, d.Volume, d.IOPSCap, d.IOPSMean, 100*d.Util))
		}
		for _, n := range s.NICs {
			cap := "unlimited"
			if n.RateBps > 0 {
				cap = fmt.Sprintf("%.0f Mbit/s", float64(n.RateBps)/1e6)
			}
			nics = append(nics, fmt.Sprintf("%s (%s, %s): out %.1f, in %.1f Mbit/s mean", n.Name, n.Network, cap, n.TxMeanBps/1e6, n.RxMeanBps/1e6))
		}
		row.Disks, row.NICs = strings.Join(disks, "; "), strings.Join(nics, "; ")
		out = append(out, row)
	}
	return out
}

func addHistograms(hist map[string]*Histogram, step, variant string, r *results.Run) {
	var points []sysbench.Point
	if json.Unmarshal(r.Results, &points) != nil {
		return
	}
	for _, p := range points {
		key := fmt.Sprintf("%s@%06d", step, p.Threads)
		h := hist[key]
		if h == nil {
			h = &Histogram{Step: step, Threads: p.Threads, Variants: map[string][]sysbench.Bucket{}}
			hist[key] = h
		}
		for _, run := range p.Runs {
			h.Variants[variant] = mergeBuckets(h.Variants[variant], run.Histogram)
		}
	}
}

// mergeBuckets sums two histograms bucket by bucket (sysbench's buckets
// are fixed, so equal bounds are the same bucket).
func mergeBuckets(a, b []sysbench.Bucket) []sysbench.Bucket {
	by := map[float64]int64{}
	for _, x := range slices.Concat(a, b) {
		by[x.Value] += x.Count
	}
	out := make([]sysbench.Bucket, 0, len(by))
	for v, n := range by {
		out = append(out, sysbench.Bucket{Value: v, Count: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Value < out[j].Value })
	return out
}

// Limit is one thing a run measured at a limit: what (a host's CPU quota,
// a disk's IOPS cap, a NIC's rate, the computer's cores) and how much (a
// share: of the run, of the rate, of the cores).
type Limit struct {
	What  string  // "db3 at its 1-CPU quota"
	Share float64 // 0.78
	Of    string  // "of the run"
}

// Limits are what one run measured at a limit: the lab's hosts using most
// of the computer's cores, a host at its CPU quota half the run or more, a
// disk at its IOPS cap half the run or 90 % busy, a NIC at 80 % of its rate.
func Limits(r *results.Run) []Limit {
	var sums []machine.Summary
	if b, err := json.Marshal(r.Hosts); err != nil || json.Unmarshal(b, &sums) != nil {
		return nil
	}
	var out []Limit
	used := 0.0
	for _, s := range sums {
		used += s.CPUMean
	}
	if cpus, err := strconv.ParseFloat(r.Host["cpus"], 64); err == nil && cpus > 0 && used >= 0.85*cpus {
		out = append(out, Limit{What: "the lab's hosts, the load generator among them, used the computer's cores", Share: used / cpus, Of: "of its " + r.Host["cpus"] + " cores"})
	}
	for _, s := range sums {
		if s.AtCap >= 0.5 && s.Machine != nil {
			out = append(out, Limit{What: fmt.Sprintf("%s at its %s-CPU quota", s.Host, trimFloat(s.Machine.CPUs)), Share: s.AtCap, Of: "of the run"})
		}
		for _, d := range s.Disks {
			switch {
			case d.AtCap >= 0.5:
				out = append(out, Limit{What: fmt.Sprintf("%s's %s disk at its %d-IOPS cap", s.Host, d.Volume, d.IOPSCap), Share: d.AtCap, Of: "of the run"})
			case d.Util >= 0.9:
				out = append(out, Limit{What: fmt.Sprintf("%s's %s disk busy", s.Host, d.Volume), Share: d.Util, Of: "of the run"})
			}
		}
		for _, n := range s.NICs {
			if n.RateBps > 0 && max(n.TxMeanBps, n.RxMeanBps) >= 0.8*float64(n.RateBps) {
				out = append(out, Limit{What: fmt.Sprintf("%s's %s NIC near its %.0f Mbit/s", s.Host, n.Network, float64(n.RateBps)/1e6),
					Share: max(n.TxMeanBps, n.RxMeanBps) / float64(n.RateBps), Of: "of the rate"})
			}
		}
	}
	return out
}

// Saturated says, for one variant (its title), what its runs of a step
// measured at a limit over all of them: each limit with its mean share in
// the rounds that reached it, and in how many of the rounds it did (the
// limits most rounds reached first).
func Saturated(title string, runs []*results.Run) []string {
	type seen struct {
		Limit
		n   int
		sum float64
	}
	var order []string
	byWhat := map[string]*seen{}
	for _, r := range runs {
		for _, l := range Limits(r) {
			x := byWhat[l.What]
			if x == nil {
				x = &seen{Limit: l}
				byWhat[l.What] = x
				order = append(order, l.What)
			}
			x.n++
			x.sum += l.Share
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return byWhat[order[i]].n > byWhat[order[j]].n }) // the most rounds first
	var out []string
	for _, what := range order {
		x := byWhat[what]
		out = append(out, fmt.Sprintf("%s: %s, %.0f %% %s (in %d of %d rounds)", title, what, 100*x.sum/float64(x.n), x.Of, x.n, len(runs)))
	}
	return out
}

func trimFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// Explain adds to each check that did not reproduce what its variants'
// runs of the claim's step measured at a limit, over every round.
func Explain(home string, res *Result) {
	titles := map[string]string{}
	for _, v := range res.Study.Variants {
		titles[v.Name] = v.Title()
	}
	runs := func(variant, step string) []*results.Run {
		var out []*results.Run
		seen := map[string]bool{}
		for _, x := range res.Samples {
			if x.Variant != variant || x.Step != step || x.RunID == "" || seen[x.RunID] {
				continue
			}
			seen[x.RunID] = true
			if r, err := results.Load(home, x.RunID); err == nil {
				out = append(out, r)
			}
		}
		return out
	}
	for i, c := range res.Checks {
		if c.Verdict == Reproduced || c.Verdict == NotMeasured || !c.Counts() {
			continue
		}
		for _, v := range []string{c.Variant, c.Than} {
			if v == "" {
				continue
			}
			if rs := runs(v, c.Step); len(rs) > 0 {
				res.Checks[i].Measured = append(res.Checks[i].Measured, Saturated(titles[v], rs)...)
			}
		}
	}
}
