package spec

import (
	"fmt"
	"sort"
	"strings"
)

// The server reads an option name loosely: dashes and underscores are the
// same, `loose-` only silences an unknown name, `skip-`/`disable-` set a
// boolean off, `enable-` on, `maximum-` caps what SET may change, and any
// unambiguous prefix of a name stands for it. A config override is judged
// the way the server will read it, so none of these spellings gets past a
// refused option.

// Refused options: what hadrill sets itself (the lab's contract) and what
// would switch off the engine, authentication or the lab's isolation. The
// reason is given to the user.
var refused = map[string]string{}

func refuse(reason string, names ...string) {
	for _, n := range names {
		refused[n] = reason
	}
}

func init() {
	refuse("is managed by hadrill (see `hadrill plan`) and cannot be overridden",
		"datadir", "socket", "port", "bind_address", "pid_file", "log_error", "server_id", "user",
		"wsrep_cluster_address", "wsrep_node_address", "wsrep_node_name", "wsrep_cluster_name",
		"wsrep_node_incoming_address", "wsrep_sst_receive_address", "wsrep_data_home_dir",
		"gtid_domain_id", "wsrep_gtid_domain_id", "relay_log", "relay_log_index", "log_bin_index", "log_bin_basename")
	refuse("would switch Galera off or change how the lab's servers replicate (hadrill's binlogs, GTIDs and state transfers depend on it)",
		"wsrep_on", "wsrep_provider", "wsrep_gtid_mode", "log_bin", "log_slave_updates", "binlog_format", "wsrep_sst_method")
	refuse("is a start-up action hadrill decides itself (`hadrill recover` chooses which node bootstraps)",
		"wsrep_new_cluster", "wsrep_recover", "bootstrap")
	refuse("would disable authentication or run code or SQL as the server at start-up",
		"grant_tables", "init_file", "plugin_load", "plugin_load_add", "plugin_dir", "unix_socket")
	refuse("would cut the server off the lab's network (clients, the load balancer and replicas reach it over TCP)",
		"networking")
}

// optionPrefixes are the server's name prefixes, as normalised names.
var optionPrefixes = []string{"loose_", "skip_", "enable_", "disable_", "maximum_"}

// NormalizeOption is an option name as the server reads it: lower case,
// underscores for dashes, without its prefixes (loose-, skip-, enable-,
// disable-, maximum-).
func NormalizeOption(key string) string {
	k := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(key), "-", "_"))
	for again := true; again; {
		again = false
		for _, p := range optionPrefixes {
			if strings.HasPrefix(k, p) && len(k) > len(p) {
				k, again = k[len(p):], true
			}
		}
	}
	return k
}

// CheckOption says what is wrong with a my.cnf override (key = value), or
// "" when the server may be given it.
func CheckOption(key, value string) string {
	switch {
	case strings.HasPrefix(strings.TrimSpace(key), "!"):
		return "is an option-file directive (!include, !includedir): only options can be overridden"
	case key == "" || strings.ContainsAny(key, " \t\r\n=[]#\"'"):
		return "not a valid my.cnf option name"
	case strings.ContainsAny(value, "\r\n"):
		return "value must be on one line"
	}
	base := NormalizeOption(key)
	if why, ok := refused[base]; ok {
		if base != key {
			return fmt.Sprintf("%s (the server reads %q as %s)", why, key, base)
		}
		return why
	}
	if full := abbreviates(base); full != "" {
		return fmt.Sprintf("%s (the server accepts an abbreviated option name: %q would be read as %s)", refused[full], key, full)
	}
	if _, _, sets := ServerReads(key, value); !sets {
		return "a maximum- option caps what SET may change, and the server refuses it in an option file (\"Maximum value of '…' cannot be set\"): give the option itself"
	}
	if p := outsidePath(value); p != "" {
		return fmt.Sprintf("value names a path outside the node's directory (%s): give a path relative to the datadir, nothing is written outside the lab", p)
	}
	return ""
}

// abbreviates is the refused option base is a proper prefix of, if any.
func abbreviates(base string) string {
	var names []string
	for n := range refused {
		if len(n) > len(base) && strings.HasPrefix(n, base) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return ""
	}
	return names[0]
}

// outsidePath finds an absolute path, a home-relative path or a parent
// reference in a value (also inside lists such as wsrep_provider_options).
func outsidePath(value string) string {
	for _, tok := range strings.FieldsFunc(value, func(r rune) bool { return strings.ContainsRune(";=, \t:\"'", r) }) {
		if strings.HasPrefix(tok, "/") || strings.HasPrefix(tok, "~") || strings.Contains(tok, "..") {
			return tok
		}
	}
	return ""
}
