package nic

import (
	"strings"
	"testing"
)

func join(cmds [][]string) string {
	var out []string
	for _, c := range cmds {
		out = append(out, strings.Join(c, " "))
	}
	return strings.Join(out, "\n")
}

func TestEgress(t *testing.T) {
	for _, c := range []struct {
		name    string
		rate    int64
		classes []Class
		want    string
	}{
		{"nothing asked", 0, nil, ""},
		{"a WAN link only (unclassified traffic unshaped)", 0, []Class{{Minor: 10, RateBps: 10e6, Peers: []string{"198.18.0.21"}}}, `qdisc add dev eth0 root handle 1: htb default 9999
class add dev eth0 parent 1: classid 1:10 htb rate 10mbit ceil 10mbit
filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip dst 198.18.0.21/32 flowid 1:10`},
		{"the NIC's rate only", 1e9, nil, `qdisc add dev eth0 root handle 1: htb default 9999
class add dev eth0 parent 1: classid 1:1 htb rate 1gbit ceil 1gbit
class add dev eth0 parent 1:1 classid 1:9999 htb rate 1gbit ceil 1gbit`},
		{"a link under a slower NIC", 50e6, []Class{{Minor: 11, RateBps: 100e6, Peers: []string{"a", "b"}}}, `qdisc add dev eth0 root handle 1: htb default 9999
class add dev eth0 parent 1: classid 1:1 htb rate 50mbit ceil 50mbit
class add dev eth0 parent 1:1 classid 1:9999 htb rate 50mbit ceil 50mbit
class add dev eth0 parent 1:1 classid 1:11 htb rate 50mbit ceil 50mbit
filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip dst a/32 flowid 1:11
filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip dst b/32 flowid 1:11`},
	} {
		if got := join(Egress("eth0", c.rate, c.classes)); got != c.want {
			t.Errorf("%s:\n%s\nwant:\n%s", c.name, got, c.want)
		}
	}
}

func TestIngress(t *testing.T) {
	if got := Ingress("hdc3", 0); got != nil {
		t.Errorf("no rate: %v", got)
	}
	want := "qdisc add dev hdc3 root handle 1: htb default 1\nclass add dev hdc3 parent 1: classid 1:1 htb rate 200mbit ceil 200mbit"
	if got := join(Ingress("hdc3", 200e6)); got != want {
		t.Errorf("ingress:\n%s\nwant:\n%s", got, want)
	}
}
