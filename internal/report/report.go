// Package report turns stored runs into one self-contained HTML file: what
// was found first, the results side by side, the charts (internal/chart,
// inline SVG) and tables, nothing fetched from elsewhere.
package report

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/hadrill/hadrill/internal/chart"
	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/infra/machine"
	"github.com/hadrill/hadrill/internal/monitor"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/results"
	"github.com/hadrill/hadrill/internal/stats"
	"github.com/hadrill/hadrill/internal/workload"
	"github.com/hadrill/hadrill/internal/workload/sysbench"
	"github.com/hadrill/hadrill/internal/workload/tpcc"
)

//go:embed report.html.tmpl
var tmplFS embed.FS

// Run is a stored run with what the report shows of it: its kind's part
// (figures, finding, section of the page), and what every kind of run may
// have recorded beside its results (per-second series, Galera's status and
// panels, hosts, disks).
type Run struct {
	*results.Run
	Part    part
	Series  map[int][][2]float64 // threads -> (t, tps) of the first run at that thread count
	Params  string
	Markers []chart.Marker
	// FlowControl and RecvQueue: node -> (t, value) from the status samples.
	FlowControl, RecvQueue map[string][][2]float64
	// Hosts: each measured host's summary, and its CPU (cores) and memory
	// (MiB) per second from hosts.csv.
	Hosts            []machine.Summary
	HostCPU, HostMem map[string][][2]float64
	// DiskIOPS: disk -> (t, IOPS) from disks.csv; DiskCap: disk -> its class's IOPS.
	DiskIOPS map[string][][2]float64
	DiskCap  map[string]float64
	// HostSent: network -> host -> (t, Mbit/s sent on its NIC there).
	HostSent map[string]map[string][][2]float64
	// Galera: the Galera panels drawn from mysqld_exporter's series (a
	// lab with monitoring on), each node's line per panel.
	Galera []Panel
}

// Points are the run's sysbench points (none when it is not a sweep).
func (r Run) Points() []sysbench.Point {
	if sw := sweepOf(r); sw != nil {
		return sw.Points
	}
	return nil
}

// Panel is a chart of one figure per node over a run.
type Panel struct {
	ID, Title, Y string
	Series       []monitor.Points
}

// Report is the whole document.
type Report struct {
	Generated string
	Runs      []Run
	Sweeps    []Run // the runs with per-thread results (side-by-side table)
	Charts    []chart.Chart
	Threads   []int
	// Finding says first what the runs found (Finding); Differences what
	// differs between them (settings, versions, load parameters).
	Finding     []string
	Differences []results.Part
	// TPS: each sweep's TPS per thread count with its interval (run id ->
	// threads -> figure).
	TPS map[string]map[int]stats.Figure
}

// Load reads runs from the store; unknown ids are reported together.
func Load(home string, ids []string) (*Report, error) {
	rep := &Report{Generated: time.Now().UTC().Format("2006-01-02 15:04 UTC")}
	var missing []error
	for _, id := range ids {
		r, err := results.Load(home, id)
		if err != nil {
			missing = append(missing, err)
			continue
		}
		run := Run{Run: r, Part: kindOf(r.Kind).read(home, r)}
		params, _ := json.Marshal(r.Params)
		run.Params = string(params)
		run.Series = readSeries(results.ReadCSV(home, id, "timeseries.csv"))
		run.Markers = run.Part.markers(&run)
		run.FlowControl, run.RecvQueue = readStatus(results.ReadCSV(home, id, "status.csv"))
		if run.Galera, err = galeraPanels(results.RunDir(home, id), r.Started); err != nil {
			return nil, err
		}
		if r.Hosts != nil {
			b, _ := json.Marshal(r.Hosts)
			_ = json.Unmarshal(b, &run.Hosts)
		}
		run.HostCPU, run.HostMem, run.HostSent = readHosts(results.ReadCSV(home, id, workload.HostsCSV))
		run.DiskIOPS, run.DiskCap = readDisks(results.ReadCSV(home, id, workload.DisksCSV))
		rep.Runs = append(rep.Runs, run)
	}
	if len(missing) > 0 {
		return nil, hderr.Join(missing)
	}
	first := map[results.Kind]part{}
	for _, r := range rep.Runs {
		if f, ok := first[r.Kind]; ok {
			if a, ok := r.Part.(against); ok {
				a.against(f)
			}
		} else {
			first[r.Kind] = r.Part
		}
	}
	rep.TPS = map[string]map[int]stats.Figure{}
	var sweeps []*results.Run // what differs is said between runs of one kind: the sweeps compared
	var lists [][]sysbench.Point
	for _, r := range rep.Runs {
		if sw := sweepOf(r); sw != nil {
			rep.Sweeps = append(rep.Sweeps, r)
			rep.TPS[r.ID] = sw.TPS
			sweeps = append(sweeps, r.Run)
			lists = append(lists, sw.Points)
		}
	}
	rep.Threads = sysbench.ThreadCounts(lists...)
	rep.Finding = Finding(rep.Runs)
	rep.Charts = charts(rep.Runs)
	if len(sweeps) > 1 {
		rep.Differences = results.RunDifferences(sweeps)
	}
	return rep, nil
}

