package mariadb

import (
	"context"
	"fmt"
	"regexp"
	"strconv"

	"github.com/hadrill/hadrill/internal/host"
)

var recoveredRE = regexp.MustCompile(`WSREP: Recovered position: ([0-9a-f-]{36}):(-?\d+)`)

// ParseRecovered finds the position `mariadbd --wsrep-recover` logged.
func ParseRecovered(log string) (uuid string, seqno int64, err error) {
	m := recoveredRE.FindAllStringSubmatch(log, -1)
	if len(m) == 0 {
		return "", -1, fmt.Errorf("no recovered position in the server's output")
	}
	last := m[len(m)-1]
	seqno, _ = strconv.ParseInt(last[2], 10, 64)
	return last[1], seqno, nil
}

// RecoverPosition runs the server in --wsrep-recover mode on its host (argv:
// the node's mariadbd command) and returns the last committed position
// InnoDB holds: what a crashed node's grastate.dat (seqno -1) no longer
// says.
func RecoverPosition(ctx context.Context, h host.Host, argv []string, logFile string) (string, int64, error) {
	_ = h.RemoveAll(ctx, logFile)
	out, err := h.Run(ctx, append(append([]string{}, argv...), "--wsrep-recover", "--log-error="+logFile), nil)
	b, _ := h.ReadFile(ctx, logFile)
	uuid, seqno, perr := ParseRecovered(string(b) + string(out))
	if perr != nil {
		if err != nil {
			return "", -1, fmt.Errorf("wsrep-recover: %v: %s", err, LogTail(string(b), 3))
		}
		return "", -1, perr
	}
	return uuid, seqno, nil
}
