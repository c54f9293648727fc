package slap

import (
	"encoding/json"
	"github.com/hadrill/hadrill/internal/golden"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hadrill/hadrill/internal/workload/employees"
)

// Output of mariadb-slap 10.11.19 captured against a hadrill galera3 lab
// through its load balancer (testdata/README.md).
func TestParseGolden(t *testing.T) {
	for _, name := range []string{"auto-mixed", "query-join", "query-connect-errors"} {
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join("testdata", name+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			r, err := Parse(string(in))
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.MarshalIndent(r, "", "  ")
			golden.Check(t, name, append(got, '\n'))
		})
	}
}

func TestParseErrors(t *testing.T) {
	in, _ := os.ReadFile("testdata/query-connect-errors.txt")
	if r, _ := Parse(string(in)); len(r.Errors) == 0 || len(r.Points) != 2 {
		t.Errorf("timings printed despite connection errors must come with the errors: %+v", r)
	}
	in, _ = os.ReadFile("testdata/query-error.txt")
	if _, err := Parse(string(in)); err == nil || !strings.Contains(err.Error(), "doesn't exist") {
		t.Errorf("a failed query must fail the parse: %v", err)
	}
	in, _ = os.ReadFile("testdata/auto-mixed.txt")
	r, err := Parse(string(in))
	if err != nil || len(r.Points) != 2 || r.Points[1].Concurrency != 4 || r.Points[1].QPS <= 0 {
		t.Errorf("%+v %v", r, err)
	}
}

func TestCheck(t *testing.T) {
	if p := (Params{Iterations: 1, Queries: 10, Load: "mixed", Schema: ScratchSchema}).Check(); len(p) != 0 {
		t.Errorf("valid params: %v", p)
	}
	if p := (Params{Iterations: 1, Queries: 10, Query: "SELECT 1", Schema: "app"}).Check(); len(p) != 0 {
		t.Errorf("valid params: %v", p)
	}
	if p := (Params{Iterations: 0, Queries: -1, Load: "burst", Query: "SELECT 1", Schema: ScratchSchema}).Check(); len(p) != 4 {
		t.Errorf("want 4 problems, got %v", p)
	}
	// a benchmark drops or creates only what it owns
	for _, c := range []struct {
		p    Params
		want string
	}{
		{Params{Load: "write", Schema: "app"}, "runs only in hadrill's scratch schema hd_slap"},
		{Params{Load: "write", Schema: "mysql"}, "runs only in hadrill's scratch schema"},
		{Params{Query: "SELECT 1", Schema: "mysql"}, "is a system schema"},
		{Params{Query: "SELECT 1", Schema: "Information_Schema"}, "is a system schema"},
		{Params{Query: "SELECT 1", Schema: "a`b"}, "expected a schema name"},
	} {
		c.p.Iterations, c.p.Queries = 1, 1
		if p := strings.Join(c.p.Check(), "\n"); !strings.Contains(p, c.want) {
			t.Errorf("%+v: %q, want %q", c.p, p, c.want)
		}
	}
	if a := strings.Join(Argv(Params{Query: "SELECT 1", Schema: "app", Concurrency: []int{1}}, "d.cnf", "h", 3306), " "); !strings.Contains(a, "--no-drop") {
		t.Errorf("a query run must never drop the user's schema: %s", a)
	}
}

// TestComplete: what the defaults fill, and that an explicit choice stays.
func TestComplete(t *testing.T) {
	for _, c := range []struct {
		name     string
		p        Params
		want     Params
		problems int
	}{
		{"nothing given: the mixed load in the scratch schema", Params{DatasetSize: 1}, Params{Load: "mixed", Schema: ScratchSchema}, 0},
		{"the employees dataset: document 001's read query in its schema", Params{Dataset: "employees", DatasetSize: 1},
			Params{Dataset: "employees", DatasetSize: 1, Query: employees.Query, Schema: "employees"}, 0},
		{"a query: the application's schema", Params{Query: "SELECT 1", DatasetSize: 1}, Params{Query: "SELECT 1", Schema: "app"}, 0},
		{"a schema given stays, and is checked", Params{Load: "read", Schema: "app"}, Params{Load: "read", Schema: "app"}, 1},
		{"a load over a dataset is refused, not changed", Params{Dataset: "employees", Load: "write", DatasetSize: 1},
			Params{Dataset: "employees", Load: "write", DatasetSize: 1, Schema: "employees"}, 2},
	} {
		p := c.p
		p.Complete()
		if p.Load != c.want.Load || p.Query != c.want.Query || p.Schema != c.want.Schema || p.DatasetSize != c.want.DatasetSize {
			t.Errorf("%s: %+v, want %+v", c.name, p, c.want)
		}
		p.Iterations = 1
		if got := p.Check(); len(got) != c.problems {
			t.Errorf("%s: problems %q, want %d", c.name, got, c.problems)
		}
	}
}
