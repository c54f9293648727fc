package machine

import (
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/plan"
)

func TestParseRemote(t *testing.T) {
	at := time.Unix(1700000000, 0)
	out := `cpu  1000 50 300 90000 200 10 20 5 0 0
MemTotal:        4028000 kB
MemAvailable:    3004000 kB
nic ens5 123456 654321
nic gone  
`
	nics := []plan.NIC{{Name: "ens5", Network: plan.NetApplication}}
	u, err := ParseRemote(out, nics, at)
	if err != nil {
		t.Fatal(err)
	}
	// busy: user 1000 + nice 50 + system 300 + irq 10 + softirq 20 + steal 5 = 1385 ticks of 10 ms
	if u.CPU != 13850*time.Millisecond || u.MemoryBytes != 1024000<<10 || !u.At.Equal(at) {
		t.Errorf("usage: cpu %v, memory %d, at %v", u.CPU, u.MemoryBytes, u.At)
	}
	if len(u.NICs) != 1 || u.NICs[0] != (NICBytes{Name: "ens5", Network: plan.NetApplication, Rx: 123456, Tx: 654321}) {
		t.Errorf("nics: %+v", u.NICs)
	}
	if _, err := ParseRemote("MemTotal: 1 kB\n", nil, at); err == nil || !strings.Contains(err.Error(), "no cpu line") {
		t.Errorf("no cpu line: %v", err)
	}
	if _, err := ParseRemote("cpu  1 2 x 4 5 6 7 8\n", nil, at); err == nil {
		t.Error("a damaged cpu line was read")
	}
}
