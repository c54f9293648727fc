package study

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/hadrill/hadrill/internal/workload"
	"github.com/hadrill/hadrill/internal/workload/employees"
	"github.com/hadrill/hadrill/internal/workload/slap"
)

// slapKind is the step kind slap: mariadb-slap's clients at each count, on one server (mariadb-slap
// takes no host list): its generated load, or a query over a generated
// dataset (employees; the query defaults to document 001's).
var slapKind = &stepKind{
	name:     "slap",
	tool:     "mariadb-slap",
	metrics:  []string{"avg_s", "qps"},
	per:      func(sc Scale) []int { return sc.Concurrency },
	endpoint: true,
	fields:   []string{"load", "dataset", "query", "queries"},
	step: func(st Step, add func(string, string, ...any)) {
		for _, prob := range st.slap(Scale{Iterations: 1, DatasetSize: 1}).Check() {
			add("", "%s", slapField(prob))
		}
		if q := strings.TrimSuffix(strings.TrimSpace(st.Query), ";"); q != "" && (!readQuery.MatchString(q) || strings.Contains(q, ";")) {
			add("query", "a study's query is one read (SELECT or WITH …): a study changes nothing of a lab but its own scratch schemas (its loads write there: load: write or mixed), got %.60q", st.Query)
		}
	},
	scale: func(st Step, sc Scale, add func(string, string, ...any)) {
		counts(add, "concurrency", "client count", st.Name, sc.Concurrency, 4096)
		if sc.Iterations < 1 || sc.Iterations > 1000 {
			add("iterations", "expected 1 to 1000 (step %s), got %d", st.Name, sc.Iterations)
		}
		if st.Dataset != "" && (sc.DatasetSize < employees.MinSize || sc.DatasetSize > employees.MaxSize) {
			add("dataset_size", "expected %g to %g, a fraction of the sample database (step %s), got %g", employees.MinSize, employees.MaxSize, st.Name, sc.DatasetSize)
		}
	},
	measure: func(ctx context.Context, m measurement) ([]Sample, error) {
		e, err := workload.Resolve(ctx, m.lab, m.target, m.credentials)
		if err != nil {
			return nil, err
		}
		out, err := workload.Slap(ctx, m.lab, e, m.step.slap(m.scale), m.opts.Command, io.Discard)
		if err != nil {
			return nil, err
		}
		var got []Sample
		for _, pt := range out.Results {
			got = append(got, samples(m.step, out.RunID, fmt.Sprintf("avg_s@%d", pt.Concurrency), pt.AvgS, fmt.Sprintf("qps@%d", pt.Concurrency), pt.QPS)...)
		}
		return got, nil
	},
	describe: func(st Step, metric string) string {
		what := "the query " + map[bool]string{true: "over the generated " + st.Dataset + " dataset", false: "given"}[st.Dataset != ""]
		if st.Load != "" {
			what = "its generated " + st.Load + " load"
		}
		name, n, _ := strings.Cut(metric, "@")
		if name == "qps" {
			return fmt.Sprintf("Queries per second of %s mariadb-slap client%s running %s", n, map[bool]string{true: "", false: "s"}[n == "1"], what)
		}
		return fmt.Sprintf("Seconds for %s mariadb-slap client%s to run %s", n, map[bool]string{true: "", false: "s"}[n == "1"], what)
	},
}

// readQuery is how a read begins.
var readQuery = regexp.MustCompile(`(?i)^(select|with)\b`)

// slap is a slap step's parameters at a scale: a dataset's query defaults
// to document 001's, and runs in the dataset's schema.
func (st Step) slap(sc Scale) slap.Params {
	p := slap.Params{Concurrency: sc.Concurrency, Iterations: sc.Iterations, Queries: st.Queries, Load: st.Load, Query: st.Query,
		Dataset: st.Dataset, DatasetSize: sc.DatasetSize, Schema: slap.ScratchSchema}
	if st.Dataset != "" {
		p.Schema = cmp.Or(st.Dataset, p.Schema)
		if p.Query == "" && p.Load == "" {
			p.Query = employees.Query
		}
	}
	return p
}

// slapField names a slap parameter problem by the study's field.
func slapField(problem string) string {
	return strings.NewReplacer("--load, --query, --query-file", "load, dataset, query", "--load", "load", "--query", "query",
		"--dataset-size", "dataset_size", "--dataset", "dataset", "--schema", "dataset", "--iterations", "iterations", "--number-of-queries", "queries").Replace(problem)
}
