package netns

import (
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
