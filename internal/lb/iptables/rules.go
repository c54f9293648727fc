package iptables

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"

	ipt "github.com/hadrill/hadrill/internal/iptables"
)

// The hooks each chain is jumped to from (nat table): new connections to
// the load balancer's address from other hosts (PREROUTING) and from the
// host itself (OUTPUT); their forwarded packets leaving it (POSTROUTING).
var (
	dnatHooks = []string{"PREROUTING", "OUTPUT"}
	snatHooks = []string{"POSTROUTING"}
)

// snatChain is the chain of the SNAT rules.
func (c Config) snatChain() string { return c.Chain + "-S" }

// DNATRules are the rules that send each group's new connections to its
// serving servers (pure): serving names them by group, in the backends'
// order. n servers get n rules, the i-th taken with probability
// 1/(n-i) by the connections the ones before it left, so each gets 1/n; a
// group sending to the first server only (First) gets one rule; a group
// with no server gets none, and its connections are refused by the host.
func DNATRules(c Config, serving map[string][]string) []ipt.Rule {
	var out []ipt.Rule
	for _, g := range c.Groups {
		names := serving[g.Name]
		if g.First && len(names) > 1 {
			names = names[:1]
		}
		for i, name := range names {
			b, ok := c.backend(name)
			if !ok {
				continue
			}
			r := ipt.Rule{"-d", c.Address + "/32", "-p", "tcp", "--dport", strconv.Itoa(g.Port)}
			if left := len(names) - i; left > 1 {
				r = append(r, "-m", "statistic", "--mode", "random", "--probability", strconv.FormatFloat(1/float64(left), 'f', 5, 64))
			}
			out = append(out, append(r, "-m", "comment", "--comment", g.Name+"/"+b.Name,
				"-j", "DNAT", "--to-destination", fmt.Sprintf("%s:%d", b.Address, b.Port)))
		}
	}
	return out
}

// SNATRules make the servers answer the host (pure): a connection the
// DNAT rules sent to a server leaves from the host's own address, so its
// replies come back through the host to be translated again.
func SNATRules(c Config) []ipt.Rule {
	var out []ipt.Rule
	for _, b := range c.Backends {
		out = append(out, ipt.Rule{"-d", b.Address + "/32", "-p", "tcp", "--dport", strconv.Itoa(b.Port),
			"-m", "conntrack", "--ctstate", "DNAT", "-j", "SNAT", "--to-source", c.Source})
	}
	return out
}

// backend is the server of that name.
func (c Config) backend(name string) (Backend, bool) {
	for _, b := range c.Backends {
		if b.Name == name {
			return b, true
		}
	}
	return Backend{}, false
}

// Install is the commands that put both chains in place, emptied of
// what an earlier prober left (a killed one keeps its rules): the DNAT
// chain with no rule (Replace then fills it) and the SNAT chain's rules.
func Install(c Config) [][]string {
	return [][]string{
		ipt.Remove("nat", c.Chain, dnatHooks...),
		ipt.Remove("nat", c.snatChain(), snatHooks...),
		ipt.Append("nat", c.snatChain(), SNATRules(c), snatHooks...),
		ipt.Append("nat", c.Chain, nil, dnatHooks...),
	}
}

// Uninstall is the commands that take both chains away.
func Uninstall(c Config) [][]string {
	return [][]string{ipt.Remove("nat", c.Chain, dnatHooks...), ipt.Remove("nat", c.snatChain(), snatHooks...)}
}

// Route is the command that makes the DNAT chain send to serving.
func Route(c Config, serving map[string][]string) []string {
	return ipt.Replace("nat", c.Chain, DNATRules(c, serving))
}

// forwardFile keeps ip_forward's value before the prober turned it on.
const forwardFile = "ip_forward.before"

// RestoreForwarding is the command that puts the host's ip_forward back
// as it was before a prober turned it on (nothing when it was on).
func RestoreForwarding(dir string) []string {
	return []string{"sh", "-c", `f="$1/` + forwardFile + `"; [ -f "$f" ] || exit 0; cat "$f" > /proc/sys/net/ipv4/ip_forward && rm -f "$f"`, "sh", dir}
}

// Sessions counts the established connections the kernel tracks from
// the load balancer's groups to each server (pure; conntrack is
// /proc/net/nf_conntrack): by group, then server name.
func Sessions(c Config, conntrack []byte) map[string]map[string]int {
	out := map[string]map[string]int{}
	port := map[string]string{}
	for _, g := range c.Groups {
		port[strconv.Itoa(g.Port)] = g.Name
		out[g.Name] = map[string]int{}
	}
	server := map[string]string{}
	for _, b := range c.Backends {
		server[fmt.Sprintf("%s:%d", b.Address, b.Port)] = b.Name
	}
	sc := bufio.NewScanner(bytes.NewReader(conntrack))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 || f[2] != "tcp" || f[5] != "ESTABLISHED" {
			continue
		}
		orig, reply := tuples(f[6:])
		g, ok := port[orig["dport"]]
		if !ok || orig["dst"] != c.Address {
			continue
		}
		if s, ok := server[reply["src"]+":"+reply["sport"]]; ok {
			out[g][s]++
		}
	}
	return out
}

// tuples are a conntrack line's original and reply tuples (key=value
// words; each key's first time is the original's, its second the
// reply's).
func tuples(words []string) (orig, reply map[string]string) {
	orig, reply = map[string]string{}, map[string]string{}
	for _, w := range words {
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			continue
		}
		if _, seen := orig[k]; !seen {
			orig[k] = v
		} else if _, seen := reply[k]; !seen {
			reply[k] = v
		}
	}
	return orig, reply
}
