package workload

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/facts"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/infra/disk"
	"github.com/hadrill/hadrill/internal/infra/machine"
	"github.com/hadrill/hadrill/internal/lb"
	"github.com/hadrill/hadrill/internal/monitor"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/results"
)

// Endpoint is where load goes, with the credentials to use.
type Endpoint struct {
	Name, Host     string
	Port           int
	User, Password string
}

// Open connects to the endpoint from the lab's client host (to its first
// server when it names several).
func (e Endpoint) Open(l Lab) (*sql.DB, error) {
	dial := func(ctx context.Context, a string) (net.Conn, error) {
		return l.Dial(ctx, l.Plan().Client.Host, "tcp", a)
	}
	host, _, _ := strings.Cut(e.Host, ",")
	return mariadb.TCP("hd:"+l.Plan().Lab+":client:"+e.User, dial, fmt.Sprintf("%s:%d", host, e.Port), e.User, e.Password, ""), nil
}

// External is how a target outside the lab starts: mysql://HOST:PORT.
const External = "mysql://"

// Resolve turns --target (lb, a load balancer or node name, or
// mysql://HOST:PORT with a credentials file) into an endpoint, and checks
// it answers.
func Resolve(ctx context.Context, l Lab, target, credentials string) (Endpoint, error) {
	if target == plan.NodesAlias {
		return Endpoint{}, hderr.User("--target: %q (the nodes as one host list) is for sysbench only, which spreads its connections over them; name a load balancer or one node", target)
	}
	return ResolveList(ctx, l, target, credentials)
}

// ResolveList is Resolve that also takes NodesAlias: an endpoint whose
// Host is a comma-separated list (sysbench's --mysql-host), every server of
// which must answer.
func ResolveList(ctx context.Context, l Lab, target, credentials string) (Endpoint, error) {
	e, err := resolve(l, target, credentials)
	if err != nil {
		return e, err
	}
	for _, host := range strings.Split(e.Host, ",") {
		one := e
		one.Host = host
		if err := one.answers(ctx, l); err != nil {
			return e, hderr.User("--target: cannot connect to %s (%s:%d) from the client host: %v", e.Name, host, e.Port, err)
		}
	}
	return e, nil
}

// answers checks that an endpoint takes a session: one of the lab's is
// waited for while something listens there (awaitServed: a load balancer
// whose servers are marked down for a moment), the wait said; one
// outside any lab is asked once.
func (e Endpoint) answers(ctx context.Context, l Lab) error {
	if strings.HasPrefix(e.Name, External) {
		return e.ping(ctx, l)
	}
	waited, err := awaitServed(ctx, l, e)
	if err == nil && waited > 0 {
		l.Logf("waited %.1f s for %s to take a session", waited.Seconds(), e.Name)
	}
	return err
}

func (e Endpoint) ping(ctx context.Context, l Lab) error {
	db, _ := e.Open(l)
	defer db.Close()
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return db.PingContext(pctx)
}

func resolve(l Lab, target, credentials string) (Endpoint, error) {
	e := Endpoint{Name: target}
	if strings.HasPrefix(target, External) {
		u, err := url.Parse(target)
		port, perr := strconv.Atoi(u.Port())
		if err != nil || u.Hostname() == "" || perr != nil {
			return e, hderr.User("--target: expected mysql://HOST:PORT, got %q", target)
		}
		if credentials == "" {
			return e, hderr.User("--credentials: required with an external --target (a my.cnf-style file with user= and password=)")
		}
		user, pw, err := readCredentials(credentials)
		if err != nil {
			return e, hderr.User("--credentials: %v", err)
		}
		e.Host, e.Port, e.User, e.Password = u.Hostname(), port, user, pw
		return e, nil
	}
	app, err := os.ReadFile(l.Plan().Secrets.App)
	if err != nil {
		return Endpoint{}, err
	}
	e.User, e.Password = plan.AppUser, strings.TrimSpace(string(app))
	if target == plan.NodesAlias {
		nodes, err := l.Plan().Writers()
		if err != nil {
			return e, hderr.User("--target: %v", err)
		}
		var hosts []string
		for _, n := range nodes {
			hosts = append(hosts, n.Address)
		}
		e.Host, e.Port = strings.Join(hosts, ","), nodes[0].Port
		return e, nil
	}
	t, err := l.Plan().Target(target)
	if err != nil {
		return e, hderr.User("--target: %v (or mysql://HOST:PORT)", err)
	}
	e.Host, e.Port = t.Address()
	return e, nil
}

