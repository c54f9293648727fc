package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"sort"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/hadrill/hadrill/internal/lab"
	"github.com/hadrill/hadrill/internal/netns"
	"github.com/hadrill/hadrill/internal/stats"
)

// agentLatency: 100 probes/s for 10 s against a node's agent from the
// client host (a new connection per probe, as HAProxy checks), then the
// answer time while the server is paused (SIGSTOP).
func agentLatency(bin string, _ int) {
	_, home := scratchLab(bin, "bagent")
	defer runCleanups()
	l, err := lab.Open(home, "bagent", nil)
	check(err)
	n := l.Plan().Nodes[1]
	url := fmt.Sprintf("http://%s:%d/", n.Address, n.AgentPort)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return netns.Dial(ctx, l.Plan().Client.Netns, network, addr)
		}}}
	probe := func(method string) (int, time.Duration) {
		req, _ := http.NewRequest(method, url, nil)
		t0 := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, time.Since(t0)
		}
		resp.Body.Close()
		return resp.StatusCode, time.Since(t0)
	}
	var lat []float64
	bad := 0
	tick := time.NewTicker(10 * time.Millisecond)
	for i := 0; i < 1000; i++ {
		<-tick.C
		code, d := probe(http.MethodOptions)
		if code != 200 {
			bad++
		}
		lat = append(lat, float64(d.Microseconds())/1000)
	}
	tick.Stop()
	sort.Float64s(lat)
	pid := l.Pid(&n)
	check(syscall.Kill(pid, syscall.SIGSTOP))
	var hung []float64
	hungOK := true
	for i := 0; i < 10; i++ {
		time.Sleep(150 * time.Millisecond) // past the verdict cache
		code, d := probe(http.MethodOptions)
		hung = append(hung, float64(d.Microseconds())/1000)
		hungOK = hungOK && code == 503
	}
	check(syscall.Kill(pid, syscall.SIGCONT))
	sort.Float64s(hung)
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "scenario\tcase\tprobes\tp50 ms\tp99 ms\tmax ms\tnot 200/503\t")
	fmt.Fprintf(w, "agent\thealthy node, 100 probes/s\t%d\t%.2f\t%.2f\t%.2f\t%d\t\n", len(lat), stats.Percentile(lat, 50), stats.Percentile(lat, 99), lat[len(lat)-1], bad)
	fmt.Fprintf(w, "agent\tserver paused (SIGSTOP)\t%d\t%.1f\t%.1f\t%.1f\t%v\t\n", len(hung), stats.Percentile(hung, 50), stats.Percentile(hung, 99), hung[len(hung)-1], map[bool]int{true: 0, false: 1}[hungOK])
	w.Flush()
	fmt.Printf("\ntarget: p99 ≤ 5 ms: %v; paused server answered 503 within the 300 ms probe timeout (+ 100 ms): %v\n",
		stats.Percentile(lat, 99) <= 5, hungOK && hung[len(hung)-1] <= 400)
}
