// Package netem emulates the WAN between a lab's regions. Delay, jitter and
// loss are applied in user space: packets a host receives from a host of
// another region are queued to NFQUEUE by an iptables rule in the
// receiver's namespace (PREROUTING) and handed back by `hadrill netem` (this
// package's daemon) once their one-way delay has passed, or dropped.
// Holding them on the receiving side matters: a packet held on the sender
// still counts against its socket, so TCP would cork the next small writes
// behind it (autocorking) and cap throughput (small queues) — artefacts no
// real WAN has. Bandwidth is a tc htb class on the sender's interface. The
// layout (which rule, which queue) is a pure function of the plan.
package netem

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/iptables"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
)

// Link is the current impairment of the WAN between two regions. Delay and
// jitter are round-trip figures (as a user states them); each direction
// gets half.
type Link struct {
	Name    string        `json:"name"` // "a-b"
	Regions [2]string     `json:"regions"`
	RTT     time.Duration `json:"rtt_ns"`
	Jitter  time.Duration `json:"jitter_ns,omitempty"`
	Loss    float64       `json:"loss_percent,omitempty"`
	// Reorder is the share of packets (percent) sent at once, ahead of
	// the delayed ones that came before them (tc netem's reorder).
	Reorder float64 `json:"reorder_percent,omitempty"`
	// Duplicate is the share of packets (percent) that arrive twice: the
	// copy is made as the packet enters its receiving host (iptables TEE
	// to the host itself) and delayed like any packet.
	Duplicate float64 `json:"duplicate_percent,omitempty"`
	// Corrupt is the share of packets (percent) that arrive with a bit of
	// their transport segment flipped: the receiver drops each, counting
	// it, at its checksum check (a single flipped bit never passes a TCP
	// or UDP checksum: InCsumErrors in /proc/net/snmp) or, a length field
	// flipped, as malformed (InErrors).
	Corrupt   float64 `json:"corrupt_percent,omitempty"`
	Bandwidth int64   `json:"bandwidth_bps,omitempty"` // 0: unlimited
}

// Rule sends what Host receives from Peer through queue Queue (in Host's
// namespace); Host's own traffic to Peer is shaped by the link's bandwidth.
type Rule struct {
	Host  string `json:"host"`
	Netns string `json:"netns"`
	Peer  string `json:"peer"`
	Queue uint16 `json:"queue"` // = index of the link in Config.Links
}

// Config is everything the daemon and the rules need; kept in <lab>/netem.json.
// A link's netfilter queue is QueueBase + its index (plan.WAN.QueueBase).
type Config struct {
	Links     []Link `json:"links"`
	Rules     []Rule `json:"rules"`
	QueueBase uint16 `json:"queue_base,omitempty"`
}

// QueueNum is the netfilter queue of the link of index q.
func (c Config) QueueNum(q uint16) uint16 { return c.QueueBase + q }

// CorruptQueueNum is the netfilter queue that corrupts a share of the
// packets of the link of index q: the one after the links' queues.
func (c Config) CorruptQueueNum(q uint16) uint16 {
	return c.QueueBase + uint16(len(c.Links)) + q
}

// MaxDelay bounds a link's round trip and jitter.
const MaxDelay = 10 * time.Second

// LinkName names the link between two regions.
func LinkName(a, b string) string { return a + "-" + b }

// FromSpec resolves the spec's links (validated already) into their
// starting impairments.
func FromSpec(links []spec.Link) []Link {
	var out []Link
	for _, l := range links {
		if len(l.Between) != 2 {
			continue
		}
		k := Link{Name: LinkName(l.Between[0], l.Between[1]), Regions: [2]string{l.Between[0], l.Between[1]}, Loss: l.Loss}
		k.RTT, _ = time.ParseDuration(l.RTT)
		k.Jitter, _ = time.ParseDuration(l.Jitter)
		if l.Bandwidth != "" {
			k.Bandwidth, _ = spec.ParseRate(l.Bandwidth)
		}
		out = append(out, k)
	}
	return out
}

