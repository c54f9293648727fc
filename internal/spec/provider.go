package spec

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// A Galera cluster's wsrep_provider_options are hadrill's own (each node's
// listening addresses, a lab-sized gcache, saved primary views, and those of
// failure_detection: fast and of regions) merged with the spec's: the
// spec's value for an option hadrill sets replaces it, its other options
// are added. An option hadrill sets for a reason the spec states elsewhere
// cannot be given here: the addresses (hadrill's, per node), the segment of
// a cluster over regions, the timeouts of fast failure detection.

// ProviderOption is one "name=value" of wsrep_provider_options.
type ProviderOption struct{ Name, Value string }

// ProviderOptionsKey is the config key the server reads as
// wsrep_provider_options (its own spelling, an abbreviation, a loose-
// prefix), "" when there is none.
func ProviderOptionsKey(config map[string]string) string {
	for _, k := range slices.Sorted(maps.Keys(config)) {
		option, _, sets := ServerReads(k, config[k])
		if sets && len(option) > len("wsrep_provider_") && strings.HasPrefix("wsrep_provider_options", option) {
			return k
		}
	}
	return ""
}

// ParseProviderOptions reads "name=value; name=value" (quotes around the
// whole allowed), each part named.
func ParseProviderOptions(s string) ([]ProviderOption, error) {
	s = strings.Trim(strings.TrimSpace(s), `"'`)
	var out []ProviderOption
	var bad []string
	for _, part := range strings.Split(s, ";") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		name, value, ok := strings.Cut(part, "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || name == "" || strings.ContainsAny(name, " \t") || strings.ContainsAny(value, `"'`) {
			bad = append(bad, fmt.Sprintf("%q", strings.TrimSpace(part)))
			continue
		}
		out = append(out, ProviderOption{name, value})
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("expected name=value options separated by semicolons, got %s", strings.Join(bad, ", "))
	}
	return out, nil
}

// providerManaged says why an option may not be given in a cluster's
// wsrep_provider_options, "" when it may.
func providerManaged(c Cluster, name string) string {
	switch n := strings.ToLower(name); {
	case n == "gmcast.listen_addr" || n == "ist.recv_addr" || n == "ist.recv_bind" || n == "base_host" || n == "base_port":
		return "hadrill sets each node's listening addresses itself (see `hadrill plan`)"
	case n == "gmcast.segment" && c.Segmented():
		return "hadrill places each region's nodes in a segment of their own (regions; segments: false keeps them in one)"
	case slices.Contains(fastOptions, n) && c.FailureDetection == DetectionFast:
		return "failure_detection: fast sets it (a silent member suspected after 0.5 s); give failure_detection: stock to tune it yourself"
	case slices.Contains(fastOptions, n) && c.FailureDetection == DetectionAggressive:
		return "failure_detection: aggressive sets it (a silent member suspected after 0.3 s); give failure_detection: stock to tune it yourself"
	case (slices.Contains(fastOptions, n) || n == "gmcast.peer_timeout") && c.FailureDetection == DetectionWAN:
		return "failure_detection: wan sets it (a silent member suspected after 1.5 s); give failure_detection: stock to tune it yourself"
	}
	return ""
}

// fastOptions are the provider options of failure_detection: fast,
// aggressive and wan (mariadb.FastDetection, mariadb.AggressiveDetection,
// mariadb.WANDetection, which also sets
// gmcast.peer_timeout), lower case.
var fastOptions = []string{"evs.keepalive_period", "evs.suspect_timeout", "evs.inactive_check_period", "evs.join_retrans_period", "evs.inactive_timeout"}

// MergeProviderOptions is hadrill's options with the spec's merged in: a
// spec's value replaces hadrill's of the same name (Galera's names are case
// blind), the rest follow in the spec's order.
func MergeProviderOptions(own string, spec []ProviderOption) string {
	var parts []string
	given := map[string]string{}
	for _, o := range spec {
		given[strings.ToLower(o.Name)] = o.Value
	}
	for _, part := range strings.Split(own, ";") {
		if part == "" {
			continue
		}
		name, _, _ := strings.Cut(part, "=")
		if v, ok := given[strings.ToLower(name)]; ok {
			part = name + "=" + v
			delete(given, strings.ToLower(name))
		}
		parts = append(parts, part)
	}
	for _, o := range spec {
		if _, ok := given[strings.ToLower(o.Name)]; ok {
			parts = append(parts, o.Name+"="+o.Value)
			delete(given, strings.ToLower(o.Name))
		}
	}
	return strings.Join(parts, ";")
}

// providerProblems are what is wrong with a cluster's provider options, as
// (field, problem) pairs.
func providerProblems(c Cluster, key string) [][2]string {
	opts, err := ParseProviderOptions(c.Config[key])
	if err != nil {
		return [][2]string{{"", err.Error()}}
	}
	var out [][2]string
	for _, o := range opts {
		if why := providerManaged(c, o.Name); why != "" {
			out = append(out, [2]string{o.Name, why})
		}
	}
	return out
}

// providerWarnings are what a cluster's provider options allow that an
// operator should hear of.
func providerWarnings(c Cluster) []string {
	key := ProviderOptionsKey(c.Config)
	if key == "" {
		return nil
	}
	opts, _ := ParseProviderOptions(c.Config[key])
	var out []string
	for _, o := range opts {
		if n := strings.ToLower(o.Name); (n == "pc.ignore_sb" || n == "pc.ignore_quorum") && normalValue(o.Value) != "0" {
			out = append(out, fmt.Sprintf("config.%s: %s=%s lets the cluster's parts take writes without a majority (split brain): "+
				"what a partition loses is then this setting's, not Galera's", key, o.Name, o.Value))
		}
	}
	return out
}
