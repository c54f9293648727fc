package provision

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/server"
	"github.com/hadrill/hadrill/internal/spec"
)

// The credentials are generated once each, readable by their owner only,
// and the application's client file names the load balancer.
func TestSecrets(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "secrets")
	p := &plan.Plan{Lab: "s", Secrets: plan.Secrets{Dir: dir, App: dir + "/app", Check: dir + "/check", Repl: dir + "/repl", Client: dir + "/client.cnf"},
		Nodes:         []plan.Node{{Name: "db1", Address: "198.18.0.11", Port: 3306}},
		LoadBalancers: []plan.LB{{Name: "lb", Address: "198.18.0.101", Port: 3306}}}
	if err := Secrets(p); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range []string{p.Secrets.App, p.Secrets.Check, p.Secrets.Repl, p.Secrets.Client} {
		st, err := os.Stat(f)
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v", f, st, err)
		}
		b, _ := os.ReadFile(f)
		if seen[string(b)] {
			t.Errorf("%s repeats another secret", f)
		}
		seen[string(b)] = true
	}
	if st, _ := os.Stat(dir); st.Mode().Perm() != 0o700 {
		t.Errorf("directory %v", st.Mode())
	}
	if b, _ := os.ReadFile(p.Secrets.Client); !strings.Contains(string(b), "198.18.0.101") || !strings.Contains(string(b), plan.AppUser) {
		t.Errorf("client file:\n%s", b)
	}
}

// Only the node of a one-node Galera cluster bootstraps at creation.
func TestBootstrapLoners(t *testing.T) {
	p := &plan.Plan{Clusters: []plan.Cluster{
		{Name: "solo", Kind: spec.KindGalera, Nodes: []string{"s1"}},
		{Name: "db", Kind: spec.KindGalera, Nodes: []string{"db1", "db2", "db3"}},
		{Name: "rep", Kind: spec.KindPrimary, Nodes: []string{"r1"}},
	}}
	got := BootstrapLoners(p)
	if len(got) != 1 || len(got["s1"]) != 1 || got["s1"][0] != server.BootstrapFlag {
		t.Errorf("%v", got)
	}
}
