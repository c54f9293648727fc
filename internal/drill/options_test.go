package drill

import (
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/workload"
)

// TestOptionsProblems: every problem of a drill's options named at once,
// the flag first; good options have none.
func TestOptionsProblems(t *testing.T) {
	good := Options{Scenario: "failover", Workload: "acked", Model: "strict-serializable", Rate: 100,
		Before: time.Second, After: time.Second, Hold: 30 * time.Second, Timeout: 90 * time.Second}
	with := func(f func(o *Options)) Options {
		o := good
		f(&o)
		return o
	}
	cases := []struct {
		name string
		o    Options
		want []string
	}{
		{"good", good, nil},
		{"the acknowledged writes alone, no model", with(func(o *Options) { o.Workload, o.Model = "", "" }), nil},
		{"a history workload without a model", with(func(o *Options) { o.Workload, o.Model = "append", "" }), []string{`--model: expected one of read-committed`}},
		{"a history workload reading on replicas", with(func(o *Options) { o.Workload, o.ReadTarget = "bank", "replicas" }), nil},
		{"unknown drill", with(func(o *Options) { o.Scenario = "meteor" }), []string{`SCENARIO: unknown drill "meteor"`}},
		{"rate", with(func(o *Options) { o.Rate = 0 }), []string{"--rate: expected 1 to 1000 writes/s, got 0"}},
		{"hold and timeout", with(func(o *Options) { o.Hold, o.Timeout = 0, 0 }), []string{"--hold: expected 1s", "--timeout: expected 1s"}},
		{"workload, model and reads at once", with(func(o *Options) { o.Workload, o.Model, o.ReadTarget = "ledger", "linearizable", "replicas" }),
			[]string{`--workload: expected one of ` + strings.Join(Workloads, ", ") + `, got "ledger"`, `--model: expected one of read-committed`, "--read-target: applies to the history workloads"}},
		{"reads beside the acknowledged writes alone", with(func(o *Options) { o.ReadTarget = "db2" }), []string{"--read-target: applies to the history workloads (--workload " + strings.Join(workload.HistoryWorkloads, ", ") + "), got --workload acked"}},
		{"too many targets", with(func(o *Options) { o.Targets = []string{"db1", "db2"} }), []string{"TARGET: failover drill takes at most 1 targets"}},
	}
	for _, c := range cases {
		got := c.o.Problems()
		if len(got) != len(c.want) {
			t.Errorf("%s: %d problems, want %d: %q", c.name, len(got), len(c.want), got)
			continue
		}
		for i, w := range c.want {
			if !strings.HasPrefix(got[i], w) {
				t.Errorf("%s: problem %d %q, want it to start %q", c.name, i, got[i], w)
			}
		}
	}
}
