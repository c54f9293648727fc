package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/hadrill/hadrill/internal/lab"
	"github.com/hadrill/hadrill/internal/workload/tpcc"
)

// tpccOverhead: tpmC through `hadrill bench tpcc` against the same go-tpc
// run by hand from the client host (an account of the bench's own, the
// same warehouse, clients and time), interleaved and paired.
func tpccOverhead(bin string, runs int) {
	_, home := scratchLab(bin, "btpcc")
	defer runCleanups()
	hd := func() float64 {
		var out struct {
			Results []struct {
				TpmC struct{ Median float64 } `json:"tpmc"`
			} `json:"results"`
		}
		check(json.Unmarshal([]byte(run(bin, "--home", home, "bench", "tpcc", "--name", "btpcc", "--warehouses", "1", "--threads", "4",
			"--time", "10", "--warmup", "0", "--runs", "1", "-o", "json")), &out))
		return out.Results[0].TpmC.Median
	}
	hd() // prepares the dataset both variants use
	const user, password = "hd_bench_raw", "bench-raw-tpcc"
	run(bin, "--home", home, "sql", "db1", "--name", "btpcc", "-e",
		fmt.Sprintf("CREATE OR REPLACE USER '%s'@'%%' IDENTIFIED BY '%s'; GRANT ALL PRIVILEGES ON %s.* TO '%s'@'%%'", user, password, tpcc.Schema, user))
	l, err := lab.Open(home, "btpcc", nil)
	check(err)
	lb := l.Plan().LoadBalancers[0]
	client := l.Prov.Host(l.Plan().Client.Host)
	goTPC := filepath.Join(filepath.Dir(bin), "go-tpc") // make deps installs it beside hadrill
	raw := func() float64 {
		argv := tpcc.Argv(goTPC, tpcc.Target{Host: lb.Address, Port: lb.Port, User: user, Password: password}, 1, 4, 10, "run")
		out, err := client.Run(context.Background(), append([]string{"sh", "-c", `exec "$@" 2>&1`, "sh"}, argv...), nil)
		check(err)
		r, err := tpcc.Parse(string(out))
		check(err)
		return r.TpmC
	}
	paired("tpcc", runs, "tpmC", "hadrill bench tpcc", hd, "go-tpc by hand (same flags)", raw)
}