// Build lays out the rules: every host gets one rule per host of a region
// its own region has a link to, into the queue of that link.
func Build(p *plan.Plan, links []Link) Config {
	c := Config{Links: links}
	if p.WAN != nil {
		c.QueueBase = p.WAN.QueueBase
	}
	for _, h := range p.Hosts {
		for _, o := range p.Hosts {
			if q, ok := linkIndex(links, h.Region, o.Region); ok {
				for _, addr := range o.Addresses() { // the peer's every NIC crosses the link
					c.Rules = append(c.Rules, Rule{Host: h.Name, Netns: h.Netns, Peer: addr, Queue: uint16(q)})
				}
			}
		}
	}
	return c
}

func linkIndex(links []Link, a, b string) (int, bool) {
	if a == b {
		return 0, false
	}
	for i, l := range links {
		if (l.Regions[0] == a && l.Regions[1] == b) || (l.Regions[0] == b && l.Regions[1] == a) {
			return i, true
		}
	}
	return 0, false
}

// Find returns the index of the link a user names: "a-b" in either order.
func Find(links []Link, name string) (int, error) {
	parts := strings.Split(name, "-")
	if len(parts) == 2 {
		if i, ok := linkIndex(links, parts[0], parts[1]); ok {
			return i, nil
		}
	}
	var known []string
	for _, l := range links {
		known = append(known, l.Name)
	}
	sort.Strings(known)
	if len(known) == 0 {
		return 0, hderr.User("LINK: %q is not a link of this lab; it has none (links between regions are declared in the spec's links)", name)
	}
	return 0, hderr.User("LINK: unknown link %q (links: %s; write REGION-REGION)", name, strings.Join(known, ", "))
}

// Hosts lists the namespaces that carry rules (each gets a queue per link).
func (c Config) Hosts() []Rule {
	seen := map[string]bool{}
	var out []Rule
	for _, r := range c.Rules {
		if !seen[r.Host] {
			seen[r.Host] = true
			out = append(out, r)
		}
	}
	return out
}

// Queues lists the (namespace, queue) pairs the daemon binds.
func (c Config) Queues() []Rule {
	seen := map[string]bool{}
	var out []Rule
	for _, r := range c.Rules {
		k := fmt.Sprintf("%s/%d", r.Netns, r.Queue)
		if !seen[k] {
			seen[k] = true
			out = append(out, Rule{Host: r.Host, Netns: r.Netns, Queue: r.Queue})
		}
	}
	return out
}

// Load reads a config file.
func Load(path string) (Config, error) {
	var c Config
	b, err := os.ReadFile(path)
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Save writes a config file atomically.
func (c Config) Save(path string) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ChainRules are a host's rules in the lab's chain: every packet from a
// peer in another region goes to the link's queue; before that, where the
// link duplicates, a share of those arriving on a NIC is copied to the
// host itself (self, its address: iptables TEE), and the copy, arriving
// on lo, is queued and delayed like the original but not copied again;
// where it corrupts, a share goes to the link's corrupting queue instead,
// and on at once with a bit flipped (the receiver drops it at its checksum
// check, so its delay would change nothing).
func ChainRules(c Config, host, self string) []iptables.Rule {
	var out []iptables.Rule
	for _, r := range c.Rules {
		if r.Host != host {
			continue
		}
		if int(r.Queue) < len(c.Links) && c.Links[r.Queue].Duplicate > 0 && self != "" {
			p := strconv.FormatFloat(c.Links[r.Queue].Duplicate/100, 'f', -1, 64)
			out = append(out, iptables.Rule{"-s", r.Peer, "!", "-i", "lo", "-m", "statistic", "--mode", "random", "--probability", p, "-j", "TEE", "--gateway", self})
		}
		if int(r.Queue) < len(c.Links) && c.Links[r.Queue].Corrupt > 0 {
			p := strconv.FormatFloat(c.Links[r.Queue].Corrupt/100, 'f', -1, 64)
			out = append(out, iptables.Rule{"-s", r.Peer, "-m", "statistic", "--mode", "random", "--probability", p, "-j", "NFQUEUE", "--queue-num", strconv.Itoa(int(c.CorruptQueueNum(r.Queue)))})
		}
		out = append(out, iptables.Rule{"-s", r.Peer, "-j", "NFQUEUE", "--queue-num", strconv.Itoa(int(c.QueueNum(r.Queue)))})
	}
	return out
}
