// Package sysbench drives sysbench OLTP runs and parses their output
// (1.0.x, and 1.1's "Throughput:" block).
package sysbench

import (
	"bufio"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/hadrill/hadrill/internal/stats"
)

// Interval is one --report-interval line.
type Interval struct {
	T          float64 `json:"t"` // seconds since start
	Threads    int     `json:"threads"`
	TPS        float64 `json:"tps"`
	QPS        float64 `json:"qps"`
	Reads      float64 `json:"reads_per_s"`
	Writes     float64 `json:"writes_per_s"`
	Other      float64 `json:"other_per_s"`
	Latency    float64 `json:"latency_ms"` // at the run's --percentile (95 by default)
	ErrPerSec  float64 `json:"err_per_s"`
	ReconnPerS float64 `json:"reconn_per_s"`
	Pct        float64 `json:"-"` // which percentile Latency is
}

// Bucket is one line of --histogram: values up to Value ms, Count events.
type Bucket struct {
	Value float64 `json:"value_ms"`
	Count int64   `json:"count"`
}

// Result is one parsed sysbench run.
type Result struct {
	Version       string     `json:"version"`
	Threads       int        `json:"threads"`
	Intervals     []Interval `json:"intervals"`
	Histogram     []Bucket   `json:"histogram,omitempty"`
	Transactions  int64      `json:"transactions"`
	TPS           float64    `json:"tps"`
	Queries       int64      `json:"queries"`
	QPS           float64    `json:"qps"`
	IgnoredErrors int64      `json:"ignored_errors"`
	ErrPerSec     float64    `json:"err_per_s"`
	Reconnects    int64      `json:"reconnects"`
	TotalTime     float64    `json:"total_time_s"`
	Events        int64      `json:"events"`
	LatMin        float64    `json:"lat_min_ms"`
	LatAvg        float64    `json:"lat_avg_ms"`
	LatMax        float64    `json:"lat_max_ms"`
	LatPct        float64    `json:"lat_pct_ms"` // the final block's percentile line
	LatPctOf      float64    `json:"lat_pct_of"` // which percentile that is (95 by default)
	Partial       bool       `json:"partial"`    // no final statistics: the run was cut short
	Fatal         []string   `json:"fatal,omitempty"`
}

var (
	intervalRE = regexp.MustCompile(`^\[ *([\d.]+)s \] thds: (\d+) tps: ([\d.]+) qps: ([\d.]+) \(r/w/o: ([\d.]+)/([\d.]+)/([\d.]+)\) lat \(ms,(\d+)%\): ([\d.]+) err/s: ([\d.]+) reconn/s: ([\d.]+)`)
	perSecRE   = regexp.MustCompile(`^(\d+)\s+\(([\d.]+) per sec\.\)`)
	bucketRE   = regexp.MustCompile(`^\s*([\d.]+) \|\**\s+(\d+)$`)
	versionRE  = regexp.MustCompile(`^sysbench (\S+)`)
)

// Parse reads sysbench output. Without the final statistics (a killed run)
// the intervals are kept and Partial is set; totals are then derived from
// the intervals, never silently dropped.
func Parse(text string) (Result, error) {
	var r Result
	section := ""
	final := false
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " \r")
		trim := strings.TrimSpace(line)
		if m := versionRE.FindStringSubmatch(line); m != nil && r.Version == "" {
			r.Version = m[1]
			continue
		}
		if m := intervalRE.FindStringSubmatch(line); m != nil {
			r.Intervals = append(r.Intervals, interval(m))
			continue
		}
		if strings.HasPrefix(trim, "FATAL:") || strings.HasPrefix(trim, "(last message repeated") {
			r.Fatal = append(r.Fatal, trim)
			continue
		}
		switch {
		case strings.HasPrefix(trim, "Number of threads:"):
			r.Threads = atoi(after(trim, ":"))
		case strings.HasPrefix(trim, "Latency histogram"):
			section = "histogram"
		case trim == "SQL statistics:":
			section, final = "sql", true
		case trim == "General statistics:":
			section = "general"
		case trim == "Latency (ms):":
			section = "latency"
		case trim == "Throughput:": // sysbench 1.1
			section, final = "throughput", true
		case trim == "Threads fairness:":
			section = "fairness"
		default:
			r.field(section, trim)
		}
	}
	if err := sc.Err(); err != nil {
		return r, err
	}
	if !final {
		r.Partial = true
		r.fromIntervals()
	}
	if len(r.Intervals) == 0 && !final {
		return r, fmt.Errorf("no sysbench results in the output%s", fatalSuffix(r.Fatal))
	}
	sort.Slice(r.Histogram, func(i, j int) bool { return r.Histogram[i].Value < r.Histogram[j].Value })
	return r, nil
}

