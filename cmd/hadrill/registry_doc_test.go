package main

import (
	"github.com/hadrill/hadrill/internal/drill/schedule"
	"os"
	"strings"
	"testing"

	"github.com/hadrill/hadrill/internal/chaos"
	"github.com/hadrill/hadrill/internal/drill"
	"github.com/hadrill/hadrill/internal/lb"
	"github.com/hadrill/hadrill/internal/report"
	"github.com/hadrill/hadrill/internal/study"
	"github.com/hadrill/hadrill/internal/workload"
)

// Every entry of every registry is documented where a user and a newcomer
// look: each fault kind and drill in the README as its command, each study
// step kind as a step (`kind: NAME`), each history workload as
// `--workload NAME`, each load balancer kind and each kind of run the
// report shows in its own way by name; and in ARCHITECTURE
// each entry by name and each registry's list, where a new entry goes.
func TestRegistriesDocumented(t *testing.T) {
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	readme, arch := read("../../README.md"), read("../../docs/ARCHITECTURE.md")
	type entry struct{ registry, name, inReadme string }
	var entries []entry
	for _, k := range chaos.Kinds() {
		entries = append(entries, entry{"fault kinds (chaos.families)", string(k.Name), "fault " + string(k.Name)})
	}
	for _, s := range drill.Scenarios() {
		entries = append(entries, entry{"drills (drill.registry)", s.Name, "drill " + s.Name})
	}
	for _, k := range study.StepKindNames() {
		entries = append(entries, entry{"study step kinds (study.stepKinds)", k, "kind: " + k})
	}
	for _, w := range workload.HistoryWorkloads {
		entries = append(entries, entry{"history workloads (workload.historyWorkloads)", w, "--workload " + w})
	}
	for _, k := range lb.KindNames() {
		entries = append(entries, entry{"load balancer kinds (lb.kinds)", k, k})
	}
	for _, k := range report.KindNames() {
		entries = append(entries, entry{"the report's run kinds (report.kinds)", k, k})
	}
	for _, k := range schedule.Kinds {
		entries = append(entries, entry{"chaos schedules' fault kinds (schedule.Kinds)", k, "`" + k + "`"})
	}
	for _, e := range entries {
		if !strings.Contains(strings.ToLower(readme), strings.ToLower(e.inReadme)) {
			t.Errorf("README does not document %s %q (no %q)", e.registry, e.name, e.inReadme)
		}
		if !strings.Contains(arch, e.name) {
			t.Errorf("ARCHITECTURE does not name %s %q", e.registry, e.name)
		}
	}
	for _, list := range []string{"`families`", "`registry`", "`stepKinds`", "`historyWorkloads`", "`kinds`"} {
		if !strings.Contains(arch, list) {
			t.Errorf("ARCHITECTURE does not say where a new entry goes: no %s", list)
		}
	}
}
