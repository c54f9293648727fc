package netns

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Bytes are a device's byte counters.
type Bytes struct{ Rx, Tx uint64 }

// Counters reads every device's byte counters inside namespace name
// (/proc/thread-self/net/dev shows the namespace the thread is in).
func Counters(name string) (map[string]Bytes, error) {
	var text []byte
	err := Do(name, func() (err error) { text, err = os.ReadFile("/proc/thread-self/net/dev"); return err })
	if err != nil {
		return nil, err
	}
	return parseNetDev(string(text)), nil
}

// parseNetDev reads /proc/net/dev: two header lines, then "dev: rx_bytes
// packets errs drop fifo frame compressed multicast tx_bytes ...".
func parseNetDev(text string) map[string]Bytes {
	out := map[string]Bytes{}
	for _, line := range strings.Split(text, "\n") {
		dev, rest, ok := strings.Cut(line, ":")
		f := strings.Fields(rest)
		if !ok || len(f) < 9 {
			continue
		}
		rx, err1 := strconv.ParseUint(f[0], 10, 64)
		tx, err2 := strconv.ParseUint(f[8], 10, 64)
		if err1 == nil && err2 == nil {
			out[strings.TrimSpace(dev)] = Bytes{Rx: rx, Tx: tx}
		}
	}
	return out
}

// SNMP reads one protocol counter of /proc/net/snmp inside namespace name
// (proto "Udp", field "InErrors", say).
func SNMP(name, proto, field string) (int64, error) {
	var text []byte
	err := Do(name, func() (err error) { text, err = os.ReadFile("/proc/thread-self/net/snmp"); return err })
	if err != nil {
		return 0, err
	}
	v, ok := parseSNMP(string(text))[proto+"."+field]
	if !ok {
		return 0, fmt.Errorf("no %s %s in %s's /proc/net/snmp", proto, field, name)
	}
	return v, nil
}

// parseSNMP reads /proc/net/snmp: per protocol a line of names, then one
// of values ("Udp: InDatagrams NoPorts …" / "Udp: 12 0 …"); keys are
// "Proto.Name".
func parseSNMP(text string) map[string]int64 {
	out := map[string]int64{}
	names := map[string][]string{}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || !strings.HasSuffix(f[0], ":") {
			continue
		}
		proto := strings.TrimSuffix(f[0], ":")
		n, ok := names[proto]
		if !ok {
			names[proto] = f[1:]
			continue
		}
		for i, name := range n {
			if i+1 < len(f) {
				if v, err := strconv.ParseInt(f[i+1], 10, 64); err == nil {
					out[proto+"."+name] = v
				}
			}
		}
	}
	return out
}
