package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/hadrill/hadrill/internal/facts"
	"github.com/hadrill/hadrill/internal/lab"
	"github.com/hadrill/hadrill/internal/netem"
	"github.com/hadrill/hadrill/internal/netns"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/stats"
)

const wanSpec = `name: bwan
regions: [{name: east}, {name: west}]
links: [{between: [east, west], rtt: 100ms}]
clusters:
  - {name: ea, kind: standalone, region: east}
  - {name: we, kind: standalone, region: west}
client: {name: client, region: east}
`

// wan: the emulated link's fidelity (UDP echo across a 100 ms link, at a
// trickle and with 20,000 packets/s crossing it: 10,000 each way), then what a commit costs in
// round trips on the two-region presets (seed 002: Galera 1.08, semi-sync ≈1).
func wan(bin string, _ int) {
	_, home := scratchLab(bin, "bwan", "-f", tempSpec(wanSpec))
	l, err := lab.Open(home, "bwan", nil)
	check(err)
	west, _ := l.Plan().Node("we1")
	east, _ := l.Plan().Node("ea1")
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "scenario\tcpus\tpkt/s each way\tpackets\tlost\tp50 ms\tp99 ms\tmax ms\tsame-region p50 ms\tsame-region p99 ms\tp50 error ms\tp99 over ms\t")
	var fast echoResult
	worst := 0.0    // the largest p50 error, idle or saturated
	worstP99 := 0.0 // the largest p99 over the link's round trip at 10,000 pkt/s each way, idle or saturated
	for _, busy := range []bool{false, true} {
		load, stop := "idle", func() {}
		if busy {
			stop = saturate()
			load = fmt.Sprintf("saturated (%d busy loops)", runtime.NumCPU())
			time.Sleep(time.Second)
		}
		for _, rate := range []int{100, 10000} {
			// The same echo to a host of the client's own region (no
			// emulated link) first: what the path and the echo's own
			// programs cost under this load is not the emulator's error.
			base := echo(l.Plan().Client.Netns, east.Netns, east.Address, rate, 5*time.Second)
			r := echo(l.Plan().Client.Netns, west.Netns, west.Address, rate, 10*time.Second)
			e := r.p50 - 100 - base.p50
			fmt.Fprintf(w, "wan echo\t%s\t%d\t%d\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%+.3f\t%+.3f\t\n", load, rate, r.Sent, r.Sent-len(r.RTTs), r.p50, r.p99, r.max, base.p50, base.p99, e, r.p99-100)
			worst = max(worst, math.Abs(e))
			if rate == 10000 {
				worstP99 = max(worstP99, r.p99-100)
			}
			if !busy && rate == 10000 {
				fast = r
			}
		}
		stop()
	}
	w.Flush()
	packetFaults(bin, home, l.Plan().Client.Netns, west)
	if b, err := os.ReadFile(filepath.Join(l.Plan().Dir, "netem.log")); err == nil {
		fmt.Fprintf(os.Stderr, "netem daemon's own report:\n%s", b)
	}
	runCleanups()
	fmt.Printf("\ntarget with 20,000 pkt/s crossing the link: p50 within ±1 ms of 100 ms: %v; p99 ≤ +3 ms: %v\n",
		fast.p50 >= 99 && fast.p50 <= 101, fast.p99 <= 103)
	fmt.Printf("target: p50 error (p50 − 100 ms − the same-region p50) ≤ 1 ms idle and with every CPU saturated: %v (worst %.3f ms)\n", worst <= 1, worst)
	fmt.Printf("target: p99 ≤ 100 ms + 3 ms at 10,000 pkt/s each way, idle and with every CPU saturated: %v (worst %+.3f ms)\n", worstP99 <= 3, worstP99)
	if instrument() == "" {
		fmt.Println("(no cgroup v1 here: the echo ran at an ordinary CPU weight, so its own waits for a CPU are in every figure)")
	} else {
		fmt.Println("(the echo's client and server run in a cgroup with the emulator's CPU weight: they are the instrument; the same-region columns are the path without a link)")
	}
	fmt.Println()

	w = tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "scenario\tpreset\tmeasured rtt ms\tcommit p50 ms\tp95 ms\tcommit / rtt\t")
	var galera float64
	for _, preset := range []string{"wan2", "wan2-semisync"} {
		_, home := scratchLab(bin, "bw"+map[string]string{"wan2": "g", "wan2-semisync": "s"}[preset], "--preset", preset)
		name := "bw" + map[string]string{"wan2": "g", "wan2-semisync": "s"}[preset]
		var out struct {
			Results []struct {
				P50 float64 `json:"p50"`
				P95 float64 `json:"p95"`
			} `json:"results"`
		}
		check(json.Unmarshal([]byte(run(bin, "--home", home, "--name", name, "bench", "commit-latency", "--count", "200", "--target", "lb", "-o", "json")), &out))
		l, err := lab.Open(home, name, nil)
		check(err)
		rtt := 100.0
		if m := l.WAN().Last(); len(m) > 0 {
			rtt = m[0].P50Ms
		}
		ratio := out.Results[0].P50 / rtt
		if preset == "wan2" {
			galera = ratio
		}
		fmt.Fprintf(w, "wan commit\t%s\t%.2f\t%.2f\t%.2f\t%.2f\t\n", preset, rtt, out.Results[0].P50, out.Results[0].P95, ratio)
		runCleanups()
	}
	w.Flush()
	fmt.Printf("\ntarget: a commit on two-region Galera costs 0.9–1.3 round trips: %v (%.2f)\n", galera >= 0.9 && galera <= 1.3, galera)
}

