// Package slap drives mariadb-slap (seed 001's mysqlslap tests: a read or
// write load at rising concurrency) and parses its output.
package slap

import (
	"bufio"
	"errors"
	"fmt"
	"github.com/hadrill/hadrill/internal/workload/employees"
	"regexp"
	"strconv"
	"strings"
)

// Point is one concurrency level.
type Point struct {
	Concurrency      int     `json:"concurrency"`
	AvgS             float64 `json:"avg_s"` // seconds to run all queries, over the iterations
	MinS             float64 `json:"min_s"`
	MaxS             float64 `json:"max_s"`
	QueriesPerClient int     `json:"queries_per_client"`
	QPS              float64 `json:"qps"` // concurrency × queries per client / average seconds
}

// Result is a parsed run; Errors are mariadb-slap's own error lines. When
// there are any, the timings are not trustworthy (mariadb-slap still prints
// them, and exits 0).
type Result struct {
	Points []Point  `json:"points"`
	Errors []string `json:"errors,omitempty"`
}

var fieldRE = regexp.MustCompile(`^\s*(Average|Minimum|Maximum) number of seconds to run all queries: ([\d.]+) seconds|^\s*Number of clients running queries: (\d+)|^\s*Average number of queries per client: (\d+)`)

// Parse reads mariadb-slap's output.
func Parse(text string) (Result, error) {
	var r Result
	var cur *Point
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "mariadb-slap:") || strings.HasPrefix(line, "mysqlslap:"):
			if len(r.Errors) < 20 {
				r.Errors = append(r.Errors, strings.TrimSpace(line))
			}
		case strings.TrimSpace(line) == "Benchmark":
			r.Points = append(r.Points, Point{})
			cur = &r.Points[len(r.Points)-1]
		case cur != nil:
			m := fieldRE.FindStringSubmatch(line)
			switch {
			case m == nil:
			case m[1] == "Average":
				cur.AvgS = atof(m[2])
			case m[1] == "Minimum":
				cur.MinS = atof(m[2])
			case m[1] == "Maximum":
				cur.MaxS = atof(m[2])
			case m[3] != "":
				cur.Concurrency, _ = strconv.Atoi(m[3])
			case m[4] != "":
				cur.QueriesPerClient, _ = strconv.Atoi(m[4])
			}
		}
	}
	for i := range r.Points {
		p := &r.Points[i]
		if p.AvgS > 0 {
			p.QPS = float64(p.Concurrency*p.QueriesPerClient) / p.AvgS
		}
	}
	if len(r.Points) == 0 {
		if len(r.Errors) > 0 {
			return r, errors.New(r.Errors[0]) // already "mariadb-slap: ..."
		}
		return r, fmt.Errorf("no mariadb-slap results in the output")
	}
	return r, nil
}

// Params of a slap sweep.
type Params struct {
	Concurrency []int `json:"concurrency"`
	Iterations  int   `json:"iterations"`
	Queries     int   `json:"number_of_queries"` // shared by the clients; 0: each client runs the queries once
	// Dataset is a generated dataset the queries run over (employees) and
	// DatasetSize its size, a fraction of the sample's.
	Dataset     string  `json:"dataset,omitempty"`
	DatasetSize float64 `json:"dataset_size,omitempty"`
	Load        string  `json:"load"` // read | write | mixed (auto-generated), or "" with Query/QueryFile
	Query       string  `json:"query,omitempty"`
	QueryFile   string  `json:"query_file,omitempty"`
	Schema      string  `json:"schema"`
}

// Loads are the auto-generated load types.
var Loads = map[string]string{"read": "read", "write": "write", "mixed": "mixed"}

// Complete fills what the command line leaves to defaults: document
// 001's read query over the employees dataset when no load or query is
// given, else the mixed generated load; no dataset size without a
// dataset; the schema the load or the dataset runs in (a custom query:
// the application's schema, app).
func (p *Params) Complete() {
	if p.Dataset == "employees" && p.Load == "" && p.Query == "" && p.QueryFile == "" {
		p.Query = employees.Query // document 001's read test
	}
	if p.Load == "" && p.Query == "" && p.QueryFile == "" {
		p.Load = "mixed"
	}
	if p.Dataset == "" {
		p.DatasetSize = 0
	}
	switch {
	case p.Schema == "" && p.Dataset != "":
		p.Schema = p.Dataset
	case p.Schema == "" && p.Load != "":
		p.Schema = ScratchSchema
	case p.Schema == "":
		p.Schema = "app"
	}
}

