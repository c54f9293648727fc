// Package tpcc drives go-tpc's TPC-C (github.com/pingcap/go-tpc, installed by
// make deps beside hadrill): its parameters and their bounds, its command
// lines, and what its output says — each transaction type's rate and
// latency percentiles, its errors, tpmC — summarised over repeated runs.
package tpcc

import (
	"bufio"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hadrill/hadrill/internal/stats"
)

// Version is the go-tpc make deps installs.
const Version = "v1.0.7"

// Schema is the database the TPC-C tables live in.
const Schema = "tpcc"

// Transactions are TPC-C's five transaction types, as go-tpc names them.
var Transactions = []string{"NEW_ORDER", "PAYMENT", "ORDER_STATUS", "DELIVERY", "STOCK_LEVEL"}

// Params is a TPC-C sweep: the dataset's size, the client counts, how long
// each run measures, after what warm-up, how many runs of each.
type Params struct {
	Warehouses int   `json:"warehouses"`
	Threads    []int `json:"threads"`
	Time       int   `json:"time_s"`
	Warmup     int   `json:"warmup_s"`
	Runs       int   `json:"runs"`
	// Consistency runs TPC-C's consistency conditions (clause 3.3.2) after the
	// runs; one that does not hold fails the run.
	Consistency bool `json:"check"`
}

// Check lists every parameter out of its range, each naming its flag.
func (p Params) Check() []string {
	var problems []string
	if p.Warehouses < 1 || p.Warehouses > 10000 {
		problems = append(problems, fmt.Sprintf("--warehouses: expected 1 to 10000, got %d", p.Warehouses))
	}
	if len(p.Threads) == 0 {
		problems = append(problems, "--threads: expected a list of client counts, such as 1,4,16")
	}
	for _, t := range p.Threads {
		if t < 1 || t > 1024 {
			problems = append(problems, fmt.Sprintf("--threads: expected counts of 1 to 1024, got %d", t))
			break
		}
	}
	if p.Time < 5 || p.Time > 86400 {
		problems = append(problems, fmt.Sprintf("--time: expected 5 to 86400 seconds, got %d", p.Time))
	}
	if p.Warmup < 0 || p.Warmup > 3600 {
		problems = append(problems, fmt.Sprintf("--warmup: expected 0 to 3600 seconds, got %d", p.Warmup))
	}
	if p.Runs < 1 || p.Runs > 100 {
		problems = append(problems, fmt.Sprintf("--runs: expected 1 to 100, got %d", p.Runs))
	}
	return problems
}

// Target is where go-tpc connects, and as whom.
type Target struct {
	Host     string
	Port     int
	User     string
	Password string
}

// Argv is go-tpc's command line for sub ("prepare", "run", "check"): run
// with threads clients for seconds (0: prepare and check ignore it). go-tpc
// takes its password on its command line only: the caller gives it an
// account of the run's own.
func Argv(bin string, t Target, warehouses, threads, seconds int, sub string) []string {
	argv := []string{bin, "tpcc", "--host", t.Host, "--port", strconv.Itoa(t.Port), "--user", t.User, "--password", t.Password,
		"--db", Schema, "--warehouses", strconv.Itoa(warehouses), "--threads", strconv.Itoa(threads)}
	switch sub {
	case "run":
		argv = append(argv, "--time", fmt.Sprintf("%ds", seconds), "--interval", fmt.Sprintf("%ds", max(1, min(10, seconds/4))))
	case "prepare":
		// a dataset half made by a prepare that failed goes first; the
		// consistency check is a step of its own (Params.Consistency),
		// and its flag is the subcommand's (after it)
		return append(argv, "--dropdata", sub, "--no-check")
	}
	return append(argv, sub)
}

// Txn is one transaction type's figures over a run (go-tpc's [Summary]).
type Txn struct {
	Name   string  `json:"name"`
	Count  int64   `json:"count"`
	TPM    float64 `json:"tpm"`
	Errors int64   `json:"errors"`
	AvgMs  float64 `json:"avg_ms"`
	P50    float64 `json:"p50_ms"`
	P90    float64 `json:"p90_ms"`
	P95    float64 `json:"p95_ms"`
	P99    float64 `json:"p99_ms"`
	P999   float64 `json:"p999_ms"`
	MaxMs  float64 `json:"max_ms"`
}