// packetFaults: how precisely each packet fault's rate is applied. Echoes
// cross the link both ways, so a share p of each direction's packets lost
// (or corrupted: the receiver drops them) leaves (1−p)² of the echoes, and
// duplicated leaves (1+p)² replies an echo; the error is the measured
// share less that, judged against the binomial 95 % band of the count.
// A corrupted packet is also counted where it was dropped (InErrors of
// the client's and the server's namespaces).
func packetFaults(bin, home, clientNs string, west *plan.Node) {
	const rate, d, share = 1000, 5 * time.Second, 0.10
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "\nscenario\tfault\techoes sent\treplies/sent\texpected\terror pp\t95% band pp\tdropped at the receivers\t")
	allIn := true
	for _, verb := range []string{"loss", "corrupt", "duplicate"} {
		run(bin, "--home", home, "--name", "bwan", "fault", verb, "east-west", "10%")
		dropped0 := udpInErrors(clientNs) + udpInErrors(west.Netns)
		r := echo(clientNs, west.Netns, west.Address, rate, d)
		dropped := udpInErrors(clientNs) + udpInErrors(west.Netns) - dropped0
		run(bin, "--home", home, "--name", "bwan", "fault", verb, "east-west", "0")
		want := (1 - share) * (1 - share)
		if verb == "duplicate" {
			want = (1 + share) * (1 + share)
		}
		got := float64(len(r.RTTs)) / float64(r.Sent)
		// a count of n Bernoulli trials; duplicates: the variance of a sum
		// of two (1 + Bernoulli) factors, about the same
		band := 1.96 * math.Sqrt(share*(1-share)*2/float64(r.Sent)) * 100
		errPP := (got - want) * 100
		allIn = allIn && math.Abs(errPP) <= band
		drop := "-"
		if verb == "corrupt" {
			drop = fmt.Sprintf("%d (%.1f%% of sent + replies)", dropped, 100*float64(dropped)/float64(r.Sent+len(r.RTTs)))
		}
		fmt.Fprintf(w, "packet fault\t%s 10%%\t%d\t%.4f\t%.4f\t%+.2f\t±%.2f\t%s\t\n", verb, r.Sent, got, want, errPP, band, drop)
	}
	w.Flush()
	fmt.Printf("target: each packet fault's rate within the 95 %% band of its count (loss, corrupt, duplicate at 10 %%): %v\n\n", allIn)
}

// udpInErrors is a namespace's UDP InErrors (/proc/net/snmp): datagrams
// dropped at their checksum check or as malformed.
func udpInErrors(ns string) int64 {
	v, err := netns.SNMP(ns, "Udp", "InErrors")
	check(err)
	return v
}

// saturate keeps every CPU busy with ordinary (nice 0) shell loops, as a
// benchmark's load would, until stop; each loop is its own process group,
// ended by it (or by a failing bench's clean-up).
func saturate() (stop func()) {
	var cmds []*exec.Cmd
	for i := 0; i < runtime.NumCPU(); i++ {
		c := exec.Command("sh", "-c", "while :; do :; done")
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL} // they die with the bench
		check(c.Start())
		cmds = append(cmds, c)
	}
	stop = func() {
		for _, c := range cmds {
			_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
			_ = c.Wait()
		}
		cmds = nil
	}
	atExit(stop)
	return stop
}

type echoResult struct {
	Sent          int       `json:"sent"`
	RTTs          []float64 `json:"rtts"`
	p50, p99, max float64
}

// instrument is the cpu cgroup the echo's two processes run in, with the
// WAN daemon's weight: what they measure is the emulated link, and on
// saturated CPUs an echo at an ordinary weight waits milliseconds for a CPU
// at each end (the same-region columns show what is left of that). Made
// once, removed at exit; "" without cgroup v1 (the echo then runs at an
// ordinary weight, and the table says so).
var instrument = sync.OnceValue(func() string {
	root := facts.Machine().Cgroups["cpu"]
	if root == "" {
		return ""
	}
	dir := filepath.Join(root, "hdbench-echo")
	if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
		fail("instrument cgroup: %v", err)
	}
	check(os.WriteFile(filepath.Join(dir, "cpu.shares"), []byte(strconv.Itoa(netem.CPUShares)), 0o644))
	atExit(func() { _ = netem.RemoveCgroup(dir) })
	return dir
})