func (r *Result) field(section, line string) {
	if section == "histogram" {
		if m := bucketRE.FindStringSubmatch(line); m != nil {
			r.Histogram = append(r.Histogram, Bucket{Value: atof(m[1]), Count: int64(atoi(m[2]))})
		}
		return
	}
	key, val, ok := strings.Cut(line, ":")
	if !ok {
		return
	}
	key, val = strings.TrimSpace(key), strings.TrimSpace(val)
	count, rate := perSec(val)
	switch section + "/" + key {
	case "sql/transactions":
		r.Transactions, r.TPS = count, rate
	case "sql/queries":
		r.Queries, r.QPS = count, rate
	case "sql/ignored errors":
		r.IgnoredErrors, r.ErrPerSec = count, rate
	case "sql/reconnects":
		r.Reconnects = count
	case "general/total time", "throughput/time elapsed": // 1.0 / 1.1
		r.TotalTime = atof(strings.TrimSuffix(val, "s"))
	case "general/total number of events", "throughput/total number of events":
		r.Events = int64(atoi(val))
	case "throughput/events/s (eps)":
		if r.TPS == 0 { // non-SQL tests have no transactions line
			r.TPS = atof(val)
		}
	case "latency/min":
		r.LatMin = atof(val)
	case "latency/avg":
		r.LatAvg = atof(val)
	case "latency/max":
		r.LatMax = atof(val)
	default:
		// the first percentile line is the run's --percentile; 1.1 may add more
		if section == "latency" && strings.HasSuffix(key, "th percentile") && r.LatPctOf == 0 {
			r.LatPctOf, r.LatPct = atof(strings.TrimSuffix(key, "th percentile")), atof(val)
		}
	}
}

// fromIntervals derives totals for a run cut short.
func (r *Result) fromIntervals() {
	if len(r.Intervals) == 0 {
		return
	}
	var tx, q, errs, prev, lat float64
	for _, iv := range r.Intervals {
		d := iv.T - prev
		prev = iv.T
		tx += iv.TPS * d
		q += iv.QPS * d
		errs += iv.ErrPerSec * d
		lat += iv.Latency * d
		r.LatMax = max(r.LatMax, iv.Latency)
	}
	// no histogram either: the time-weighted mean of the intervals' percentile
	r.LatPct, r.LatPctOf = lat/prev, r.Intervals[0].Pct
	r.TotalTime = prev
	r.Transactions, r.Queries, r.IgnoredErrors = int64(tx+0.5), int64(q+0.5), int64(errs+0.5)
	r.TPS, r.QPS, r.ErrPerSec = tx/prev, q/prev, errs/prev
	if r.Threads == 0 {
		r.Threads = r.Intervals[0].Threads
	}
}

// Percentile derives a latency percentile (ms) from the histogram; 0 when
// there is none.
func (r Result) Percentile(p float64) float64 {
	var total int64
	for _, b := range r.Histogram {
		total += b.Count
	}
	if total == 0 {
		return 0
	}
	rank := int64(stats.Rank(int(total), p))
	var seen int64
	for _, b := range r.Histogram {
		seen += b.Count
		if seen >= rank {
			return b.Value
		}
	}
	return r.Histogram[len(r.Histogram)-1].Value
}

func interval(m []string) Interval {
	return Interval{T: atof(m[1]), Threads: atoi(m[2]), TPS: atof(m[3]), QPS: atof(m[4]), Reads: atof(m[5]),
		Writes: atof(m[6]), Other: atof(m[7]), Latency: atof(m[9]), ErrPerSec: atof(m[10]), ReconnPerS: atof(m[11]), Pct: atof(m[8])}
}

func perSec(v string) (int64, float64) {
	if m := perSecRE.FindStringSubmatch(v); m != nil {
		return int64(atoi(m[1])), atof(m[2])
	}
	return 0, 0
}

func after(s, sep string) string {
	_, v, _ := strings.Cut(s, sep)
	return strings.TrimSpace(v)
}

func atoi(s string) int     { n, _ := strconv.Atoi(strings.TrimSpace(s)); return n }
func atof(s string) float64 { f, _ := strconv.ParseFloat(strings.TrimSpace(s), 64); return f }

func fatalSuffix(f []string) string {
	if len(f) == 0 {
		return ""
	}
	return ": " + f[0]
}

// Unstarted says whether sysbench's output ends before its threads
// started: a run that could not open its sessions (each thread connects
// as it starts), so nothing was measured.
func Unstarted(out string) bool {
	return !strings.Contains(out, "Threads started!")
}
