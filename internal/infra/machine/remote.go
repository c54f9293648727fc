package machine

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/plan"
)

// RemoteScript prints what ParseRemote reads of a remote machine: the
// first line of /proc/stat, its memory, and each NIC named in its
// arguments' byte counters. It reads only.
const RemoteScript = `head -n 1 /proc/stat
grep -E '^(MemTotal|MemAvailable):' /proc/meminfo
for nic in "$@"; do
	echo "nic $nic $(cat /sys/class/net/$nic/statistics/rx_bytes) $(cat /sys/class/net/$nic/statistics/tx_bytes)"
done
`

// userHz is the unit of /proc/stat's times (USER_HZ: 100 on Linux).
const userHz = 100

// ParseRemote reads RemoteScript's output into a machine's usage at at: the
// CPU time every process of the machine used (what is not idle or waiting
// for IO), the memory in use (MemTotal − MemAvailable: page cache the
// kernel can reclaim is not counted, unlike a cgroup's charge), and each
// of nics' bytes.
func ParseRemote(out string, nics []plan.NIC, at time.Time) (Usage, error) {
	u := Usage{At: at}
	var total, avail int64
	seen := false
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) >= 8 && f[0] == "cpu":
			var busy int64
			for i, v := range f[1:] {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return Usage{}, fmt.Errorf("/proc/stat: %q is not a number", v)
				}
				if i != 3 && i != 4 && i < 8 { // user nice system [idle iowait] irq softirq steal; guest is in user
					busy += n
				}
			}
			u.CPU, seen = time.Duration(busy)*time.Second/userHz, true
		case len(f) == 3 && f[0] == "MemTotal:":
			total, _ = strconv.ParseInt(f[1], 10, 64)
		case len(f) == 3 && f[0] == "MemAvailable:":
			avail, _ = strconv.ParseInt(f[1], 10, 64)
		case len(f) == 4 && f[0] == "nic":
			rx, err1 := strconv.ParseUint(f[2], 10, 64)
			tx, err2 := strconv.ParseUint(f[3], 10, 64)
			if err1 != nil || err2 != nil {
				continue // a NIC that is gone
			}
			for _, c := range nics {
				if c.Name == f[1] {
					u.NICs = append(u.NICs, NICBytes{Name: c.Name, Network: c.Network, RateBps: c.RateBps, Rx: rx, Tx: tx})
				}
			}
		}
	}
	if !seen {
		return Usage{}, fmt.Errorf("no cpu line from /proc/stat in %q", out)
	}
	u.MemoryBytes = (total - avail) << 10
	return u, nil
}
