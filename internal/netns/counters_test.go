package netns

import (
	"fmt"
	"testing"
)

func TestParseNetDev(t *testing.T) {
	const text = `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:       0       0    0    0    0     0          0         0        0       0    0    0    0     0       0          0
  hdv0: 1234567    9876    0    0    0     0          0         0  7654321    5432    0    0    0     0       0          0
 hdbr0:     100       1    0    0    0     0          0         0      200       2    0    0    0     0       0          0
`
	got := fmt.Sprint(parseNetDev(text))
	if want := "map[hdbr0:{100 200} hdv0:{1234567 7654321} lo:{0 0}]"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestParseSNMP(t *testing.T) {
	const text = `Ip: Forwarding DefaultTTL InReceives
Ip: 1 64 310
Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors
Udp: 92 0 108 200 0 0 89 0 0
`
	got := parseSNMP(text)
	if got["Udp.InErrors"] != 108 || got["Udp.InCsumErrors"] != 89 || got["Ip.InReceives"] != 310 || len(got) != 12 {
		t.Errorf("got %v", got)
	}
}