// labels name the runs in legends: each run's title, with its id only
// where two runs share a title.
func labels(runs []Run) map[string]string {
	count := map[string]int{}
	for _, r := range runs {
		count[r.Title()]++
	}
	out := map[string]string{}
	for _, r := range runs {
		out[r.ID] = r.Title()
		if count[r.Title()] > 1 {
			out[r.ID] += " (run " + r.ID + ")"
		}
	}
	return out
}

// charts are every run's charts: those each kind draws over all its runs,
// then each run's own and what every run may have recorded.
func charts(runs []Run) []chart.Chart {
	label := labels(runs)
	var out []chart.Chart
	for _, k := range kinds {
		if k.together != nil {
			out = append(out, k.together(runs, label)...)
		}
	}
	for _, r := range runs {
		out = append(out, r.Part.charts(&r, label[r.ID])...)
		ts := chart.Chart{ID: "ts-" + r.ID, Title: "Throughput per second, " + label[r.ID], X: "seconds", Y: "transactions/s", Markers: r.Markers}
		keys := make([]int, 0, len(r.Series))
		for k := range r.Series {
			keys = append(keys, k)
		}
		sort.Ints(keys)
		for _, k := range keys {
			ts.Series = append(ts.Series, chart.Series{Name: fmt.Sprintf("%d threads", k), Points: r.Series[k]})
		}
		if len(ts.Series) > 0 {
			out = append(out, ts)
		}
		fc := chart.Chart{ID: "fc-" + r.ID, Title: "Flow control: time paused per second, " + label[r.ID], X: "seconds", Y: "ms paused per s", Markers: markers(r.Run)}
		rq := chart.Chart{ID: "rq-" + r.ID, Title: "Receive queue, " + label[r.ID], X: "seconds", Y: "write-sets waiting", Markers: markers(r.Run)}
		for _, node := range sortedKeys(r.FlowControl) {
			fc.Series = append(fc.Series, chart.Series{Name: node, Points: r.FlowControl[node]})
			rq.Series = append(rq.Series, chart.Series{Name: node, Points: r.RecvQueue[node]})
		}
		for _, p := range r.Galera {
			c := chart.Chart{ID: p.ID + "-" + r.ID, Title: p.Title + ", " + label[r.ID], X: "seconds", Y: p.Y, Markers: markers(r.Run)}
			for _, s := range p.Series {
				c.Series = append(c.Series, chart.Series{Name: s.Instance, Points: s.Points})
			}
			out = append(out, c)
		}
		if len(fc.Series) > 0 && len(r.Galera) == 0 { // the exporter's panels include these
			out = append(out, fc, rq)
		}
		out = append(out, hostCharts(r, label[r.ID])...)
	}
	return out
}