// readCredentials reads user= and password= from a my.cnf-style file.
func readCredentials(path string) (user, password string, err error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", "", err
	}
	if m := st.Mode().Perm(); m&0o022 != 0 {
		// the MySQL client ignores an option file others may write
		return "", "", fmt.Errorf("%s may be written by others (mode %04o): the MySQL client ignores such a file, and so does hadrill; chmod 600 %s", path, m, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "user":
			user = strings.TrimSpace(v)
		case "password":
			password = strings.TrimSpace(v)
		}
	}
	if user == "" {
		return "", "", fmt.Errorf("%s has no user= line", path)
	}
	if m := st.Mode().Perm(); password != "" && m&0o044 != 0 {
		return "", "", fmt.Errorf("%s holds a password and others may read it (mode %04o); chmod 600 %s", path, m, path)
	}
	return user, password, nil
}

// NewRun starts the record of a run: what ran, on what, and the WAN as
// measured just before it (a link off its target fails the run: its
// figures would not be the ones the topology promises).
func NewRun(ctx context.Context, l Lab, kind results.Kind, command []string, params any) (*results.Run, error) {
	wan, err := l.CheckWAN(ctx)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	r := &results.Run{ID: results.NewID(now), Kind: kind, Lab: l.Plan().Lab, Started: now.UTC(), Command: command,
		Params: params, Topology: l.Plan().Spec, Configs: configs(l), Versions: versions(l.Plan()), Host: hostFacts()}
	if len(wan) > 0 {
		r.WAN = wan
	}
	if d := disk.Last(l.Plan()); len(d) > 0 {
		r.Disks = d
	}
	r.Warnings = append(r.Warnings, l.Plan().Warnings...)
	exporters, err := monitor.Record(l.Plan(), l.Dial, results.RunDir(l.Home(), r.ID), time.Second)
	if err != nil {
		return nil, fmt.Errorf("monitoring: %w", err)
	}
	recording(r.ID, &recorder{machine.Record(l.HostUsage, l.Plan().Hosts, time.Second), exporters})
	return r, nil
}

// Finish completes a run's record: end time, the faults injected while it
// ran, each host's usage (hosts.csv beside run.json), its results; and
// saves it.
func Finish(l Lab, run *results.Run, interrupted bool, res any) error {
	run.Interrupted, run.Finished = interrupted, time.Now().UTC()
	if f := l.Faults(run.Started, run.Finished); len(f) > 0 {
		run.Faults = f
	}
	run.Results, _ = json.Marshal(res)
	var samples []machine.Sample
	if rec := recorded(run.ID); rec != nil {
		if rec.exporters != nil {
			sum, err := rec.exporters.Stop()
			if err != nil {
				run.Warnings = append(run.Warnings, fmt.Sprintf("monitoring: the exporters' series may be incomplete: %v", err))
			}
			run.Monitoring = sum
			// a scrape failing while a fault holds its host down is what
			// the fault does; an exporter never answering is worth a word
			for _, name := range sum.Silent {
				run.Warnings = append(run.Warnings, fmt.Sprintf("monitoring: %s never answered during the run (no series of it in %s)", name, sum.File))
			}
		}
		samples = rec.hosts.Stop()
		if sums := machine.Summarize(samples, l.Plan().Hosts); len(sums) > 0 {
			run.Hosts = sums
			run.Warnings = append(run.Warnings, machine.Warnings(sums)...)
		}
	}
	if err := results.Save(l.Home(), run); err != nil || len(samples) == 0 {
		return err
	}
	if rows := DiskRows(samples); len(rows) > 0 {
		if err := results.WriteCSV(l.Home(), run.ID, DisksCSV, DisksHeader, rows); err != nil {
			return err
		}
	}
	return results.WriteCSV(l.Home(), run.ID, HostsCSV, HostsHeader, HostRows(samples))
}

// DisksCSV is a run's per-disk samples, one row per emulated disk and second.
const DisksCSV = "disks.csv"

// DisksHeader is disks.csv's header.
var DisksHeader = []string{"t", "host", "disk", "volume", "iops", "iops_cap", "mbps", "latency_ms", "util", "storage_iops"}

// DiskRows renders the disks of host samples as disks.csv rows.
func DiskRows(samples []machine.Sample) [][]string {
	var rows [][]string
	f := func(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }
	for _, s := range samples {
		for _, d := range s.Disks {
			rows = append(rows, []string{f(s.T, 3), s.Host, d.Name, d.Volume, f(d.IOPS, 1), strconv.Itoa(d.IOPSCap), f(d.Bps/1e6, 2), f(d.LatencyMs, 2), f(d.Util, 3), f(d.StorageIOPS, 1)})
		}
	}
	return rows
}

