package lb

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hadrill/hadrill/internal/plan"
)

func TestHolds(t *testing.T) {
	out := "2: eth0    inet 198.18.7.151/24 scope global eth0\\       valid_lft forever preferred_lft forever\n" +
		"2: eth0    inet 198.18.7.101/24 scope global secondary eth0\\       valid_lft forever preferred_lft forever\n"
	if !Holds(out, "198.18.7.101") || Holds(out, "198.18.7.10") || Holds("", "198.18.7.101") {
		t.Error("Holds reads `ip -o -4 addr show` wrong")
	}
}

// fakeHosts answers `ip addr show` with the addresses each host holds and
// records the commands run.
type fakeHosts struct {
	addrs map[string]string
	ran   *[]string
}

func (f fakeHosts) Wrap(host string, argv []string) []string {
	return append([]string{"on", host}, argv...)
}
func (f fakeHosts) Output(_ context.Context, host string, argv ...string) ([]byte, error) {
	*f.ran = append(*f.ran, host+": "+strings.Join(argv, " "))
	a, ok := f.addrs[host]
	if !ok {
		return nil, errors.New("no such host")
	}
	return []byte("2: eth0    inet " + a + "/24 scope global eth0\n"), nil
}

func TestHolderAndRevive(t *testing.T) {
	var ran []string
	pair := &plan.LB{Name: "lb", Address: "198.18.7.101", VirtualIP: true,
		Instances: []plan.LBInstance{{Host: "lb1", AdminSocket: "/l/lb1/admin.sock"}, {Host: "lb2", AdminSocket: "/l/lb2/admin.sock"}}}
	b := Balancer{LB: pair, Hosts: fakeHosts{addrs: map[string]string{"lb1": "198.18.7.151", "lb2": "198.18.7.101"}, ran: &ran}, Exe: "/usr/bin/hadrill"}
	if h, err := b.Holder(context.Background()); h != "lb2" || err != nil {
		t.Errorf("holder %q %v, want lb2", h, err)
	}
	if !strings.Contains(ran[0], "ip -o -4 addr show dev eth0 up") {
		t.Errorf("the holder is read from NICs that are up (a crashed host keeps its addresses): %v", ran)
	}
	if s := b.CheckScript(&pair.Instances[0]); !strings.Contains(s, "exec '/usr/bin/hadrill' lb-check --socket '/l/lb1/admin.sock' --watch 850ms") {
		t.Errorf("check script:\n%s", s)
	}
	single := Balancer{LB: &plan.LB{Name: "lb", Instances: []plan.LBInstance{{Host: "lb"}}}, Hosts: fakeHosts{ran: &ran}}
	if h, _ := single.Holder(context.Background()); h != "lb" {
		t.Errorf("a single load balancer's host holds its address: %q", h)
	}
	if err := single.Kill("lb9", false); err == nil {
		t.Error("crashing a host the load balancer does not have")
	}
}
