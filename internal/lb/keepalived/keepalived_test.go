package keepalived

import (
	"testing"

	"github.com/hadrill/hadrill/internal/golden"
)

func TestRenderGolden(t *testing.T) {
	s, err := Render(Config{Lab: "pair", LB: "lb", Host: "lb1", Interface: "eth0", Self: "198.18.7.151", Peer: "198.18.7.152",
		VIP: "198.18.7.101", Prefix: 24, RouterID: 51, Priority: 110, Advert: Advert, Proxy: "haproxy", Check: "/usr/bin/hadrill lb-check --kind haproxy --socket /l/lb1/admin.sock"})
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "lb1.keepalived.conf", []byte(s))
}
