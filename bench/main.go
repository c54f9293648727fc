// Command bench runs hadrill's performance scenarios and prints medians and
// in-run ratios (machines are noisy: compare ratios, not absolutes).
//
//	go run ./bench -bin bin/hadrill [-runs 5] [-scenario deploy]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/hadrill/hadrill/internal/facts"
	"github.com/hadrill/hadrill/internal/sshtest"
	"github.com/hadrill/hadrill/internal/stats"
)

// scenarios run in this order under -scenario all.
var scenarios = []struct {
	name string
	run  func(bin string, runs int)
}{
	{"deploy", deploy}, {"failover", failover}, {"agent", agentLatency}, {"overhead", overhead}, {"tpcc", tpccOverhead}, {"wan", wan}, {"drills", drills},
	{"machines", machines}, {"networks", networks}, {"disks", disks}, {"lbpair", lbPair}, {"rto", rto}, {"checker", checker}, {"chaos", chaos},
}

func main() {
	var names []string
	for _, sc := range scenarios {
		names = append(names, sc.name)
	}
	bin := flag.String("bin", "bin/hadrill", "hadrill binary")
	runs := flag.Int("runs", 5, "runs per variant (interleaved)")
	scenario := flag.String("scenario", "all", "scenario: "+strings.Join(names, ", ")+" or all")
	echoServer := flag.String("echo-server", "", "serve UDP echo at NAMESPACE,ADDRESS:PORT until killed (the wan scenario starts it)")
	echoClientSpec := flag.String("echo-client", "", "time UDP echoes as NAMESPACE,ADDRESS:PORT,RATE,DURATION and print them as JSON (the wan scenario starts it)")
	flag.Parse()
	if *echoServer != "" {
		echoServe(*echoServer)
		return
	}
	if *echoClientSpec != "" {
		echoClient(*echoClientSpec)
		return
	}
	_ = mysql.SetLogger(&mysql.NopLogger{})
	cleanUpOnSignal()
	if *runs < 1 {
		fail("-runs: expected a positive number, got %d", *runs)
	}
	if *scenario != "all" && !slices.Contains(names, *scenario) {
		fail("-scenario: unknown scenario %q (known: %s, all)", *scenario, strings.Join(names, ", "))
	}
	fmt.Println(machineSaid("began"))
	for i, sc := range scenarios {
		if *scenario == sc.name || *scenario == "all" {
			if i > 0 && *scenario == "all" {
				fmt.Println()
			}
			sc.run(*bin, *runs)
		}
	}
	fmt.Println("\n" + machineSaid("ended"))
	runCleanups()
}