// HTML renders the report as one self-contained page.
func (rep *Report) HTML() ([]byte, error) {
	type figure struct {
		ID, Title string
		SVG       template.HTML
	}
	var figs []figure
	for _, c := range rep.Charts {
		svg, err := c.SVG()
		if err != nil {
			return nil, err
		}
		figs = append(figs, figure{ID: c.ID, Title: c.Title, SVG: template.HTML(svg)}) // rendered here, not user input
	}
	var t *template.Template
	t, err := template.New("report.html.tmpl").Funcs(template.FuncMap{
		"at":  pointAt,
		"fig": func(id string, threads int) stats.Figure { return rep.TPS[id][threads] },
		"cost": func(r Run, threads int) *workload.Cost {
			if sw := sweepOf(r); sw != nil {
				if c, ok := sw.Costs[threads]; ok {
					return &c
				}
			}
			return nil
		},
		"section": func(r Run) (template.HTML, error) { // the run's kind's own section
			k := kindOf(r.Kind)
			if k.page == "" {
				return "", nil
			}
			var b bytes.Buffer
			err := t.ExecuteTemplate(&b, k.pageName(), r)
			return template.HTML(b.String()), err // rendered by the template, escaped there
		},
		"codes": tpcc.CodesText,
		"f1":    func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) },
		"f2":    func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) },
		"pct":   func(v float64) string { return strconv.FormatFloat(100*v, 'f', 0, 64) + " %" },
		"mbit":  func(v int64) string { return strconv.FormatFloat(float64(v)/1e6, 'f', 0, 64) },
		"mbitf": func(v float64) string { return strconv.FormatFloat(v/1e6, 'f', 1, 64) },
		"mb":    func(v float64) string { return strconv.FormatFloat(v/1e6, 'f', 1, 64) },
		"mib":   func(v int64) string { return strconv.FormatFloat(float64(v)/(1<<20), 'f', 0, 64) + " MiB" },
		"dur":   func(r Run) string { return r.Finished.Sub(r.Started).Round(time.Second).String() },
		"opt": func(v *float64) string {
			if v == nil {
				return "never"
			}
			return strconv.FormatFloat(*v, 'f', 2, 64) + " s"
		},
	}).ParseFS(tmplFS, "report.html.tmpl")
	for _, k := range append(slices.Clone(kinds), tableKind) {
		if err == nil && k.page != "" {
			_, err = t.New(k.pageName()).Parse(k.page)
		}
	}
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	err = t.Execute(&b, struct {
		*Report
		Figures []figure
		Font    template.CSS
	}{rep, figs, chart.FontFace()})
	return b.Bytes(), err
}

// WritePNGs writes every chart as PNG into dir.
func (rep *Report) WritePNGs(dir string) error { return chart.WritePNGs(dir, rep.Charts) }

// readSeries reads timeseries.csv: the first run at each thread count.
func readSeries(rows [][]string) map[int][][2]float64 {
	out := map[int][][2]float64{}
	for _, row := range rows {
		if len(row) < 4 || row[1] != "1" {
			continue
		}
		th, _ := strconv.Atoi(row[0])
		t, _ := strconv.ParseFloat(row[2], 64)
		tps, _ := strconv.ParseFloat(row[3], 64)
		out[th] = append(out[th], [2]float64{t, tps})
	}
	return out
}

// markers places a run's faults on its time axis (seconds since its start).
func markers(r *results.Run) []chart.Marker {
	var recs []fault.Record
	b, _ := json.Marshal(r.Faults)
	_ = json.Unmarshal(b, &recs)
	return windows(recs, r.Started, r.Finished.Sub(r.Started).Seconds())
}

// windows are faults as markers on a run's time axis, each fault's window
// shaded: from the fault until what undoes it (a heal; a resume of the
// nodes it paused; a recover or restart of the nodes it took down), or the
// run's end (seconds since start). What undoes a fault is a marker too,
// without a window. Pure.
func windows(recs []fault.Record, started time.Time, end float64) []chart.Marker {
	undoes := func(u, f fault.Record) bool {
		switch u.Fault {
		case fault.Heal:
			return true
		case fault.Resume:
			return f.Fault == fault.Pause && overlaps(u.Targets, f.Targets)
		case fault.Recover, fault.Restart:
			return (f.Fault == fault.Kill || f.Fault == fault.Stop || f.Fault == fault.Crash) && (len(u.Targets) == 0 || overlaps(u.Targets, f.Targets))
		}
		return false
	}
	var out []chart.Marker
	for i, f := range recs {
		m := chart.Marker{X: f.At.Sub(started).Seconds(), Label: f.Label()}
		switch f.Fault {
		case fault.Heal, fault.Resume, fault.Recover, fault.Restart:
		default:
			m.To = end
			for _, u := range recs[i+1:] {
				if undoes(u, f) {
					m.To = u.At.Sub(started).Seconds()
					break
				}
			}
		}
		out = append(out, m)
	}
	return out
}

