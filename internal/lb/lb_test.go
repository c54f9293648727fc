package lb

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/hadrill/hadrill/internal/host"
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

func (f fakeHosts) host(name string) host.Host { return fakeHost{name: name, f: f} }

// fakeHost is one of them (what the tests do not use panics: nil Host).
type fakeHost struct {
	host.Host
	name string
	f    fakeHosts
}

func (h fakeHost) Name() string { return h.name }
func (h fakeHost) Exe() string  { return "/usr/bin/hadrill" }
func (h fakeHost) Run(_ context.Context, argv []string, _ io.Reader) ([]byte, error) {
	*h.f.ran = append(*h.f.ran, h.name+": "+strings.Join(argv, " "))
	a, ok := h.f.addrs[h.name]
	if !ok {
		return nil, errors.New("no such host")
	}
	return []byte("2: eth0    inet " + a + "/24 scope global eth0\n"), nil
}

func TestHolderAndRevive(t *testing.T) {
	var ran []string
	pair := &plan.LB{Name: "lb", Address: "198.18.7.101", VirtualIP: true,
		Instances: []plan.LBInstance{{Host: "lb1", AdminSocket: "/l/lb1/admin.sock"}, {Host: "lb2", AdminSocket: "/l/lb2/admin.sock"}}}
	b := Balancer{LB: pair, Hosts: fakeHosts{addrs: map[string]string{"lb1": "198.18.7.151", "lb2": "198.18.7.101"}, ran: &ran}.host}
	if h, err := b.Holder(context.Background()); h != "lb2" || err != nil {
		t.Errorf("holder %q %v, want lb2", h, err)
	}
	if !strings.Contains(ran[0], "ip -o -4 addr show dev eth0 up") {
		t.Errorf("the holder is read from NICs that are up (a crashed host keeps its addresses): %v", ran)
	}
	if s := b.CheckScript(&pair.Instances[0]); !strings.Contains(s, "exec '/usr/bin/hadrill' lb-check --kind haproxy --socket '/l/lb1/admin.sock' --watch 800ms") {
		t.Errorf("check script:\n%s", s)
	}
	single := Balancer{LB: &plan.LB{Name: "lb", Instances: []plan.LBInstance{{Host: "lb"}}}, Hosts: fakeHosts{ran: &ran}.host}
	if h, _ := single.Holder(context.Background()); h != "lb" {
		t.Errorf("a single load balancer's host holds its address: %q", h)
	}
}