// Result is what one go-tpc run printed.
type Result struct {
	// TpmC is new orders a minute (go-tpc's tpmC); NOPM, as HammerDB calls
	// it, is the same count: go-tpc runs without keying or think times.
	TpmC float64 `json:"tpmc"`
	// TpmTotal is every transaction type's successful ones a minute.
	TpmTotal float64 `json:"tpm_total"`
	Txns     []Txn   `json:"transactions"`
	// Errors is every transaction type's failed ones (go-tpc's _ERR
	// counts): those its own stop cut short at the end of the run (at most
	// one a client, "invalid connection") among them.
	Errors int64 `json:"errors"`
	// ByCode counts the errors go-tpc printed by the server's error code
	// ("1213": a deadlock or, under multi-writer Galera, a certification
	// conflict), "connection" for a connection lost or cut.
	ByCode map[string]int `json:"errors_by_code,omitempty"`
}

// Txn is a result's figures of one transaction type (zero when absent).
func (r Result) Txn(name string) Txn {
	for _, t := range r.Txns {
		if t.Name == name {
			return t
		}
	}
	return Txn{Name: name}
}

var (
	summaryLine = regexp.MustCompile(`^\[Summary\] (\w+) - (.*)$`)
	errorCode   = regexp.MustCompile(`Error (\d{4})`)
	tpmcLine    = regexp.MustCompile(`^tpmC: ([0-9.]+)`)
)

// Parse reads go-tpc run's output: its [Summary] lines (the last set when
// it printed more than one) and its tpmC line.
func Parse(out string) (Result, error) {
	var r Result
	txns := map[string]*Txn{}
	errs := map[string]int64{}
	sawTpmC := false
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if m := tpmcLine.FindStringSubmatch(line); m != nil {
			r.TpmC, _ = strconv.ParseFloat(m[1], 64)
			sawTpmC = true
			continue
		}
		m := summaryLine.FindStringSubmatch(line)
		if m == nil {
			code := ""
			if c := errorCode.FindStringSubmatch(line); c != nil {
				code = c[1]
			} else if strings.Contains(line, "invalid connection") || strings.Contains(line, "bad connection") {
				code = "connection"
			}
			if code != "" {
				if r.ByCode == nil {
					r.ByCode = map[string]int{}
				}
				r.ByCode[code]++
			}
			continue
		}
		f := fields(m[2])
		if base, ok := strings.CutSuffix(m[1], "_ERR"); ok {
			errs[base] = int64(f["Count"])
			continue
		}
		txns[m[1]] = &Txn{Name: m[1], Count: int64(f["Count"]), TPM: f["TPM"], AvgMs: f["Avg(ms)"], P50: f["50th(ms)"], P90: f["90th(ms)"],
			P95: f["95th(ms)"], P99: f["99th(ms)"], P999: f["99.9th(ms)"], MaxMs: f["Max(ms)"]}
	}
	if len(txns) == 0 && len(errs) == 0 {
		return r, fmt.Errorf("go-tpc printed no summary")
	}
	names := append([]string(nil), Transactions...)
	for n := range txns {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for n := range errs {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, n := range names {
		t, ok := txns[n]
		if !ok && errs[n] == 0 {
			continue
		}
		if !ok {
			t = &Txn{Name: n}
		}
		t.Errors = errs[n]
		r.Errors += t.Errors
		r.TpmTotal += t.TPM
		r.Txns = append(r.Txns, *t)
	}
	if !sawTpmC {
		r.TpmC = r.Txn("NEW_ORDER").TPM
	}
	return r, nil
}

// fields reads "Takes(s): 19.8, Count: 371, TPM: 1126.1, …".
func fields(s string) map[string]float64 {
	out := map[string]float64{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, ":")
		if !ok {
			continue
		}
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
			out[strings.TrimSpace(k)] = f
		}
	}
	return out
}

// Point is a client count's figures over its runs: tpmC's median with an
// interval of it, the median run's transactions (by tpmC), errors over
// every run.
type Point struct {
	Threads int          `json:"threads"`
	TpmC    stats.Spread `json:"tpmc"`
	// TpmTotal is the median run's.
	TpmTotal float64  `json:"tpm_total"`
	Txns     []Txn    `json:"transactions"`
	Errors   int64    `json:"errors"`
	Partial  bool     `json:"partial"`
	Runs     []Result `json:"runs"`
}

// Summarize is a client count's point from its runs.
func Summarize(threads int, runs []Result, partial bool) Point {
	p := Point{Threads: threads, Runs: runs, Partial: partial}
	if len(runs) == 0 {
		return p
	}
	var v []float64
	for _, r := range runs {
		v = append(v, r.TpmC)
		p.Errors += r.Errors
	}
	p.TpmC = stats.SpreadOf(v)
	sorted := append([]Result(nil), runs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].TpmC < sorted[j].TpmC })
	m := sorted[stats.MedianIndex(len(sorted))]
	p.TpmTotal, p.Txns = m.TpmTotal, m.Txns
	return p
}

