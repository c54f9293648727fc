package sysbench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/hadrill/hadrill/internal/golden"
)

// Outputs of sysbench 1.0.20 captured against a hadrill galera3 lab
// (testdata/README.md says how each was produced).
func TestParseGolden(t *testing.T) {
	for _, name := range []string{"run-ok", "run-errors", "run-killed", "run-sysbench11"} {
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join("testdata", name+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			r, err := Parse(string(in))
			if err != nil {
				t.Fatal(err)
			}
			summary := map[string]any{"result": r, "p50": r.Percentile(50), "p95": r.Percentile(95), "p99": r.Percentile(99)}
			got, _ := json.MarshalIndent(summary, "", "  ")
			golden.Check(t, name, append(got, '\n'))
		})
	}
}

func TestParseChecks(t *testing.T) {
	in, _ := os.ReadFile("testdata/run-killed.txt")
	r, _ := Parse(string(in))
	if !r.Partial || len(r.Intervals) == 0 || r.TPS == 0 {
		t.Errorf("a killed run must keep its intervals, marked partial: %+v", r)
	}
	in, _ = os.ReadFile("testdata/run-ok.txt")
	r, _ = Parse(string(in))
	if r.Partial || r.TPS == 0 || r.Percentile(95) == 0 || r.Percentile(99) < r.Percentile(95) {
		t.Errorf("a complete run: partial=%v tps=%v p95=%v p99=%v", r.Partial, r.TPS, r.Percentile(95), r.Percentile(99))
	}
	if _, err := Parse("FATAL: unable to connect to MySQL server on host '198.18.0.1', port 3306\n"); err == nil {
		t.Error("output without results accepted")
	}
}

func TestParseThreads(t *testing.T) {
	if got, err := ParseThreads("1, 2,16"); err != nil || len(got) != 3 || got[2] != 16 {
		t.Errorf("%v %v", got, err)
	}
	for _, bad := range []string{"", "1,x", "0", "-4", "1,,2", "99999"} {
		if _, err := ParseThreads(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestUnstarted: sysbench's output ending before its threads started (it
// could not open its sessions) is told from a run that started.
func TestUnstarted(t *testing.T) {
	ok, err := os.ReadFile("testdata/run-killed.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		out  string
		want bool
	}{
		{"sysbench 1.0.20\n\nInitializing worker threads...\n\nFATAL: unable to connect to MySQL server on host '198.18.0.1', port 3306, aborting...\nFATAL: error 2013: Lost connection to server at 'handshake: reading initial communication packet', system error: 104\nFATAL: `thread_init' function failed: /usr/share/sysbench/oltp_common.lua:352: connection creation failed\n", true},
		{string(ok), false},
		{"", true},
	} {
		if got := Unstarted(c.out); got != c.want {
			t.Errorf("Unstarted(%.60q) = %v", c.out, got)
		}
	}
}
