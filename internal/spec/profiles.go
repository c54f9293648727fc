package spec

import (
	"fmt"
	"slices"
	"strings"
)

// A profile is a promise about durability: durable flushes the redo log
// and syncs the binary log at every commit, relaxed writes them about once
// a second, default is the server's own defaults. A config override of one
// of those settings either keeps the promise or breaks it; a broken
// promise is never still called by the profile's name.

// setting is one option a profile's promise rests on, and the values that
// keep it.
type setting struct {
	option string
	keeps  []string // normalised values (lower case; on/off as 1/0)
	says   string
}

// promises are the settings each profile stands for. default is the
// server's own defaults: overriding them is allowed, and the profile is then
// shown with what changed (ProfileNote).
var promises = map[string][]setting{
	"durable": {
		{"innodb_flush_log_at_trx_commit", []string{"1", "3"}, "flushes the redo log at every commit (1)"},
		{"sync_binlog", []string{"1"}, "syncs the binary log at every commit (1)"},
		{"innodb_doublewrite", []string{"1"}, "keeps the doublewrite buffer (no torn pages after a crash)"},
	},
	"relaxed": {
		{"innodb_flush_log_at_trx_commit", []string{"0", "2"}, "writes the redo log about once a second (0 or 2)"},
	},
	"default": {
		{"innodb_flush_log_at_trx_commit", []string{"1"}, ""},
		{"sync_binlog", []string{"0"}, ""},
		{"innodb_doublewrite", []string{"1"}, ""},
	},
}

func normalValue(v string) string {
	switch v = strings.ToLower(strings.TrimSpace(v)); v {
	case "on", "true", "yes":
		return "1"
	case "off", "false", "no":
		return "0"
	}
	return v
}

// ProfileConflicts lists, for a profile that makes a promise (durable,
// relaxed), each config override that breaks it, keyed by the override's
// own key: the spec is refused rather than a server called durable that
// is not.
func ProfileConflicts(profile string, config map[string]string) map[string]string {
	if profile == "default" {
		return nil
	}
	out := map[string]string{}
	for key, val := range config {
		for _, s := range promises[profile] {
			if NormalizeOption(key) == s.option && !slices.Contains(s.keeps, normalValue(val)) {
				out[key] = fmt.Sprintf("profile %s %s; %s=%s breaks that promise: choose the profile that says what you want "+
					"(default is the server's own settings and takes any override)", profile, s.says, s.option, val)
			}
		}
	}
	return out
}

// ProfileNote names the settings a profile stands for that the config
// changes (sorted, "option=value, ..."), "" when none: the default
// profile with innodb_flush_log_at_trx_commit=2 is shown as such.
func ProfileNote(profile string, config map[string]string) string {
	var out []string
	for key, val := range config {
		for _, s := range promises[profile] {
			if NormalizeOption(key) == s.option && !slices.Contains(s.keeps, normalValue(val)) {
				out = append(out, s.option+"="+strings.TrimSpace(val))
			}
		}
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// engineOptions name the storage engine of tables created without one.
var engineOptions = []string{"default_storage_engine", "enforce_storage_engine", "storage_engine"}

// CheckEngine says what is wrong with an option of a Galera cluster that
// makes tables of another engine than InnoDB, "" when nothing is: Galera
// replicates InnoDB only, so a MyISAM or Aria table holds on each node
// only what was written there (a drill's acknowledged writes would be on
// one node).
func CheckEngine(key, value string) string {
	k := NormalizeOption(key)
	for _, o := range engineOptions {
		if (k == o || (len(k) >= len("default_st") && strings.HasPrefix(o, k))) && !strings.EqualFold(strings.TrimSpace(value), "innodb") {
			return fmt.Sprintf("a Galera cluster replicates InnoDB tables only: %s=%s would make tables whose writes stay on the node "+
				"that took them; use InnoDB", o, value)
		}
	}
	return ""
}
