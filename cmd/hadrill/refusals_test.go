package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/hadrill/hadrill/internal/golden"
)

// Every refusal of bad input the command line makes before it touches a
// lab: exit 2, every problem named at once with the flag or argument and
// what was expected, nothing written to the home (testdata/refusals.golden).
func TestRefusals(t *testing.T) {
	home := t.TempDir()
	cases := [][]string{
		{"up", "--name", "Bad!"},
		{"up", "--preset", "nope", "--wait", "-1s"},
		{"up", "-f", "/nonexistent.yaml"},
		{"--output", "yaml", "status"},
		{"plan", "--preset", "nope"},
		{"bench", "sysbench", "--name", "nolab", "--threads", "1,x", "--time", "0"},
		{"bench", "sysbench", "--name", "nolab", "--time", "5s"},
		{"bench", "tpcc", "--name", "nolab", "--warehouses", "0", "--threads", "x"},
		{"bench", "consistency", "--name", "nolab", "--workload", "nope"},
		{"drill", "failover", "--name", "nolab", "--rate", "-1", "--before", "-1s"},
		{"drill", "chaos", "--name", "nolab", "--seed", "x"},
		{"drill", "failover", "--name", "nolab", "--hold", "abc"},
		{"drill", "failover", "--name", "nolab", "--workload", "nope"},
		{"drill", "failover", "--name", "nolab", "--model", "linearizable", "--read-target", "replicas", "--node", "db1", "db2"},
		{"fault", "crash", "--name", "nolab"},
		{"study", "run", "seed000-sweep", "--scale", "huge"},
		{"study", "run", "seed000-sweep", "--variants", "", "--max-memory", "lots", "--scale", "huge"},
		{"study", "run", "seed000-sweep", "--budget", "1h", "--variants", "nope"},
		{"study", "show", "seed000-sweep", "--file", "/nonexistent.yaml"},
		{"study", "run", "--resume", "20261130-010000-aaaa"},
		{"study", "run", "seed000-sweep", "--resume", "../x", "--variants", ""},
		{"study", "tally", "--scale", "huge"},
		{"study", "tally", "20261130-010000-aaaa", "../x", "--scale", "full"},
		{"study", "tally"},
		{"check", "/nonexistent.jsonl"},
		{"runs", "compare"},
		{"lb-check", "--kind", "nginx"},
		{"lb-iptables"},
		{"lb-iptables", "--config", "/nonexistent.json"},
		{"status", "--name", "nolab"},
		{"drain", "db1", "--name", "nolab", "--wait=-1s"},
		{"nope"},
	}
	var out strings.Builder
	for _, args := range cases {
		_, stderr, code := hadrill(t, append([]string{"--home", home}, args...)...)
		if code != 2 {
			t.Errorf("hadrill %s: exit %d, want 2\n%s", strings.Join(args, " "), code, stderr)
		}
		fmt.Fprintf(&out, "$ hadrill %s\n%sexit %d\n\n", strings.Join(args, " "), strings.ReplaceAll(stderr, home, "HOME"), code)
	}
	golden.Check(t, "refusals", []byte(out.String()))
	if left, _ := os.ReadDir(home); len(left) > 0 { // not even the labs directory (a lock taken for an unknown lab made it)
		t.Errorf("the refusals wrote into the home: %v", left)
	}
}
