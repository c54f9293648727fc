package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/hadrill/hadrill/internal/lab"
	"github.com/hadrill/hadrill/internal/netns"
)

// networks: a lab with a 100mbit application NIC and a 50mbit cluster NIC
// per database host. Two TCP streams at once, client → db1 on the
// application network and db1 → db2 on the cluster network, each measured
// against its cap; then a write-only sweep, and the share of what the
// replicas received that crossed the cluster NIC.
func networks(bin string, runs int) {
	spec := tempSpec(`networks: {application: {bandwidth: 100mbit}, cluster: {bandwidth: 50mbit}}
clusters: [{name: db, nodes: 3}]
load_balancers: [{name: lb, cluster: db}]
`)
	_, home := scratchLab(bin, "bnic", "-f", spec)
	l, err := lab.Open(home, "bnic", nil)
	check(err)
	p := l.Plan()
	db1, _ := p.Host("db1")
	db2, _ := p.Host("db2")
	client, _ := p.Host(p.Client.Host)
	var app, cluster, appGood, clusterGood []float64
	for i := 1; i <= runs; i++ {
		var wg sync.WaitGroup
		var a, c float64
		wg.Add(2)
		go func() { defer wg.Done(); a = stream(p.Client.Netns, db1.Netns, db1.Address, 6*time.Second) }()
		go func() { defer wg.Done(); c = stream(db1.Netns, db2.Netns, db2.ClusterAddress, 6*time.Second) }()
		// the senders' NICs as their links' other ends count them (frames on
		// the wire), over 4 s of steady streaming
		time.Sleep(time.Second)
		before, err := netns.Counters(p.Netns)
		check(err)
		t0 := time.Now()
		time.Sleep(4 * time.Second)
		after, err := netns.Counters(p.Netns)
		check(err)
		secs := time.Since(t0).Seconds()
		wg.Wait()
		appWire := 8 * float64(after[client.NICs[0].Veth].Rx-before[client.NICs[0].Veth].Rx) / secs
		clWire := 8 * float64(after[db1.NICs[1].Veth].Rx-before[db1.NICs[1].Veth].Rx) / secs
		app, cluster = append(app, appWire), append(cluster, clWire)
		appGood, clusterGood = append(appGood, a), append(clusterGood, c)
		fmt.Fprintf(os.Stderr, "run %d/%d: application %.1f Mbit/s on the wire (%.1f TCP payload), cluster %.1f (%.1f)\n",
			i, runs, appWire/1e6, a/1e6, clWire/1e6, c/1e6)
	}
	id, _ := sweep(bin, home, "bnic", "--workload", "oltp_write_only", "--threads", "4",
		"--time", "10", "--tables", "2", "--table-size", "5000")
	share := clusterShare(home, id)

	// htb counts a TCP stream's bytes as the frames it becomes on the wire
	// (1514 bytes per 1448 of payload, timestamps on), as a real NIC carries
	// them: the payload a capped NIC can carry is that share of its rate.
	const payload = 1448.0 / 1514
	appErr, clErr := median(appGood)/(100e6*payload)-1, median(clusterGood)/(50e6*payload)-1
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "scenario\tstream (both at once)\truns\tcap Mbit/s\tTCP payload, median\tmin\tmax\tpayload a real NIC carries\terror\tcounted by the NIC\t")
	fmt.Fprintf(w, "networks\tclient → db1, application NIC\t%d\t100\t%.1f\t%.1f\t%.1f\t%.1f\t%+.1f %%\t%.1f\t\n", runs, median(appGood)/1e6, minf(appGood)/1e6, maxf(appGood)/1e6, 100*payload, 100*appErr, median(app)/1e6)
	fmt.Fprintf(w, "networks\tdb1 → db2, cluster NIC\t%d\t50\t%.1f\t%.1f\t%.1f\t%.1f\t%+.1f %%\t%.1f\t\n", runs, median(clusterGood)/1e6, minf(clusterGood)/1e6, maxf(clusterGood)/1e6, 50*payload, 100*clErr, median(cluster)/1e6)
	w.Flush()
	fmt.Printf("replicas' received bytes on the cluster NIC during a write-only sweep: %.1f %%\n", 100*share)
	fmt.Printf("\ntarget: per-NIC caps within ± 5 %%: %v; ≥ 95 %% of replication on the cluster NIC: %v\n",
		abs(appErr) <= 0.05 && abs(clErr) <= 0.05, share >= 0.95)
}

func abs(f float64) float64 { return max(f, -f) }

// stream sends as fast as TCP goes from namespace from to addr (a sink in
// namespace to) for d; the bits per second the sink received.
func stream(from, to, addr string, d time.Duration) float64 {
	var ln net.Listener
	check(netns.Do(to, func() (err error) { ln, err = net.Listen("tcp", addr+":5201"); return err }))
	defer ln.Close()
	got := make(chan int64, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- 0
			return
		}
		defer c.Close()
		n, _ := io.Copy(io.Discard, c)
		got <- n
	}()
	c, err := netns.Dial(context.Background(), from, "tcp", addr+":5201")
	check(err)
	buf := make([]byte, 64<<10)
	t0 := time.Now()
	for time.Since(t0) < d {
		if _, err := c.Write(buf); err != nil {
			break
		}
	}
	c.Close()
	n := <-got
	return 8 * float64(n) / time.Since(t0).Seconds()
}

// clusterShare: what db2 and db3 received on their cluster NICs, of all
// they received, over a run.
func clusterShare(home, runID string) float64 {
	b, err := os.ReadFile(filepath.Join(home, "runs", runID, "run.json"))
	check(err)
	var r struct {
		Hosts []struct {
			Host string `json:"host"`
			NICs []struct {
				Network string  `json:"network"`
				RxBytes float64 `json:"rx_bytes"`
			} `json:"nics"`
		} `json:"hosts"`
	}
	check(json.Unmarshal(b, &r))
	var cl, all float64
	for _, h := range r.Hosts {
		if h.Host != "db2" && h.Host != "db3" {
			continue
		}
		for _, n := range h.NICs {
			all += n.RxBytes
			if n.Network == "cluster" {
				cl += n.RxBytes
			}
		}
	}
	if all == 0 {
		return 0
	}
	return cl / all
}
