package spec

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// A profile is a promise about durability: durable flushes the redo log
// and syncs the binary log at every commit, relaxed writes them about once
// a second, default is the server's own defaults. A config override of one
// of those settings either keeps the promise or breaks it; a broken
// promise is never still called by the profile's name.

// setting is one option a profile's promise rests on, and the values that
// keep it (or, with breaks, the values that break it), as the server reads
// a value of its type: a boolean's on/off, true/false, yes/no or a number
// (non-zero is on); a number's digits (the server reads "true" as 0, "ON"
// as an error, "1K" as 1024: anything but plain digits is refused where a
// promise rests on it); an enumeration's name or its number.
type setting struct {
	option string
	kind   int
	keeps  []string // normalised values: a boolean's 1/0, a number's digits
	breaks []string
	says   string
}

// kinds of options
const (
	boolOption = iota
	numberOption
	enumOption
)

func (s setting) kept(value string) bool {
	v := strings.ToLower(strings.TrimSpace(value))
	switch s.kind {
	case boolOption:
		v = normalValue(v)
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n != 0 {
			v = "1"
		}
	case numberOption:
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return false
		}
		v = strconv.FormatUint(n, 10)
	}
	if s.breaks != nil {
		return !slices.Contains(s.breaks, v)
	}
	return slices.Contains(s.keeps, v)
}

// promises are the settings each profile stands for. default is the
// server's own defaults: overriding them is allowed, and the profile is then
// shown with what changed (ProfileNote).
var promises = map[string][]setting{
	"durable": {
		{option: "innodb_flush_log_at_trx_commit", kind: numberOption, keeps: []string{"1", "3"}, says: "flushes the redo log at every commit (1)"},
		{option: "sync_binlog", kind: numberOption, keeps: []string{"1"}, says: "syncs the binary log at every commit (1)"},
		{option: "innodb_doublewrite", keeps: []string{"1"}, says: "keeps the doublewrite buffer (no torn pages after a crash)"},
		// littlesync and nosync skip the flushes (MariaDB: for testing
		// only); an enumeration is also read by its number
		{option: "innodb_flush_method", kind: enumOption, breaks: []string{"littlesync", "nosync", "2", "3"}, says: "flushes what it writes (innodb_flush_method littlesync and nosync skip it)"},
	},
	"relaxed": {
		{option: "innodb_flush_log_at_trx_commit", kind: numberOption, keeps: []string{"0", "2"}, says: "writes the redo log about once a second (0 or 2)"},
	},
	"default": {
		{option: "innodb_flush_log_at_trx_commit", kind: numberOption, keeps: []string{"1"}},
		{option: "sync_binlog", kind: numberOption, keeps: []string{"0"}},
		{option: "innodb_doublewrite", keeps: []string{"1"}},
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

// ServerReads is how the server reads an override: the option it sets (a
// normalised name) and the value it sets (trimmed). A name may start with
// loose- (which changes nothing), then one of skip- and disable- (the
// option off, 0, whatever value is given but 0, which sets it on), enable-
// (on, 1, unless the value is 0) or maximum- (a cap on SET, no value: sets
// false; the server refuses it in an option file).
func ServerReads(key, value string) (option, val string, sets bool) {
	k := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(key), "-", "_"))
	val, sets = strings.TrimSpace(value), true
	if rest, ok := strings.CutPrefix(k, "loose_"); ok && rest != "" {
		k = rest
	}
	for _, p := range []string{"skip_", "disable_", "enable_", "maximum_"} {
		rest, ok := strings.CutPrefix(k, p)
		if !ok || rest == "" {
			continue
		}
		on := p == "enable_"
		if val == "0" {
			on = !on
		}
		switch {
		case p == "maximum_":
			sets = false
		case on:
			val = "1"
		default:
			val = "0"
		}
		return rest, val, sets
	}
	return k, val, sets
}

// promised is the promise setting the server reads an option name as: the
// setting itself, or the one setting it abbreviates (the server takes an
// unambiguous prefix of a name for it).
func promised(profile, option string) (setting, bool) {
	var prefixOf []setting
	for _, s := range promises[profile] {
		if option == s.option {
			return s, true
		}
		if strings.HasPrefix(s.option, option) {
			prefixOf = append(prefixOf, s)
		}
	}
	if len(prefixOf) == 1 {
		return prefixOf[0], true
	}
	return setting{}, false
}

// broken is the setting of a profile's promise an override breaks, with
// how the server reads it ("" when it breaks none).
func broken(profile, key, value string) (setting, string) {
	option, val, sets := ServerReads(key, value)
	s, ok := promised(profile, option)
	if !sets || !ok || s.kept(val) {
		return setting{}, ""
	}
	read := s.option + "=" + strings.TrimSpace(value)
	if strings.ToLower(strings.ReplaceAll(strings.TrimSpace(key), "-", "_")) != s.option || val != strings.TrimSpace(value) {
		read = fmt.Sprintf("%s=%s (the server reads %s as %s=%s)", s.option, val, strings.TrimSpace(key+"="+value), s.option, val)
	}
	return s, read
}

// ProfileConflicts lists, for a profile that makes a promise (durable,
// relaxed), each config override that breaks it, keyed by the override's
// own key: the spec is refused rather than a server called durable that
// is not. An override is read as the server reads it (ServerReads, and an
// abbreviated name as the setting it abbreviates).
func ProfileConflicts(profile string, config map[string]string) map[string]string {
	if profile == "default" {
		return nil
	}
	out := map[string]string{}
	for key, val := range config {
		if s, read := broken(profile, key, val); read != "" {
			out[key] = fmt.Sprintf("profile %s %s; %s breaks that promise: choose the profile that says what you want "+
				"(default is the server's own settings and takes any override)", profile, s.says, read)
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
		if s, read := broken(profile, key, val); read != "" {
			_, v, _ := ServerReads(key, val)
			out = append(out, s.option+"="+v)
		}
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// SameOption lists the overrides the server reads as one option that
// another override sets too (keyed by the later key in sorted order, with
// the earlier one): my.cnf's last line would win, which hadrill's sorted
// render order alone would decide.
func SameOption(config map[string]string) map[string]string {
	first := map[string]string{}
	out := map[string]string{}
	for _, key := range slices.Sorted(maps.Keys(config)) {
		option, _, sets := ServerReads(key, config[key])
		if !sets {
			continue
		}
		if k, ok := first[option]; ok {
			out[key] = k
			continue
		}
		first[option] = key
	}
	return out
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
