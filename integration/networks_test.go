package integration

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestClusterNetwork: with a cluster network, Galera's traffic crosses the
// database hosts' second NIC and clients' the first; a run records both; a
// partition drill cuts a node on every NIC (the cluster evicts it and no
// acknowledged write is lost); teardown leaves nothing (checked by the env).
func TestClusterNetwork(t *testing.T) {
	t.Parallel() // it counts bytes per NIC; the drill's gap bound is loose for a busy machine
	e := newEnv(t)
	spec := e.writeSpec("itnic", `name: itnic
networks: {application: {bandwidth: 500mbit}, cluster: {bandwidth: 200mbit}}
clusters: [{name: db, nodes: 3, profile: durable, failure_detection: fast}]
load_balancers: [{name: lb, cluster: db}]
`)
	e.ok("up", "-f", spec)
	var st struct {
		Hosts []struct {
			Name string `json:"name"`
			NICs []struct {
				Name, Network, Address string
				RateBps                int64 `json:"rate_bps"`
			} `json:"nics"`
		} `json:"hosts"`
	}
	e.statusInto("itnic", &st)
	nics := map[string]int{}
	for _, h := range st.Hosts {
		nics[h.Name] = len(h.NICs)
		if h.Name == "db1" && (len(h.NICs) != 2 || h.NICs[1].Network != "cluster" || h.NICs[1].RateBps != 200e6 || h.NICs[0].RateBps != 500e6) {
			t.Errorf("db1 NICs %+v", h.NICs)
		}
	}
	if nics["db2"] != 2 || nics["lb"] != 1 || nics["client"] != 1 {
		t.Errorf("NICs per host %v: database hosts have two, the others one", nics)
	}
	if v := e.sql("itnic", "db1", "SELECT @@wsrep_node_address"); !strings.Contains(v, "198.") || strings.Contains(v, st.Hosts[0].NICs[0].Address) {
		t.Errorf("db1's Galera address %q is not on the cluster network", v)
	}

	var run struct {
		Hosts []struct {
			Host string `json:"host"`
			NICs []struct {
				Network string  `json:"network"`
				RxBytes float64 `json:"rx_bytes"`
				TxBytes float64 `json:"tx_bytes"`
			} `json:"nics"`
		} `json:"hosts"`
	}
	e.sweepRecord("itnic", &run, "--workload", "oltp_write_only", "--threads", "4", "--time", "5", "--tables", "1", "--table-size", "2000")
	var cluster, app float64 // what the writer's peers received: write sets, and health checks
	for _, h := range run.Hosts {
		for _, n := range h.NICs {
			switch {
			case h.Host != "db2" && h.Host != "db3":
			case n.Network == "cluster":
				cluster += n.RxBytes
			default:
				app += n.RxBytes
			}
		}
	}
	if cluster < 100e3 || cluster/(cluster+app) < 0.95 {
		t.Errorf("replicas received %.0f bytes on the cluster NIC and %.0f on the application NIC; want ≥ 95 %% on the cluster NIC", cluster, app)
	}

	var d drillResult
	dr := e.runDrill("drill", "partition", "--name", "itnic", "--rate", "30", "-o", "json")
	if err := json.Unmarshal([]byte(dr.stdout), &d); err != nil || !d.Passed || d.LostCount != 0 || d.Gap.Seconds > 10 {
		t.Fatalf("partition drill over two NICs: exit %d %+v\n%s", dr.code, d, dr.stderr)
	}
	e.ok("down", "--name", "itnic")
}