// HostsCSV is a run's per-host samples, one row per host and second.
const HostsCSV = "hosts.csv"

// HostsHeader is hosts.csv's header.
var HostsHeader = []string{"t", "host", "cpu_cores", "throttled", "memory_bytes", "oom_kills",
	"app_tx_bps", "app_rx_bps", "cluster_tx_bps", "cluster_rx_bps"}

// HostRows renders host samples as hosts.csv rows.
func HostRows(samples []machine.Sample) [][]string {
	rows := make([][]string, 0, len(samples))
	for _, s := range samples {
		nic := map[string][2]string{}
		for _, r := range s.NICs {
			nic[r.Network] = [2]string{strconv.FormatFloat(r.TxBps, 'f', 0, 64), strconv.FormatFloat(r.RxBps, 'f', 0, 64)}
		}
		rows = append(rows, []string{strconv.FormatFloat(s.T, 'f', 3, 64), s.Host, strconv.FormatFloat(s.Cores, 'f', 3, 64),
			strconv.FormatFloat(s.Throttled, 'f', 3, 64), strconv.FormatInt(s.MemoryBytes, 10), strconv.Itoa(s.OOMKills),
			nic[plan.NetApplication][0], nic[plan.NetApplication][1], nic[plan.NetCluster][0], nic[plan.NetCluster][1]})
	}
	return rows
}

// recorders are the host recordings of the runs this process has going.
var recorders sync.Map // run id → *recorder

// recorder is what a run records beside its results: its hosts' usage,
// and its exporters' series when the lab has monitoring on.
type recorder struct {
	hosts     *machine.Recorder
	exporters *monitor.Recorder // nil without monitoring
}

func recording(id string, r *recorder) { recorders.Store(id, r) }

// abandonIfFailed abandons run when *err is set (deferred by every kind of
// run once its record is started).
func abandonIfFailed(l Lab, run *results.Run, err *error) {
	if *err != nil {
		Abandon(l, run)
	}
}

// Abandon ends a run that failed before it was stored: its recording stops
// and its directory goes, so a failed run leaves a stored run or nothing
// (never a folder without run.json).
func Abandon(l Lab, run *results.Run) {
	if rec := recorded(run.ID); rec != nil {
		rec.hosts.Stop()
		_, _ = rec.exporters.Stop()
	}
	dir := results.RunDir(l.Home(), run.ID)
	if _, err := os.Stat(filepath.Join(dir, "run.json")); errors.Is(err, os.ErrNotExist) {
		_ = os.RemoveAll(dir)
	}
}

func recorded(id string) *recorder {
	r, ok := recorders.LoadAndDelete(id)
	if !ok {
		return nil
	}
	return r.(*recorder)
}

func configs(l Lab) map[string]string {
	out := map[string]string{}
	for _, n := range l.Plan().Nodes {
		out[n.Name+"/my.cnf"] = n.Config
	}
	p := l.Plan()
	for i := range p.LoadBalancers {
		b := &p.LoadBalancers[i]
		if files, err := lb.Render(p, b); err == nil && len(files) > 0 {
			out[b.Name+"/"+lb.KindOf(b).Name()+".cfg"] = files[0].Proxy
		}
	}
	return out
}

// versions are the first lines of the versions of the server, sysbench and
// the load balancers' proxies.
func versions(p *plan.Plan) map[string]string {
	out := map[string]string{}
	cmds := map[string][]string{"mariadbd": {"mariadbd", "--version"}, "sysbench": {"sysbench", "--version"}}
	for i := range p.LoadBalancers {
		k := lb.KindOf(&p.LoadBalancers[i])
		cmds[k.Name()] = k.Version()
	}
	for name, argv := range cmds {
		if b, err := exec.Command(argv[0], argv[1:]...).Output(); err == nil {
			out[name] = strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])
		}
	}
	return out
}

func hostFacts() map[string]string {
	out := map[string]string{"cpus": strconv.Itoa(runtime.NumCPU())}
	if s := facts.CoreSpeed(); s.CPUMs > 0 { // how fast a core was, beside the run's figures
		out["core_loop_cpu_ms"] = strconv.FormatFloat(s.CPUMs, 'f', 1, 64)
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		out["kernel"] = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		out["memory"] = strings.TrimSpace(strings.TrimPrefix(strings.SplitN(string(b), "\n", 2)[0], "MemTotal:"))
	}
	return out
}