// deploy: galera3 `up` until ready vs the plain hand recipe, and vs the
// same `up` over SSH onto five "remote machines" (sshd in namespaces of
// this computer: the cost of reaching hosts through SSH and hadrill's
// copy there, not of a network), interleaved.
func deploy(bin string, runs int) {
	work, err := os.MkdirTemp("/tmp", "hdbench-")
	check(err)
	check(os.Chmod(work, 0o755)) // the recipe's servers run as the mysql user
	home := filepath.Join(work, "home")
	atExit(func() { tryRun(bin, "--home", home, "down", "--all"); os.RemoveAll(work) })
	hosts := sshtest.Start(benchT{}, "bssh", "198.19.252", filepath.Join(work, "ssh"), "db1", "db2", "db3", "lb", "client")
	hosts.Link("ctl", 250)
	inv := filepath.Join(work, "hosts.yaml")
	check(os.WriteFile(inv, []byte(hosts.Inventory(nil)), 0o600))
	ctl := []string{"netns", "exec", "hd-bssh-ctl", bin, "--home", filepath.Join(work, "ctl")}
	atExit(func() { tryRun("ip", append(ctl, "down", "--all")...) })
	here, _ := os.Getwd()
	recipe := filepath.Join(here, "bench", "recipe_deploy.sh")
	var hd, remote, plain []float64
	phases := map[string][]float64{} // up's own log: when each phase ended
	phase := regexp.MustCompile(`(hosts and datadirs ready|all servers ready|servers accept the application user|up in) \(?([0-9.]+)s`)
	for i := 1; i <= runs; i++ {
		t0 := time.Now()
		c := exec.Command(bin, "--home", home, "up", "--name", "bdeploy", "-o", "json")
		var log strings.Builder
		c.Stderr = &log
		if out, err := c.Output(); err != nil {
			fail("hadrill up: %v\n%s%s", err, out, log.String())
		}
		hd = append(hd, time.Since(t0).Seconds())
		for _, m := range phase.FindAllStringSubmatch(log.String(), -1) {
			v, _ := strconv.ParseFloat(m[2], 64)
			phases[m[1]] = append(phases[m[1]], v)
		}
		run(bin, "--home", home, "down", "--name", "bdeploy")
		t0 = time.Now()
		run("ip", append(ctl, "up", "--preset", "galera3", "--name", "bdeploy", "--inventory", inv, "-o", "json")...)
		remote = append(remote, time.Since(t0).Seconds())
		run("ip", append(ctl, "down", "--name", "bdeploy")...)
		out := run("bash", recipe, filepath.Join(work, "recipe"))
		s, err := strconv.ParseFloat(strings.TrimSpace(out), 64)
		check(err)
		plain = append(plain, s)
		fmt.Fprintf(os.Stderr, "run %d/%d: hadrill %.2fs, over SSH %.2fs, plain recipe %.2fs\n", i, runs, hd[i-1], remote[i-1], s)
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "scenario\tvariant\truns\tmedian s\tmin s\tmax s\tratio\t")
	fmt.Fprintf(w, "deploy\thadrill up galera3 (until all Synced + app login)\t%d\t%.2f\t%.2f\t%.2f\t1.00\t\n", runs, median(hd), minf(hd), maxf(hd))
	fmt.Fprintf(w, "deploy\thadrill up galera3 --inventory (5 hosts over SSH, incl. preflight)\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t\n", runs, median(remote), minf(remote), maxf(remote), median(remote)/median(hd))
	fmt.Fprintf(w, "deploy\tplain recipe (bootstrap + rsync SST joins)\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t\n", runs, median(plain), minf(plain), maxf(plain), median(plain)/median(hd))
	w.Flush()
	fmt.Printf("\nwhere the time goes (up's own log, medians, from its start): hosts and datadirs %.2f s, servers Synced %.2f s, users %.2f s, agents and load balancer routing %.2f s\n",
		median(phases["hosts and datadirs ready"]), median(phases["all servers ready"]), median(phases["servers accept the application user"]), median(phases["up in"]))
	fmt.Printf("the first run made the home's datadir template (mariadb-install-db, once per server binary and user): %.2f s\n", hd[0])
	fmt.Printf("target: hadrill median ≤ 1.20 s: %v (%.2f s); ≥ 3× faster than the recipe: %v (%.1f×)\n",
		median(hd) <= 1.2, median(hd), median(plain)/median(hd) >= 3, median(plain)/median(hd))
	fmt.Printf("over SSH: %.1f× the local provider (preflight, hadrill copied to each host, a datadir made on each)\n", median(remote)/median(hd))
}

// benchT lets the bench start sshtest's hosts: a failure ends the bench
// (its cleanups run), a cleanup runs with the bench's.
type benchT struct{}

func (benchT) Helper()                        {}
func (benchT) Skip(a ...any)                  { fail("%s", fmt.Sprint(a...)) }
func (benchT) Fatalf(format string, a ...any) { fail(format, a...) }
func (benchT) Cleanup(f func())               { atExit(f) }

func run(name string, args ...string) string {
	holdIfInterrupted()
	c := exec.Command(name, args...)
	c.Stderr = os.Stderr
	out, err := c.Output()
	if err != nil {
		holdIfInterrupted() // it failed because its lab is being removed
		fail("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return string(out)
}

// runAllowFail runs a command whose non-zero exit is a result (a drill that
// lost writes), not a bench failure; stdout is returned either way.
func runAllowFail(name string, args ...string) (string, error) {
	holdIfInterrupted()
	c := exec.Command(name, args...)
	c.Stderr = os.Stderr
	out, err := c.Output()
	if err != nil {
		holdIfInterrupted()
	}
	return string(out), err
}

// tryRun runs a clean-up command; its failure is reported, not fatal.
func tryRun(name string, args ...string) {
	c := exec.Command(name, args...)
	c.Stderr = os.Stderr
	if err := c.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "bench: clean-up %s %s: %v\n", name, strings.Join(args, " "), err)
	}
}

