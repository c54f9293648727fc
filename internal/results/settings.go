package results

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Difference is one setting that is not the same in every variant: its
// value in each (empty: not set).
type Difference struct {
	Setting string            `json:"setting"`
	Values  map[string]string `json:"values"` // variant -> value
}

var address = regexp.MustCompile(`\b198\.1[89]\.\d{1,3}\.\d{1,3}\b`)

// Settings reads a my.cnf into section.key -> value, with the lab's own
// name and addresses blanked (they always differ between labs and say
// nothing about the set-up).
func Settings(cnf, lab string) map[string]string {
	out := map[string]string{}
	section := ""
	for _, line := range strings.Split(cnf, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
			continue
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = strings.Trim(line, "[]")
			continue
		}
		k, v, _ := strings.Cut(line, "=")
		k = strings.ReplaceAll(strings.TrimSpace(k), "-", "_")
		v = strings.TrimSpace(v)
		if lab != "" {
			v = strings.ReplaceAll(v, "/"+lab+"/", "/<lab>/")
			v = strings.ReplaceAll(v, lab, "<lab>")
		}
		out[section+"."+k] = address.ReplaceAllString(v, "<address>")
	}
	return out
}

// Differences lists the settings that differ between variants, sorted.
func Differences(byVariant map[string]map[string]string) []Difference {
	keys := map[string]bool{}
	for _, s := range byVariant {
		for k := range s {
			keys[k] = true
		}
	}
	var out []Difference
	for k := range keys {
		d := Difference{Setting: k, Values: map[string]string{}}
		seen := map[string]bool{}
		for v, s := range byVariant {
			d.Values[v] = s[k]
			seen[s[k]] = true
		}
		if len(seen) > 1 {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Setting < out[j].Setting })
	return out
}

// FirstSettings are the settings of the run's first database node (its
// my.cnf, by name order), the lab's own name and addresses blanked; nil
// when the run recorded none.
func (r *Run) FirstSettings() map[string]string {
	var names []string
	for name := range r.Configs {
		if strings.HasSuffix(name, "/my.cnf") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return nil
	}
	return Settings(r.Configs[names[0]], r.Lab)
}

// Part is one kind of thing that differs between runs.
type Part struct {
	What        string       `json:"what"`
	Differences []Difference `json:"differences"`
}

// RunDifferences are what differs between runs (by run id): the first
// database node's settings, the tools' versions, the load's parameters;
// kinds with no difference are left out.
func RunDifferences(runs []*Run) []Part {
	cnf, vers, params := map[string]map[string]string{}, map[string]map[string]string{}, map[string]map[string]string{}
	for _, r := range runs {
		cnf[r.ID], vers[r.ID] = r.FirstSettings(), r.Versions
		var p map[string]any
		b, _ := json.Marshal(r.Params)
		_ = json.Unmarshal(b, &p)
		params[r.ID] = map[string]string{}
		for k, v := range p {
			if f, ok := v.(float64); ok { // JSON numbers: 1000000, not 1e+06
				params[r.ID][k] = strconv.FormatFloat(f, 'f', -1, 64)
			} else {
				params[r.ID][k] = fmt.Sprint(v)
			}
		}
	}
	var out []Part
	for _, p := range []Part{{"setting (first database node's my.cnf)", Differences(cnf)}, {"tool version", Differences(vers)}, {"load parameter", Differences(params)}} {
		if len(p.Differences) > 0 {
			out = append(out, p)
		}
	}
	return out
}