func overlaps(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

// readStatus turns status.csv into per-node series: the flow-control pause
// per second (from the cumulative counter) and the receive queue.
func readStatus(rows [][]string) (fc, rq map[string][][2]float64) {
	fc, rq = map[string][][2]float64{}, map[string][][2]float64{}
	type last struct{ t, ns float64 }
	prev := map[string]last{}
	for _, row := range rows {
		if len(row) < 5 || row[3] == "" {
			continue
		}
		t, _ := strconv.ParseFloat(row[0], 64)
		ns, _ := strconv.ParseFloat(row[3], 64)
		q, _ := strconv.ParseFloat(row[4], 64)
		node := row[1]
		if p, ok := prev[node]; ok && t > p.t && ns >= p.ns {
			fc[node] = append(fc[node], [2]float64{t, (ns - p.ns) / 1e6 / (t - p.t)})
		}
		prev[node] = last{t, ns}
		rq[node] = append(rq[node], [2]float64{t, q})
	}
	return fc, rq
}

func sortedKeys(m map[string][][2]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// readHosts reads hosts.csv: host -> (t, cores), host -> (t, MiB) and
// network -> host -> (t, Mbit/s sent).
func readHosts(rows [][]string) (cpu, mem map[string][][2]float64, sent map[string]map[string][][2]float64) {
	cpu, mem = map[string][][2]float64{}, map[string][][2]float64{}
	sent = map[string]map[string][][2]float64{}
	for _, row := range rows {
		if len(row) < 5 {
			continue
		}
		t, err1 := strconv.ParseFloat(row[0], 64)
		c, err2 := strconv.ParseFloat(row[2], 64)
		m, err3 := strconv.ParseFloat(row[4], 64)
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		cpu[row[1]] = append(cpu[row[1]], [2]float64{t, c})
		mem[row[1]] = append(mem[row[1]], [2]float64{t, m / (1 << 20)})
		for i, network := range []string{plan.NetApplication, plan.NetCluster} {
			if len(row) <= 6+2*i {
				break
			}
			if tx, err := strconv.ParseFloat(row[6+2*i], 64); err == nil {
				if sent[network] == nil {
					sent[network] = map[string][][2]float64{}
				}
				sent[network][row[1]] = append(sent[network][row[1]], [2]float64{t, tx / 1e6})
			}
		}
	}
	return cpu, mem, sent
}

// hostCharts draws each host's CPU and memory over the run, its machine's
// quota and limit dashed beside it: a saturated host shows at a glance.
func hostCharts(r Run, name string) []chart.Chart {
	if len(r.HostCPU) == 0 {
		return nil
	}
	cpu := chart.Chart{ID: "cpu-" + r.ID, Title: "CPU per host, " + name, X: "seconds", Y: "cores", Markers: r.Markers}
	mem := chart.Chart{ID: "mem-" + r.ID, Title: "Memory per host, " + name, X: "seconds", Y: "MiB", Markers: r.Markers}
	caps := map[string]*machine.Summary{}
	for i := range r.Hosts {
		caps[r.Hosts[i].Host] = &r.Hosts[i]
	}
	for _, h := range sortedKeys(r.HostCPU) {
		pts := r.HostCPU[h]
		cpu.Series = append(cpu.Series, chart.Series{Name: h, Points: pts})
		mem.Series = append(mem.Series, chart.Series{Name: h, Points: r.HostMem[h]})
		if s := caps[h]; s != nil && s.Machine != nil && len(pts) > 0 {
			from, to := pts[0][0], pts[len(pts)-1][0]
			cpu.Series = append(cpu.Series, chart.Series{Name: h + " quota", Cap: true, Points: [][2]float64{{from, s.Machine.CPUs}, {to, s.Machine.CPUs}}})
			lim := float64(s.Machine.MemoryBytes) / (1 << 20)
			mem.Series = append(mem.Series, chart.Series{Name: h + " limit", Cap: true, Points: [][2]float64{{from, lim}, {to, lim}}})
			cpu.Title, mem.Title = "CPU per host (dashed: its machine's quota), run "+r.ID, "Memory per host (dashed: its machine's limit), run "+r.ID
		}
	}
	out := []chart.Chart{cpu, mem}
	if len(r.DiskIOPS) > 0 {
		c := chart.Chart{ID: "iops-" + r.ID, Title: "IOPS per disk (dashed: its class's cap), " + name, X: "seconds", Y: "IO/s", Markers: r.Markers}
		for _, d := range sortedKeys(r.DiskIOPS) {
			pts := r.DiskIOPS[d]
			c.Series = append(c.Series, chart.Series{Name: d, Points: pts})
			if lim := r.DiskCap[d]; lim > 0 && len(pts) > 0 {
				c.Series = append(c.Series, chart.Series{Name: d + " cap", Cap: true, Points: [][2]float64{{pts[0][0], lim}, {pts[len(pts)-1][0], lim}}})
			}
		}
		out = append(out, c)
	}
	for _, network := range []string{plan.NetApplication, plan.NetCluster} {
		if len(r.HostSent[network]) == 0 {
			continue
		}
		c := chart.Chart{ID: "net-" + network + "-" + r.ID, Title: "Sent on the " + network + " network per host, " + name,
			X: "seconds", Y: "Mbit/s", Markers: r.Markers}
		for _, h := range sortedKeys(r.HostSent[network]) {
			pts := r.HostSent[network][h]
			c.Series = append(c.Series, chart.Series{Name: h, Points: pts})
			if s := caps[h]; s != nil && len(pts) > 0 {
				for _, n := range s.NICs {
					if n.Network == network && n.RateBps > 0 {
						lim := float64(n.RateBps) / 1e6
						c.Series = append(c.Series, chart.Series{Name: h + " cap", Cap: true, Points: [][2]float64{{pts[0][0], lim}, {pts[len(pts)-1][0], lim}}})
						c.Title = "Sent on the " + network + " network per host (dashed: its NIC's cap), " + name
					}
				}
			}
		}
		out = append(out, c)
	}
	return out
}

// readDisks reads disks.csv: disk -> (t, IOPS), and each disk's IOPS cap.
func readDisks(rows [][]string) (map[string][][2]float64, map[string]float64) {
	iops, caps := map[string][][2]float64{}, map[string]float64{}
	for _, row := range rows {
		if len(row) < 6 {
			continue
		}
		t, err1 := strconv.ParseFloat(row[0], 64)
		v, err2 := strconv.ParseFloat(row[4], 64)
		if err1 != nil || err2 != nil {
			continue
		}
		iops[row[2]] = append(iops[row[2]], [2]float64{t, v})
		caps[row[2]], _ = strconv.ParseFloat(row[5], 64)
	}
	return iops, caps
}

// galeraPanels are Galera's panels from a run's mysqld_exporter series:
// flow control, the receive and send queues, certification failures and
// the cluster size each node sees. None without monitoring, or outside
// Galera (no wsrep figures).
func galeraPanels(dir string, start time.Time) ([]Panel, error) {
	in, err := monitor.Open(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer in.Close()
	const status = "mysql_global_status_wsrep_"
	panels := []struct {
		id, name, title, y string
		rate               bool
		scale              float64
	}{
		{"gfc", "flow_control_paused_ns", "Flow control: time paused per second (mysqld_exporter)", "ms paused per s", true, 1e-6},
		{"grq", "local_recv_queue", "Receive queue (mysqld_exporter)", "write-sets waiting", false, 1},
		{"gsq", "local_send_queue", "Send queue (mysqld_exporter)", "write-sets waiting", false, 1},
		{"gcf", "local_cert_failures", "Certification failures per second (mysqld_exporter)", "failures/s", true, 1},
		{"gcs", "cluster_size", "Cluster size as each node sees it (mysqld_exporter)", "members", false, 1},
	}
	names := map[string]bool{}
	for _, p := range panels {
		names[status+p.name] = p.rate
	}
	got, err := monitor.Collect(in, plan.JobMysqld, names, start)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, monitor.File), err)
	}
	var out []Panel
	for _, p := range panels {
		series := got[status+p.name]
		if len(series) == 0 {
			continue
		}
		for i := range series {
			for j := range series[i].Points {
				series[i].Points[j][1] *= p.scale
			}
		}
		out = append(out, Panel{ID: p.id, Title: p.title, Y: p.y, Series: series})
	}
	return out, nil
}