// Check names every problem with the parameters.
func (p Params) Check() []string {
	var problems []string
	if p.Iterations < 1 || p.Iterations > 1000 {
		problems = append(problems, fmt.Sprintf("--iterations: expected 1 to 1000, got %d", p.Iterations))
	}
	if p.Queries < 0 {
		problems = append(problems, fmt.Sprintf("--number-of-queries: expected 0 (each client runs the queries once) or more, got %d", p.Queries))
	}
	given := 0
	for _, v := range []string{p.Load, p.Query, p.QueryFile} {
		if v != "" {
			given++
		}
	}
	if given != 1 {
		problems = append(problems, "--load, --query, --query-file: give exactly one of them")
	}
	if _, ok := Loads[p.Load]; p.Load != "" && !ok {
		problems = append(problems, fmt.Sprintf("--load: expected read, write or mixed, got %q", p.Load))
	}
	switch {
	case p.Dataset != "" && p.Dataset != "employees":
		problems = append(problems, fmt.Sprintf("--dataset: expected employees (document 001's sample database, generated), got %q", p.Dataset))
	case p.Dataset != "" && p.Load != "":
		problems = append(problems, "--dataset: a generated load (--load) makes its own tables; the dataset is for --query or --query-file")
	case p.Dataset != "" && p.Schema != p.Dataset:
		problems = append(problems, fmt.Sprintf("--schema: the %s dataset is in schema %s, got %q", p.Dataset, p.Dataset, p.Schema))
	case p.Dataset != "" && (p.DatasetSize < 0.01 || p.DatasetSize > 4):
		problems = append(problems, fmt.Sprintf("--dataset-size: expected 0.01 to 4 (a fraction of the sample database's 300,024 employees), got %g", p.DatasetSize))
	}
	switch {
	case p.Load != "" && p.Schema != ScratchSchema:
		problems = append(problems, fmt.Sprintf("--schema: a generated load creates and drops its schema, so it runs only in hadrill's scratch schema %s, got %q", ScratchSchema, p.Schema))
	case systemSchemas[strings.ToLower(p.Schema)]:
		problems = append(problems, fmt.Sprintf("--schema: %q is a system schema; queries run in an application schema such as app", p.Schema))
	case p.Schema == "" || strings.ContainsAny(p.Schema, "`'\"\\ /;\n"):
		problems = append(problems, fmt.Sprintf("--schema: expected a schema name, got %q", p.Schema))
	}
	return problems
}

// ScratchSchema is the schema generated loads own: created and dropped by
// every run. Nothing else is ever dropped or created by a benchmark.
const ScratchSchema = "hd_slap"

var systemSchemas = map[string]bool{"mysql": true, "information_schema": true, "performance_schema": true, "sys": true, "hd_meta": true}

// Argv is the mariadb-slap command; defaults is a my.cnf holding the
// connection and credentials (never on the command line).
func Argv(p Params, defaults, host string, port int) []string {
	conc := make([]string, len(p.Concurrency))
	for i, c := range p.Concurrency {
		conc[i] = strconv.Itoa(c)
	}
	argv := []string{"mariadb-slap", "--defaults-file=" + defaults, "--host=" + host, "--port=" + strconv.Itoa(port),
		"--concurrency=" + strings.Join(conc, ","), "--iterations=" + strconv.Itoa(p.Iterations), "--create-schema=" + p.Schema}
	if p.Queries > 0 {
		argv = append(argv, "--number-of-queries="+strconv.Itoa(p.Queries))
	}
	switch {
	case p.Load != "":
		argv = append(argv, "--auto-generate-sql", "--auto-generate-sql-load-type="+p.Load, "--engine=InnoDB")
	case p.Query != "":
		argv = append(argv, "--query="+p.Query, "--no-drop") // the schema is the user's: never dropped
	default:
		argv = append(argv, "--query="+p.QueryFile, "--no-drop")
	}
	return argv
}

func atof(s string) float64 { f, _ := strconv.ParseFloat(s, 64); return f }