// echo sends rate UDP packets/s (in 1 ms bursts) from namespace from to an
// echo server at addr in namespace to, and times each packet's round trip
// less the echo's own turnaround: (client rx − client tx) − (echo tx − echo
// rx). (Kernel receive timestamps cannot be used: they are taken before
// PREROUTING, where the emulated delay is applied.) The echo server and
// client are processes of their own, as the two ends of a real connection
// are, in the instrument's cgroup.
func echo(from, to, addr string, rate int, d time.Duration) echoResult {
	srv := instrumentProc("-echo-server", to+","+addr+":7777")
	defer srv.stop()
	if _, err := srv.out.Read(make([]byte, 1)); err != nil {
		srv.stop()
		fail("echo server in %s: %v", to, err)
	}
	cli := instrumentProc("-echo-client", fmt.Sprintf("%s,%s:7777,%d,%s", from, addr, rate, d))
	defer cli.stop()
	var r echoResult
	check(json.NewDecoder(cli.out).Decode(&r))
	sort.Float64s(r.RTTs)
	if len(r.RTTs) > 0 {
		r.p50, r.p99, r.max = stats.Percentile(r.RTTs, 50), stats.Percentile(r.RTTs, 99), r.RTTs[len(r.RTTs)-1]
	}
	return r
}

type proc struct {
	cmd *exec.Cmd
	out io.Reader
}

func (p proc) stop() { _ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL); _ = p.cmd.Wait() }

// instrumentProc starts this program with flag=value in a process group
// of its own, in the instrument's cgroup, reading its standard output.
func instrumentProc(flag, value string) proc {
	self, err := os.Executable()
	check(err)
	c := exec.Command(self, flag, value)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	c.Stderr = os.Stderr
	out, err := c.StdoutPipe()
	check(err)
	check(c.Start())
	p := proc{c, out}
	if dir := instrument(); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(c.Process.Pid)), 0o644); err != nil {
			p.stop()
			fail("instrument cgroup: %v", err)
		}
	}
	return p
}

// echoClient sends to the echo server as echo describes and prints the
// result as JSON. spec is "namespace,address:port,rate,duration".
func echoClient(spec string) {
	parts := strings.Split(spec, ",")
	if len(parts) != 4 {
		fail("-echo-client: expected namespace,address:port,rate,duration, got %q", spec)
	}
	rate, err := strconv.Atoi(parts[2])
	check(err)
	d, err := time.ParseDuration(parts[3])
	check(err)
	cli := udpSocket(parts[0], ":0")
	defer cli.Close()
	dst, err := net.ResolveUDPAddr("udp4", parts[1])
	check(err)
	var mu sync.Mutex
	var rtts []float64
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 64)
		for {
			_ = cli.SetReadDeadline(time.Now().Add(2 * time.Second))
			n, _, err := cli.ReadFromUDP(buf)
			if err != nil {
				return
			}
			if n >= 24 {
				t1 := int64(binary.LittleEndian.Uint64(buf))
				t2 := int64(binary.LittleEndian.Uint64(buf[8:]))
				t3 := int64(binary.LittleEndian.Uint64(buf[16:]))
				t4 := time.Now().UnixNano()
				mu.Lock()
				rtts = append(rtts, float64((t4-t1)-(t3-t2))/1e6)
				mu.Unlock()
			}
		}
	}()
	perMs := rate / 1000
	every := time.Millisecond
	if perMs == 0 {
		perMs, every = 1, time.Second/time.Duration(rate)
	}
	sent := 0
	msg := make([]byte, 64)
	tick := time.NewTicker(every)
	for end := time.Now().Add(d); time.Now().Before(end); {
		<-tick.C
		for i := 0; i < perMs; i++ {
			binary.LittleEndian.PutUint64(msg, uint64(time.Now().UnixNano()))
			if _, err := cli.WriteToUDP(msg, dst); err == nil {
				sent++
			}
		}
	}
	tick.Stop()
	<-done
	check(json.NewEncoder(os.Stdout).Encode(echoResult{Sent: sent, RTTs: rtts}))
}

// echoServe answers every datagram at nsAddr ("namespace,address:port")
// with its receive and send times, until killed. It writes one byte to
// stdout once it listens.
func echoServe(nsAddr string) {
	ns, addr, _ := strings.Cut(nsAddr, ",")
	srv := udpSocket(ns, addr)
	os.Stdout.Write([]byte{'\n'})
	buf := make([]byte, 64)
	for {
		n, a, err := srv.ReadFromUDP(buf)
		if err != nil {
			fail("echo server: %v", err)
		}
		if n >= 24 {
			binary.LittleEndian.PutUint64(buf[8:], uint64(time.Now().UnixNano()))
			binary.LittleEndian.PutUint64(buf[16:], uint64(time.Now().UnixNano()))
			_, _ = srv.WriteToUDP(buf[:n], a)
		}
	}
}

// udpSocket is a UDP socket in a namespace with room for bursts.
func udpSocket(ns, addr string) *net.UDPConn {
	pc, err := netns.ListenPacket(ns, "udp4", addr)
	check(err)
	c := pc.(*net.UDPConn)
	_ = c.SetReadBuffer(8 << 20)
	return c
}