var checkFailed = regexp.MustCompile(`check warehouse \d+ at condition \S+ failed.*`)

// CheckFailures reads go-tpc check's output: the consistency conditions
// it reported broken ("check warehouse 1 at condition 3.3.2.1 failed …";
// none: every one held, as far as it printed).
func CheckFailures(out string) []string {
	return checkFailed.FindAllString(out, -1)
}

// ErrorsByCode are the point's errors over every run, by server error code
// (Result.ByCode).
func (p Point) ErrorsByCode() map[string]int {
	out := map[string]int{}
	for _, r := range p.Runs {
		for code, n := range r.ByCode {
			out[code] += n
		}
	}
	return out
}

// Versus is a point's tpmC against a baseline's: the change of the median
// in percent, and whether it is within noise (the two medians' intervals
// overlap). known is false when either has fewer than two runs (no
// interval) or the baseline has no new orders.
func Versus(p, base stats.Spread) (pct float64, withinNoise, known bool) {
	if base.N == 0 || base.Median <= 0 || p.N == 0 {
		return 0, false, false
	}
	pct = 100 * (p.Median - base.Median) / base.Median
	if p.N < 2 || base.N < 2 {
		return pct, false, false
	}
	return pct, p.Lo <= base.Hi && base.Lo <= p.Hi, true
}

// Compared is one TPC-C run in a comparison: per client count its point
// and, after the first run, the change against the first run's point at
// the same count.
type Compared struct {
	Points []ComparedPoint `json:"points"`
}

// ComparedPoint is a point with its change against the baseline's.
type ComparedPoint struct {
	Point
	DeltaPct    *float64 `json:"delta_pct,omitempty"`
	WithinNoise *bool    `json:"within_noise,omitempty"` // absent: noise unknown
}

// Compare sets runs' points side by side against the first run's.
func Compare(runs [][]Point) []Compared {
	out := make([]Compared, len(runs))
	for i, pts := range runs {
		for _, p := range pts {
			cp := ComparedPoint{Point: p}
			if i > 0 {
				for _, b := range runs[0] {
					if b.Threads != p.Threads {
						continue
					}
					if pct, noise, known := Versus(p.TpmC, b.TpmC); b.TpmC.N > 0 && b.TpmC.Median > 0 {
						cp.DeltaPct = &pct
						if known {
							cp.WithinNoise = &noise
						}
					}
				}
			}
			out[i].Points = append(out[i].Points, cp)
		}
	}
	return out
}

// BytesPerWarehouse is about what a warehouse takes in InnoDB (its stock,
// customers, orders and history, with their indexes): TPC-C's own sizing
// of about 100 MB a warehouse.
const BytesPerWarehouse = 100 << 20

// NewOrder is the transaction type tpmC counts.
const NewOrder = "NEW_ORDER"

// Txn is a point's figures of one transaction type (its median run's;
// zero, named, when absent).
func (p Point) Txn(name string) Txn {
	for _, t := range p.Txns {
		if t.Name == name {
			return t
		}
	}
	return Txn{Name: name}
}

// CodesText lists errors by code, the most frequent first ("1213 × 4,
// connection × 2"; "-" for none).
func CodesText(codes map[string]int) string {
	keys := slices.Collect(maps.Keys(codes))
	slices.SortFunc(keys, func(a, b string) int {
		if codes[a] != codes[b] {
			return codes[b] - codes[a]
		}
		return strings.Compare(a, b)
	})
	var out []string
	for _, k := range keys {
		out = append(out, fmt.Sprintf("%s × %d", k, codes[k]))
	}
	if len(out) == 0 {
		return "-"
	}
	return strings.Join(out, ", ")
}

// Unconnected says whether a failed go-tpc run ended before it ran a
// transaction because its first connection failed: go-tpc then goes on
// with no database and panics as it sets its workload up ("failed to
// connect to database when loading data"), so nothing was measured.
func Unconnected(out string) bool {
	return strings.Contains(out, "panic: failed to connect to database")
}

// Panic is the line of go-tpc's panic in its output ("" without one):
// the line that says why, which the stack trace after it pushes out of a
// message made of the output's end.
func Panic(out string) string {
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "panic: ") {
			return strings.TrimSpace(line)
		}
	}
	return ""
}
