package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/golden"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/provision"
	"github.com/hadrill/hadrill/internal/spec"
	"github.com/hadrill/hadrill/internal/state"
)

// stoppedLab records a lab of a preset in home as up would, built over
// fixed computer facts, with nothing running: the commands that read a lab
// answer from its record and find every process down.
func stoppedLab(t *testing.T, home, preset, name string) *plan.Plan {
	t.Helper()
	s, err := spec.Preset(preset)
	if err != nil {
		t.Fatal(err)
	}
	f := fixedFacts()
	f.Root = false // rootless: hosts are this computer's processes, none of which runs
	p, err := plan.Build(s, name, home, f)
	if err != nil {
		t.Fatal(err)
	}
	if err := provision.Secrets(p); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	if err := state.Save(home, &state.Lab{Status: "stopped", Created: at, Updated: at, Plan: p}); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestStoppedLab: what the commands that read or use a lab say of one
// whose every process is stopped (golden: each command's text, errors and
// exit status): status and its JSON, an empty fault log and backup list,
// benchmarks and drills refused with how to bring the lab back, a drill's
// own problems named with it, promote refused on a Galera node, and down,
// which removes the lab.
func TestStoppedLab(t *testing.T) {
	home := t.TempDir()
	stoppedLab(t, home, "galera3", "fl")
	var out strings.Builder
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"status"}, 0},
		{[]string{"status", "-o", "json"}, 0},
		{[]string{"fault", "log"}, 0},
		{[]string{"fault", "log", "-o", "json"}, 0},
		{[]string{"backup", "list"}, 0},
		{[]string{"bench", "sysbench", "--threads", "1", "--time", "1"}, 2},
		{[]string{"bench", "tpcc", "--time", "5"}, 2},
		{[]string{"drill", "failover", "--rate", "0"}, 2},
		{[]string{"promote", "db2"}, 2},
		{[]string{"down"}, 0},
		{[]string{"status"}, 2},
	} {
		stdout, stderr, code := run(t, &app{facts: fixedFacts}, append([]string{"--home", home, "--name", "fl"}, c.args...)...)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d\n%s", strings.Join(c.args, " "), code, c.code, stderr)
		}
		fmt.Fprintf(&out, "$ hadrill %s\n%s%sexit %d\n\n", strings.Join(c.args, " "), stdout, stderr, code)
	}
	golden.Check(t, "stopped-lab.txt", []byte(strings.ReplaceAll(out.String(), home, "HOME")))
	if left := entries(t, filepath.Join(home, "labs")); len(left) > 0 {
		t.Errorf("down left %v", left)
	}
}

// TestFaultLog: the faults recorded on a lab, as `fault log` lists them in
// text and JSON (golden; times in UTC).
func TestFaultLog(t *testing.T) {
	inUTC(t)
	home := t.TempDir()
	p := stoppedLab(t, home, "galera3", "fl")
	at := time.Date(2026, 11, 29, 8, 10, 0, 0, time.UTC)
	for _, r := range []fault.Record{
		{At: at, Fault: fault.Kill, Targets: []string{"db1"}},
		{At: at.Add(20 * time.Second), Fault: fault.Partition, Targets: []string{"db3"}, From: []string{"db1", "db2"}},
		{At: at.Add(45 * time.Second), Fault: fault.Delay, Targets: []string{"db2"}, Value: "50ms"},
		{At: at.Add(time.Minute), Fault: fault.Heal},
	} {
		if err := fault.Log(p.FaultLog).Append(r); err != nil {
			t.Fatal(err)
		}
	}
	var out strings.Builder
	for _, args := range [][]string{{"fault", "log"}, {"fault", "log", "-o", "json"}} {
		stdout, stderr, code := run(t, &app{facts: fixedFacts}, append([]string{"--home", home, "--name", "fl"}, args...)...)
		fmt.Fprintf(&out, "$ hadrill %s\n%s%sexit %d\n\n", strings.Join(args, " "), stdout, stderr, code)
	}
	golden.Check(t, "fault-log.txt", []byte(out.String()))
}

// inUTC has the test print local times in UTC (golden files), and puts the
// zone back after it.
func inUTC(t *testing.T) {
	local := time.Local
	time.Local = time.UTC
	t.Cleanup(func() { time.Local = local })
}
