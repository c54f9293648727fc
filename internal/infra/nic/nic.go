// Package nic shapes a host's network interfaces: the NIC's own bandwidth
// in each direction (an htb class over everything it sends, and one on its
// link's other end for what it receives) and, below the NIC's rate, the
// WAN links' bandwidth towards the peers across them. Pure: it returns tc
// commands; the provider and the WAN emulator run them.
package nic

import (
	"fmt"

	"github.com/hadrill/hadrill/internal/spec"
)

// Class limits what a host sends to some peers (a WAN link's bandwidth).
type Class struct {
	Minor   int      // the htb class is 1:Minor (never 1 or 9999)
	RateBps int64    // bits per second
	Peers   []string // destination addresses
}

// Egress is the tc commands (each without the leading "tc") that shape
// what a host sends on dev: the NIC's rate over all of it (0: none), and
// each class below that rate. Nothing when neither is asked; the caller
// removes the device's root qdisc first.
func Egress(dev string, rateBps int64, classes []Class) [][]string {
	if rateBps <= 0 && len(classes) == 0 {
		return nil
	}
	out := [][]string{{"qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", "9999"}}
	parent := "1:"
	if rateBps > 0 {
		r := spec.FormatRate(rateBps)
		out = append(out, []string{"class", "add", "dev", dev, "parent", "1:", "classid", "1:1", "htb", "rate", r, "ceil", r},
			[]string{"class", "add", "dev", dev, "parent", "1:1", "classid", "1:9999", "htb", "rate", r, "ceil", r})
		parent = "1:1"
	}
	for _, c := range classes {
		rate := c.RateBps
		if rateBps > 0 && rateBps < rate {
			rate = rateBps
		}
		r, id := spec.FormatRate(rate), fmt.Sprintf("1:%d", c.Minor)
		out = append(out, []string{"class", "add", "dev", dev, "parent", parent, "classid", id, "htb", "rate", r, "ceil", r})
		for _, p := range c.Peers {
			out = append(out, []string{"filter", "add", "dev", dev, "parent", "1:", "protocol", "ip", "prio", "1", "u32",
				"match", "ip", "dst", p + "/32", "flowid", id})
		}
	}
	return out
}

// Ingress is the tc commands that cap what a host receives on a NIC: its
// rate on the other end of the host's link (dev, on the network's bridge).
func Ingress(dev string, rateBps int64) [][]string {
	if rateBps <= 0 {
		return nil
	}
	r := spec.FormatRate(rateBps)
	return [][]string{{"qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", "1"},
		{"class", "add", "dev", dev, "parent", "1:", "classid", "1:1", "htb", "rate", r, "ceil", r}}
}