// sweep runs one `hadrill bench sysbench` on a lab (args: --target,
// --workload, sizes…) and returns its run id and the TPS of its first
// thread count.
func sweep(bin, home, lab string, args ...string) (runID string, tps float64) {
	out := run(bin, append([]string{"--home", home, "bench", "sysbench", "--name", lab, "-o", "json"}, args...)...)
	var r struct {
		RunID   string `json:"run_id"`
		Results []struct {
			TPS float64 `json:"tps"`
		} `json:"results"`
	}
	check(json.Unmarshal([]byte(out), &r))
	if len(r.Results) == 0 {
		fail("bench sysbench %v measured nothing", args)
	}
	return r.RunID, r.Results[0].TPS
}

func median(v []float64) float64 { return stats.Median(v) }

func minf(v []float64) float64 { s := append([]float64(nil), v...); sort.Float64s(s); return s[0] }
func maxf(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)-1]
}

func check(err error) {
	if err != nil {
		fail("%v", err)
	}
}

// cleanups run (last first) when a scenario ends or fails: a failed bench
// leaves no lab behind.
var (
	cleanupMu sync.Mutex
	cleanups  []func()
)

func atExit(f func()) {
	cleanupMu.Lock()
	defer cleanupMu.Unlock()
	cleanups = append(cleanups, f)
}

func runCleanups() {
	cleanupMu.Lock()
	defer cleanupMu.Unlock()
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
	cleanups = nil
}

// cleanUpOnSignal: INT, TERM or HUP end the bench after its cleanups, so an
// interrupted bench leaves no lab behind either.
func cleanUpOnSignal() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		s := <-sig
		fmt.Fprintf(os.Stderr, "bench: %v: removing its labs\n", s)
		interrupted.Store(true)
		runCleanups()
		os.Exit(1)
	}()
}

// interrupted: a signal came and its cleanups run; the scenario starts no
// command more (one started while a lab is being removed would fail, or
// make its home again after the cleanup removed it).
var interrupted atomic.Bool

// holdIfInterrupted waits, once a signal came, for its cleanups to end the
// bench (never called by a cleanup: they run on the signal's goroutine).
func holdIfInterrupted() {
	if interrupted.Load() {
		select {}
	}
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", a...)
	runCleanups()
	os.Exit(1)
}

// tempSpec writes a spec into a temporary file removed at exit.
func tempSpec(text string) string {
	f, err := os.CreateTemp("/tmp", "hdbench-spec-*.yaml")
	check(err)
	_, err = f.WriteString(text)
	check(err)
	f.Close()
	atExit(func() { os.Remove(f.Name()) })
	return f.Name()
}

// downAll removes every lab of home, then work (the directory holding
// it). An interrupted drill may take longer to undo its fault than `down`
// waits for it: down is tried again, and work is kept (and named) if the
// labs would not go, rather than removing files under running servers.
func downAll(bin, home, work string) {
	for i := 0; i < 4; i++ {
		if _, err := exec.Command(bin, "--home", home, "down", "--all").CombinedOutput(); err == nil {
			os.RemoveAll(work)
			return
		}
		time.Sleep(5 * time.Second)
	}
	fmt.Fprintf(os.Stderr, "bench: the labs of %s would not go; remove them with `%s --home %s down --all`\n", home, bin, home)
}

// scratchLab creates a home in a temporary directory, brings a lab up in
// it (extra: further `up` arguments) and registers its removal.
func scratchLab(bin, name string, extra ...string) (work, home string) {
	work, err := os.MkdirTemp("/tmp", "hdbench-")
	check(err)
	home = filepath.Join(work, "home")
	atExit(func() { downAll(bin, home, work) })
	run(bin, append([]string{"--home", home, "up", "--name", name, "-o", "json"}, extra...)...)
	return work, home
}

// machineSaid is the computer's state when the bench began or ended: how
// fast a core ran hadrill's fixed loop and the load average, so the
// absolute figures of two days' benches can be compared (the ratios
// within a run need not be).
func machineSaid(when string) string {
	sp := facts.CoreSpeed()
	load := "?"
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		load = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	return fmt.Sprintf("this computer when the bench %s: a core ran the fixed loop in %.0f ms of CPU (%.0f ms wall); load average %s", when, sp.CPUMs, sp.WallMs, load)
}
