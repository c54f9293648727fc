package spec

import (
	"cmp"
	"fmt"
	"maps"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/hderr"
)

// LabRange is the address range every lab network must lie in (RFC 2544).
var LabRange = netip.MustParsePrefix("198.18.0.0/15")

// Failure detection settings of a Galera cluster.
const (
	DetectionStock      = "stock"
	DetectionFast       = "fast"
	DetectionAggressive = "aggressive"
	DetectionWAN        = "wan"
)

// Profiles are the named tuning profiles a cluster may use.
var Profiles = []string{"default", "durable", "relaxed"}

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9]{0,15}$`)

// NameRule is the one rule for lab and host names, as users are told it.
const NameRule = "expected a lowercase letter, then up to 15 lowercase letters or digits"

// ValidName reports whether a lab, cluster, region or host name follows
// NameRule (so names never clash in namespace prefixes and stay under kernel
// limits, and a name is never a path).
func ValidName(name string) bool { return nameRE.MatchString(name) }

// ValidLoss reports whether a loss percentage is from 0 to 100 (not NaN).
func ValidLoss(pct float64) bool { return pct >= 0 && pct <= 100 }

// JitterProblem says what is wrong with a link's jitter for its round trip
// ("" when nothing): a packet cannot arrive before it was sent.
func JitterProblem(rtt, jitter time.Duration) string {
	if jitter > 0 && jitter >= rtt {
		return fmt.Sprintf("must be less than the round trip (%v), got %v: a packet cannot arrive before it was sent", rtt, jitter)
	}
	return ""
}

// Validate checks a defaulted spec and returns every problem at once.
func Validate(s *Spec) error {
	v := &validator{}
	v.validate(s)
	return hderr.Users(v.problems)
}

type validator struct{ problems []string }

func (v *validator) add(path, format string, args ...any) {
	v.problems = append(v.problems, path+": "+fmt.Sprintf(format, args...))
}

func (v *validator) name(path, name string, seen map[string]string) {
	switch {
	case name == "":
		v.add(path, "required")
	case !ValidName(name):
		v.add(path, "%q is not a valid name (%s)", name, NameRule)
	case seen[name] != "":
		v.add(path, "duplicate name %q (already used by %s)", name, seen[name])
	}
	if name != "" && seen[name] == "" {
		seen[name] = path
	}
}

// Bounds on free text in a spec (it is stored in lab.json and every run).
const (
	MaxDescription = 4096
	MaxLabels      = 64
	MaxLabelLen    = 256
)

func (v *validator) validate(s *Spec) {
	if s.Name != "" && !ValidName(s.Name) {
		v.add("name", "%q is not a valid lab name (%s)", s.Name, NameRule)
	}
	if n := len(s.Description); n > MaxDescription {
		v.add("description", "at most %d bytes, got %d", MaxDescription, n)
	}
	if len(s.Labels) > MaxLabels {
		v.add("labels", "at most %d labels, got %d", MaxLabels, len(s.Labels))
	}
	for _, k := range keys(s.Labels) {
		if len(k) == 0 || len(k) > MaxLabelLen || len(s.Labels[k]) > MaxLabelLen {
			v.add("labels."+k, "a label's key and value are 1 to %d bytes", MaxLabelLen)
		}
	}
	regions := map[string]string{}
	for i, r := range s.Regions {
		v.name(fmt.Sprintf("regions[%d].name", i), r.Name, regions)
	}
	network := v.network(s.Network)
	v.machines(s)
	v.networks(s)
	v.disks(s)
	hosts := map[string]string{} // every host name: nodes, LBs, client
	clusters := map[string]string{}
	if len(s.Clusters) == 0 {
		v.add("clusters", "at least one cluster is required")
	}
	for i, c := range s.Clusters {
		v.cluster(fmt.Sprintf("clusters[%d]", i), c, regions, clusters, hosts, network)
		v.clusterMachine(s, fmt.Sprintf("clusters[%d]", i), c)
		v.storage(s, fmt.Sprintf("clusters[%d]", i), c.Storage)
	}
	v.links(s.Links, regions)
	v.channels(s, clusters)
	for i, lb := range s.LoadBalancers {
		p := fmt.Sprintf("load_balancers[%d]", i)
		v.name(p+".name", lb.Name, hosts)
		v.ref(p+".cluster", lb.Cluster, "cluster", clusters)
		oneOf(v, p+".mode", lb.Mode, LBSingleWriter, LBBalanced)
		oneOf(v, p+".kind", lb.Kind, LBKindHAProxy, LBKindIPTables)
		oneOf(v, p+".checks", lb.Checks, LBChecksFast, LBChecksCloud)
		v.ref(p+".region", lb.Region, "region", regions)
		v.address(p+".address", lb.Address, network)
		v.machineRef(s, p+".machine", lb.Machine)
		if lb.Replicas < 0 || lb.Replicas > 2 {
			v.add(p+".replicas", "expected 1 (one proxy host) or 2 (two sharing a virtual IP), got %d", lb.Replicas)
		}
		for j, d := range lb.FaultDomains {
			if !ValidName(d) {
				v.add(fmt.Sprintf("%s.fault_domains[%d]", p, j), "%q is not a valid name (%s)", d, NameRule)
			}
		}
		if lb.Pair() && ValidName(lb.Name) {
			v.name(p+".name", lb.PairHost(1), hosts)
			v.name(p+".name", lb.PairHost(2), hosts)
		}
	}
	if c := s.Client; c != nil {
		v.name("client.name", c.Name, hosts)
		v.ref("client.region", c.Region, "region", regions)
		v.address("client.address", c.Address, network)
		v.machineRef(s, "client.machine", c.Machine)
	}
}

func (v *validator) cluster(p string, c Cluster, regions, clusters, hosts map[string]string, network netip.Prefix) {
	v.name(p+".name", c.Name, clusters)
	oneOf(v, p+".kind", c.Kind, KindGalera, KindPrimary, KindStandalone)
	n := c.NodeCount()
	switch {
	case n < 1:
		v.add(p+".nodes", "must be ≥ 1, got %d", n)
	case n > 9:
		v.add(p+".nodes", "must be ≤ 9 in a lab, got %d", n)
	case c.Kind == KindStandalone && n != 1:
		v.add(p+".nodes", "a standalone cluster has exactly 1 node, got %d", n)
	}
	for j := 1; j <= n && n <= 9 && ValidName(c.Name); j++ { // a bad cluster name is said once, not once per host
		v.name(p+".name", c.NodeHost(j), hosts)
	}
	v.ref(p+".region", c.Region, "region", regions)
	v.spread(p, c, regions)
	if a := c.Arbitrator; a != nil {
		if c.Kind != KindGalera {
			v.add(p+".arbitrator", "applies to galera clusters only")
		}
		v.ref(p+".arbitrator.region", a.Region, "region", regions)
		if ValidName(c.Name) {
			v.name(p+".arbitrator", c.ArbitratorHost(), hosts)
		}
	}
	oneOf(v, p+".profile", c.Profile, Profiles...)
	if c.Kind == KindGalera {
		oneOf(v, p+".failure_detection", c.FailureDetection, DetectionStock, DetectionFast, DetectionAggressive, DetectionWAN)
	} else if c.FailureDetection != "" {
		v.add(p+".failure_detection", "applies to galera clusters only")
	}
	if c.AvailableWhenDonor && c.Kind != KindGalera {
		v.add(p+".available_when_donor", "applies to galera clusters only (a replica's health is its replication, not a donor state)")
	}
	if c.Segments != nil && (c.Kind != KindGalera || len(c.Regions) < 2) {
		v.add(p+".segments", "applies to galera clusters over several regions (regions) only")
	}
	switch {
	case c.Kind == KindPrimary:
		oneOf(v, p+".mode", c.Mode, ModeAsync, ModeSemiSync)
		if n < 2 && n >= 1 {
			v.add(p+".nodes", "a primary cluster has a primary and at least one replica (≥ 2 nodes), got %d", n)
		}
	case c.Mode != "":
		v.add(p+".mode", "applies to primary clusters only (galera clusters replicate synchronously)")
	}
	switch {
	case c.Kind == KindPrimary:
		oneOf(v, p+".failover", c.Failover, FailoverManual, FailoverAuto)
	case c.Failover != "":
		v.add(p+".failover", "applies to primary clusters only (a galera cluster fails over by itself)")
	}
	if c.FailoverMaxLag != "" {
		if c.Failover != FailoverAuto {
			v.add(p+".failover_max_lag", "applies only with failover: auto")
		}
		v.duration(p+".failover_max_lag", c.FailoverMaxLag, 0, time.Hour)
	}
	if c.FailoverAfter != "" {
		if c.Failover != FailoverAuto {
			v.add(p+".failover_after", "applies only with failover: auto")
		}
		v.duration(p+".failover_after", c.FailoverAfter, MinFailoverAfter, time.Hour)
	}
	if c.AckTimeout != "" {
		if c.Mode != ModeSemiSync {
			v.add(p+".ack_timeout", "applies only with mode semi-sync")
		}
		v.duration(p+".ack_timeout", c.AckTimeout, time.Millisecond, time.Hour)
	}
	if c.Memory != "" {
		if b, err := ParseSize(c.Memory); err != nil || b < 256<<20 {
			v.add(p+".memory", "expected a size of at least 256M like 512M or 2G, got %q", c.Memory)
		}
	}
	if len(c.Addresses) > 0 && len(c.Addresses) != n {
		v.add(p+".addresses", "has %d entries for %d nodes", len(c.Addresses), n)
	}
	for j, a := range c.Addresses {
		v.address(fmt.Sprintf("%s.addresses[%d]", p, j), a, network)
	}
	for j, d := range c.FaultDomains {
		if !ValidName(d) {
			v.add(fmt.Sprintf("%s.fault_domains[%d]", p, j), "%q is not a valid name (%s)", d, NameRule)
		}
	}
	if a := c.Arbitrator; a != nil && a.FaultDomain != "" && !ValidName(a.FaultDomain) {
		v.add(p+".arbitrator.fault_domain", "%q is not a valid name (%s)", a.FaultDomain, NameRule)
	}
	if !c.Binlog() {
		if c.Kind == KindPrimary {
			v.add(p+".binary_log", "a primary cluster's replicas read its binary log: it cannot be off")
		}
		if c.Storage != nil && c.Storage.Binlog != "" {
			v.add(p+".storage.binlog", "the binary log is off (binary_log: false): no volume holds it")
		}
	}
	for k, val := range c.Config {
		if c.Kind == KindPrimary && NormalizeOption(k) == "read_only" {
			v.add(p+".config."+k, "hadrill decides which server of a primary cluster is writable (the current primary; the others and a returning former primary stay read-only)")
			continue
		}
		if why := CheckOption(k, val); why != "" {
			v.add(p+".config."+k, "%s", why)
			continue
		}
		if why := CheckEngine(k, val); why != "" && c.Kind == KindGalera {
			v.add(p+".config."+k, "%s", why)
		}
	}
	if key := ProviderOptionsKey(c.Config); key != "" && c.Kind == KindGalera && CheckOption(key, c.Config[key]) == "" {
		for _, pr := range providerProblems(c, key) {
			field := p + ".config." + key
			if pr[0] != "" {
				field += ": " + pr[0]
			}
			v.add(field, "%s", pr[1])
		}
	}
	conflicts := ProfileConflicts(c.Profile, c.Config)
	for _, k := range slices.Sorted(maps.Keys(conflicts)) {
		v.add(p+".config."+k, "%s", conflicts[k])
	}
	same := SameOption(c.Config)
	for _, k := range slices.Sorted(maps.Keys(same)) {
		option, _, _ := ServerReads(k, c.Config[k])
		v.add(p+".config."+k, "sets %s, as %s does: the server would take one of them silently; give the option once", option, same[k])
	}
}

// spread checks a cluster's regions: known, distinct, no more than nodes,
// and agreeing with region when both are given.
func (v *validator) spread(p string, c Cluster, regions map[string]string) {
	if len(c.Regions) == 0 {
		return
	}
	seen := map[string]bool{}
	for j, r := range c.Regions {
		v.ref(fmt.Sprintf("%s.regions[%d]", p, j), r, "region", regions)
		if seen[r] {
			v.add(fmt.Sprintf("%s.regions[%d]", p, j), "region %q is listed twice", r)
		}
		seen[r] = true
	}
	if n := c.NodeCount(); n >= 1 && len(c.Regions) > n {
		v.add(p+".regions", "%d regions for %d nodes: every region needs a node", len(c.Regions), n)
	}
	if c.Region != c.Regions[0] {
		v.add(p+".region", "with regions, region is the first of them (%q), got %q; give one or the other", c.Regions[0], c.Region)
	}
	if c.Kind == KindStandalone {
		v.add(p+".regions", "a standalone cluster has one node, in one region")
	}
}

func (v *validator) links(links []Link, regions map[string]string) {
	pairs := map[[2]string]int{}
	for i, l := range links {
		p := fmt.Sprintf("links[%d]", i)
		if len(l.Between) != 2 {
			v.add(p+".between", "expected exactly two region names, got %d", len(l.Between))
		} else if l.Between[0] == l.Between[1] {
			v.add(p+".between", "a link joins two different regions")
		} else {
			pair := [2]string{min(l.Between[0], l.Between[1]), max(l.Between[0], l.Between[1])}
			if j, ok := pairs[pair]; ok {
				v.add(p+".between", "links[%d] joins %s and %s already: one link a pair of regions", j, pair[0], pair[1])
			}
			pairs[pair] = i
		}
		for j, r := range l.Between {
			v.ref(fmt.Sprintf("%s.between[%d]", p, j), r, "region", regions)
		}
		var rtt, jitter time.Duration
		if l.RTT != "" {
			rtt = v.duration(p+".rtt", l.RTT, 0, 10*time.Second)
		}
		if l.Jitter != "" {
			jitter = v.duration(p+".jitter", l.Jitter, 0, 10*time.Second)
		}
		if why := JitterProblem(rtt, jitter); why != "" {
			v.add(p+".jitter", "%s", why)
		}
		if !ValidLoss(l.Loss) {
			v.add(p+".loss", "expected a percentage from 0 to 100, got %g", l.Loss)
		}
		if l.Bandwidth != "" {
			if _, err := ParseRate(l.Bandwidth); err != nil {
				v.add(p+".bandwidth", "expected a rate from 8kbit to 100gbit like 100mbit or 1gbit, got %q", l.Bandwidth)
			}
		}
	}
}

func (v *validator) network(cidr string) netip.Prefix {
	if cidr == "" {
		return LabRange
	}
	p, err := netip.ParsePrefix(cidr)
	switch {
	case err != nil:
		v.add("network", "expected a CIDR like 198.18.4.0/24, got %q", cidr)
	case !LabRange.Contains(p.Addr()) || p.Bits() < LabRange.Bits():
		v.add("network", "%s is outside the lab range %s", cidr, LabRange)
	case p.Bits() > 24:
		v.add("network", "%s is too small (expected /24 or larger)", cidr)
	default:
		return p.Masked()
	}
	return LabRange
}

func (v *validator) address(path, a string, network netip.Prefix) {
	if a == "" {
		return
	}
	ip, err := netip.ParseAddr(a)
	switch {
	case err != nil || !ip.Is4():
		v.add(path, "expected an IPv4 address, got %q", a)
	case !network.Contains(ip):
		v.add(path, "%s is outside the lab network %s", a, network)
	}
}

func (v *validator) ref(path, name, what string, known map[string]string) {
	if name == "" {
		v.add(path, "required (name of a %s)", what)
	} else if known[name] == "" {
		v.add(path, "unknown %s %q (known: %s)", what, name, strings.Join(keys(known), ", "))
	}
}

func oneOf[T ~string](v *validator, path string, got T, allowed ...T) {
	if !slices.Contains(allowed, got) {
		var names []string
		for _, a := range allowed {
			names = append(names, string(a))
		}
		v.add(path, "expected one of %s, got %q", strings.Join(names, ", "), got)
	}
}

func (v *validator) duration(path, s string, min, max time.Duration) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil || d < min || d > max {
		v.add(path, "expected a duration from %v to %v like 100ms, got %q", min, max, s)
		return 0
	}
	return d
}

// Warnings are what a spec allows but an experienced operator would
// question; `validate` and `up` print them, neither refuses them.
func Warnings(s *Spec) []string {
	var out []string
	for i, c := range s.Clusters {
		if c.Kind == KindGalera && c.NodeCount() == 2 && c.Arbitrator == nil {
			out = append(out, fmt.Sprintf("clusters[%d]: a 2-node Galera cluster without an arbitrator loses its majority when either node fails "+
				"(the survivor goes non-primary and refuses writes); add a third node or `arbitrator: {region: ...}`", i))
		}
		if w := domainMajority(c); w != "" {
			out = append(out, fmt.Sprintf("clusters[%d]: %s", i, w))
		}
		if c.Kind == KindGalera {
			for _, w := range providerWarnings(c) {
				out = append(out, fmt.Sprintf("clusters[%d].%s", i, w))
			}
		}
	}
	for i, lb := range s.LoadBalancers {
		if lb.Pair() && lb.HostDomain(1) == lb.HostDomain(2) {
			out = append(out, fmt.Sprintf("load_balancers[%d]: both hosts of the pair are in fault domain %s: losing it loses the load balancer", i, lb.HostDomain(1)))
		}
	}
	return out
}

// domainMajority says when one fault domain holds half or more of a Galera
// cluster's members (nodes and arbitrator): losing that domain loses the
// majority, and the survivors refuse writes.
func domainMajority(c Cluster) string {
	if c.Kind != KindGalera || c.NodeCount() < 2 || len(c.FaultDomains) == 0 && (c.Arbitrator == nil || c.Arbitrator.FaultDomain == "") {
		return "" // every host its own domain: a 2-node cluster is warned of already
	}
	count := map[string]int{}
	var order []string
	add := func(d string) {
		if count[d] == 0 {
			order = append(order, d)
		}
		count[d]++
	}
	for j := 1; j <= c.NodeCount(); j++ {
		add(c.NodeDomain(j))
	}
	members := c.NodeCount()
	if c.Arbitrator != nil {
		members++
		add(cmp.Or(c.Arbitrator.FaultDomain, c.ArbitratorHost()))
	}
	for _, d := range order {
		if 2*count[d] >= members {
			return fmt.Sprintf("fault domain %s holds %d of the cluster's %d members: losing it loses the majority "+
				"and the survivors refuse writes (spread the nodes over more domains, or add an arbitrator in another)", d, count[d], members)
		}
	}
	return ""
}

// channels checks replication between clusters: each channel joins two
// existing clusters, and a cluster receives from at most one source (its
// receiving node applies the stream; multi-source is not planned).
func (v *validator) channels(s *Spec, names map[string]string) {
	kinds := map[string]Kind{}
	binlog := map[string]bool{}
	for _, c := range s.Clusters {
		kinds[c.Name], binlog[c.Name] = c.Kind, c.Binlog()
	}
	into := map[string]string{}
	for i, ch := range s.Replication {
		p := fmt.Sprintf("replication[%d]", i)
		v.ref(p+".from", ch.From, "cluster", names)
		v.ref(p+".to", ch.To, "cluster", names)
		if ch.From != "" && ch.From == ch.To {
			v.add(p+".to", "a channel cannot replicate cluster %q into itself", ch.To)
		}
		for _, end := range []struct{ field, cluster string }{{"from", ch.From}, {"to", ch.To}} {
			if on, ok := binlog[end.cluster]; ok && !on {
				v.add(p+"."+end.field, "cluster %q has its binary log off (binary_log: false); a channel's ends keep one (GTIDs, log_slave_updates)", end.cluster)
			}
		}
		if k := kinds[ch.To]; k == KindPrimary {
			v.add(p+".to", "cluster %q is a primary cluster; a channel goes into a standalone server or a galera cluster", ch.To)
		}
		if prev, dup := into[ch.To]; dup && ch.To != "" {
			v.add(p+".to", "cluster %q already receives %s; a cluster has at most one source", ch.To, prev)
		} else if ch.To != "" {
			into[ch.To] = p
		}
		oneOf(v, p+".mode", ch.Mode, ModeAsync, ModeSemiSync)
		if ch.AckTimeout != "" {
			if ch.Mode != ModeSemiSync {
				v.add(p+".ack_timeout", "applies only with mode semi-sync")
			}
			v.duration(p+".ack_timeout", ch.AckTimeout, time.Millisecond, time.Hour)
		}
	}
	v.cycles(s, names)
}

// cycles rejects channels that lead back to where they started, except a
// ring of standalone servers: each a writable primary with a GTID domain
// of its own, applying the others' writes (multi-master replication, as
// document 003's peer-to-peer). Galera clusters and primary clusters take
// no part in a ring: a write would come back to a cluster that has it.
func (v *validator) cycles(s *Spec, known map[string]string) {
	next := map[string][]string{}
	kinds := map[string]Kind{}
	for _, c := range s.Clusters {
		kinds[c.Name] = c.Kind
	}
	for _, ch := range s.Replication {
		if known[ch.From] != "" && known[ch.To] != "" && ch.From != ch.To {
			next[ch.From] = append(next[ch.From], ch.To)
		}
	}
	for _, ring := range Rings(next) {
		for _, c := range ring {
			if kinds[c] != KindStandalone {
				v.add("replication", "channels form a cycle (%s); a ring is for standalone servers only (each a writable primary), and cluster %q is %s",
					strings.Join(append(slices.Clone(ring), ring[0]), " → "), c, kinds[c])
				break
			}
		}
	}
}

// Rings are the cycles in a graph of channels (cluster -> the clusters it
// feeds), each once, starting from its first cluster in name order.
func Rings(next map[string][]string) [][]string {
	starts := slices.Sorted(maps.Keys(next))
	seen := map[string]bool{}
	var out [][]string
	for _, start := range starts {
		// each cycle through start that meets no smaller start
		var path []string
		var walk func(c string)
		walk = func(c string) {
			path = append(path, c)
			for _, n := range next[c] {
				switch {
				case n == start:
					key := strings.Join(path, ",")
					if !seen[key] {
						seen[key] = true
						out = append(out, slices.Clone(path))
					}
				case n > start && !slices.Contains(path, n):
					walk(n)
				}
			}
			path = path[:len(path)-1]
		}
		walk(start)
	}
	return out
}
