package workload

import (
	"encoding/json"
	"strconv"

	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/workload/sysbench"
)

// Cost is what a sweep's point cost the lab per transaction, from the
// run's per-second host and disk samples over the point's measured runs:
// CPU milliseconds of every host but the load generator's, and IOs of
// every emulated disk. Known is false without samples for the point.
type Cost struct {
	CPUms float64 `json:"cpu_ms_per_tx"`
	IOs   float64 `json:"ios_per_tx"`
	// StorageIOs are the IOs that reached the storage behind the hosts'
	// caches (IOs less the reads a host cache answered), per transaction.
	StorageIOs float64 `json:"storage_ios_per_tx"`
	Disks      bool    `json:"disks"` // the lab had emulated disks (IOs counted)
	Known      bool    `json:"known"`
}

// Costs are a stored sweep's costs per thread count (empty when it kept
// no host samples).
func Costs(home string, r *results.Run, pts []sysbench.Point) map[int]Cost {
	tx := map[int]int64{}
	for _, p := range pts {
		for _, run := range p.Runs {
			tx[p.Threads] += run.Transactions
		}
	}
	return TxCosts(home, r, tx)
}

// TxCosts are a stored run's costs per thread count, given the
// transactions each count's measured runs committed (its steps in
// StepsFile).
func TxCosts(home string, r *results.Run, tx map[int]int64) map[int]Cost {
	return costs(r, tx, results.ReadCSV(home, r.ID, StepsFile), results.ReadCSV(home, r.ID, HostsCSV), results.ReadCSV(home, r.ID, DisksCSV))
}

// costs is TxCosts over the run's CSV rows (steps: threads, run, start_ns,
// end_ns; hosts: t, host, cpu_cores, …; disks: t, host, disk, volume,
// iops, …; t in seconds since the run started). Pure.
func costs(r *results.Run, txs map[int]int64, steps, hosts, disks [][]string) map[int]Cost {
	client := clientOf(r)
	type window struct{ from, to float64 }
	windows := map[int][]window{}
	for _, row := range steps {
		if len(row) < 4 {
			continue
		}
		th, err1 := strconv.Atoi(row[0])
		start, err2 := strconv.ParseInt(row[2], 10, 64)
		end, err3 := strconv.ParseInt(row[3], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		base := r.Started.UnixNano()
		windows[th] = append(windows[th], window{float64(start-base) / 1e9, float64(end-base) / 1e9})
	}
	// each sample covers the second before it
	sum := func(rows [][]string, col int, keep func([]string) bool, w []window) (float64, bool) {
		total, any := 0.0, false
		for _, row := range rows {
			if len(row) <= col || !keep(row) {
				continue
			}
			t, err1 := strconv.ParseFloat(row[0], 64)
			v, err2 := strconv.ParseFloat(row[col], 64)
			if err1 != nil || err2 != nil {
				continue
			}
			for _, x := range w {
				if t > x.from && t <= x.to+0.5 {
					total, any = total+v, true
				}
			}
		}
		return total, any
	}
	out := map[int]Cost{}
	for threads, tx := range txs {
		w := windows[threads]
		if tx == 0 || len(w) == 0 {
			continue
		}
		cpu, okCPU := sum(hosts, 2, func(row []string) bool { return row[1] != client }, w)
		ios, okIO := sum(disks, 4, func([]string) bool { return true }, w)
		storage, okStorage := sum(disks, 9, func([]string) bool { return true }, w) // a run before the column: as IOs
		if !okStorage {
			storage = ios
		}
		if !okCPU {
			continue
		}
		out[threads] = Cost{CPUms: 1000 * cpu / float64(tx), IOs: ios / float64(tx), StorageIOs: storage / float64(tx), Disks: okIO, Known: true}
	}
	return out
}

// clientOf is the name of a run's load generator host (its spec's client;
// "client" by default).
func clientOf(r *results.Run) string {
	var t struct{ Client *struct{ Name string } }
	b, _ := json.Marshal(r.Topology)
	if json.Unmarshal(b, &t) == nil && t.Client != nil && t.Client.Name != "" {
		return t.Client.Name
	}
	return "client"
}
