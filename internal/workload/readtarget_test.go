package workload

import (
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
)

// TestReplicas: the replicas are a replicated cluster's nodes but its
// primary; a lab of Galera clusters alone has none, and says what it has.
func TestReplicas(t *testing.T) {
	p := &plan.Plan{Lab: "l", Dir: t.TempDir(), Clusters: []plan.Cluster{
		{Name: "g", Kind: spec.KindGalera, Nodes: []string{"g1", "g2"}},
		{Name: "db", Kind: spec.KindPrimary, Nodes: []string{"db1", "db2", "db3"}, Primary: "db1"},
	}}
	got, err := Replicas(p)
	if err != nil || strings.Join(got, ",") != "db2,db3" {
		t.Errorf("replicas %v %v, want db2,db3", got, err)
	}
	p.Clusters = p.Clusters[:1]
	if _, err := Replicas(p); err == nil || !strings.Contains(err.Error(), "lab l has no replica (its clusters: g (galera))") {
		t.Errorf("a Galera lab's replicas: %v", err)
	}
}

// TestHistoryWorkloads: the registry lists every history workload once,
// each with its keys and their bounds.
func TestHistoryWorkloads(t *testing.T) {
	if got := strings.Join(HistoryWorkloads, ","); got != "append,bank,set,counter" {
		t.Errorf("history workloads %s", got)
	}
	for _, c := range []struct {
		name string
		keys int
		want string
	}{{"append", 0, "expected 1 to 100000, got 0"}, {"bank", 1, "a bank needs 2 to 1000 accounts, got 1"}, {"bank", 5, ""}, {"set", 10, ""}, {"counter", 0, "expected 1 to 1000 counters, got 0"}} {
		if got := HistoryKeysProblem(c.name, c.keys); got != c.want {
			t.Errorf("%s with %d keys: %q, want %q", c.name, c.keys, got, c.want)
		}
	}
	if HistoryKeys("bank") != 5 || HistoryKeys("append") != 10 || !IsHistory("set") || IsHistory("tpcc") {
		t.Errorf("keys or membership")
	}
}

// TestHistoryParamsProblems: every problem of a history run's parameters
// at once, each naming its flag; good ones have none.
func TestHistoryParamsProblems(t *testing.T) {
	good := HistoryParams{Workload: "append", Clients: 6, Time: 30 * time.Second, Keys: 10, MaxOps: 4, SyncWait: -1, Model: "serializable"}
	if p := good.Problems(); len(p) != 0 {
		t.Errorf("good parameters: %q", p)
	}
	bank := good
	bank.Workload, bank.Keys = "bank", 1
	if p := bank.Problems(); len(p) != 1 || p[0] != "--keys: a bank needs 2 to 1000 accounts, got 1" {
		t.Errorf("a bank of one account: %q", p)
	}
	bad := HistoryParams{Workload: "ledger", Clients: 0, Time: 2 * time.Hour, Keys: 0, MaxOps: 17, SyncWait: 16, Model: "linearizable"}
	want := []string{"--time: expected 1s to 1h, got 2h0m0s", "--clients: expected 1 to 256, got 0", `--workload: expected one of ` + strings.Join(HistoryWorkloads, ", ") + `, got "ledger"`,
		"--max-ops: expected 1 to 16", "--sync-wait: expected -1 (the server's own) or 0 to 15, got 16", `--model: expected one of read-committed`}
	got := bad.Problems()
	if len(got) != len(want) {
		t.Fatalf("%d problems, want %d: %q", len(got), len(want), got)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("problem %d: %q, want it to start %q", i, got[i], want[i])
		}
	}
}
