package netem

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/iptables"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
)

// fakeHosts records the commands run on each host and answers dials after
// rtt (or fails them when rtt is 0).
type fakeHosts struct {
	ran    []string
	exists map[string]bool // hosts whose chain exists already
	rtt    time.Duration
}

func (f *fakeHosts) Run(_ context.Context, host string, argv ...string) error {
	line := host + ": " + strings.Join(argv, " ")
	f.ran = append(f.ran, line)
	if f.exists[host] && strings.Contains(line, "-N HDNETEM") {
		return errors.New(host + ": iptables: Chain already exists.")
	}
	return nil
}

func (f *fakeHosts) Host(string) host.Host { panic("a lab of namespaces has no remote host") }

func (f *fakeHosts) Dial(ctx context.Context, _, _, _ string) (net.Conn, error) {
	if f.rtt == 0 {
		return nil, errors.New("connection timed out")
	}
	time.Sleep(f.rtt)
	a, b := net.Pipe()
	b.Close()
	return a, nil
}

// twoRegionLab: e1 (east) and w1 (west), each a node with an agent, and a
// 20 ms link between them.
func twoRegionLab(t *testing.T, bandwidth string) *plan.Plan {
	dir := t.TempDir()
	p := &plan.Plan{Lab: "t", Dir: dir, Mode: plan.ModeNetns,
		Hosts: []plan.Host{{Name: "e1", Region: "east", Address: "198.18.0.11", Netns: "hd-t-e1"},
			{Name: "w1", Region: "west", Address: "198.18.0.21", Netns: "hd-t-w1"}},
		Nodes: []plan.Node{{Name: "e1", Region: "east", Address: "198.18.0.11", AgentPort: 9200},
			{Name: "w1", Region: "west", Address: "198.18.0.21", AgentPort: 9200}},
		Spec: &spec.Spec{Links: []spec.Link{{Between: []string{"east", "west"}, RTT: "20ms", Bandwidth: bandwidth}}}}
	plan.Complete(p)
	return p
}

func TestEmulatorRulesAndShaping(t *testing.T) {
	p := twoRegionLab(t, "10mbit")
	f := &fakeHosts{exists: map[string]bool{"w1": true}}
	e := New(p, f, "/bin/false", nil)
	c, err := e.Config()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.rules(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if err := e.shape(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"e1: iptables -w -t mangle -N HDNETEM",
		// its queueing rule and the jump to it in one batch
		"e1: " + strings.Join(iptables.Append("mangle", "HDNETEM", []iptables.Rule{{"-s", "198.18.0.21", "-j", "NFQUEUE", "--queue-num", "0"}}, "PREROUTING"), " "),
		"w1: iptables -w -t mangle -N HDNETEM", // exists: kept as it is
		"e1: tc qdisc del dev eth0 root",
		"e1: tc qdisc add dev eth0 root handle 1: htb default 9999",
		"e1: tc class add dev eth0 parent 1: classid 1:10 htb rate 10mbit ceil 10mbit",
		"e1: tc filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip dst 198.18.0.21/32 flowid 1:10",
		"w1: tc qdisc del dev eth0 root",
		"w1: tc qdisc add dev eth0 root handle 1: htb default 9999",
		"w1: tc class add dev eth0 parent 1: classid 1:10 htb rate 10mbit ceil 10mbit",
		"w1: tc filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip dst 198.18.0.11/32 flowid 1:10",
	}
	if strings.Join(f.ran, "\n") != strings.Join(want, "\n") {
		t.Errorf("commands:\n%s\nwant:\n%s", strings.Join(f.ran, "\n"), strings.Join(want, "\n"))
	}
}

// A lab whose queues start elsewhere than 0 (its own on remote machines)
// queues each link's packets there, and For keeps the base for a host's
// daemon.
func TestQueueBase(t *testing.T) {
	p := twoRegionLab(t, "")
	p.WAN.QueueBase = 4242
	f := &fakeHosts{}
	e := New(p, f, "/bin/false", nil)
	c, err := e.Config()
	if err != nil || c.QueueBase != 4242 || c.For("e1").QueueBase != 4242 || c.QueueNum(c.Rules[0].Queue) != 4242 {
		t.Fatalf("config %+v %v", c, err)
	}
	if _, err := e.rules(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.ran, "\n"); !strings.Contains(got, "-j NFQUEUE --queue-num 4242") {
		t.Errorf("commands:\n%s", got)
	}
}

func TestEmulatorChangeNeedsDaemonAndHealIsIdle(t *testing.T) {
	p := twoRegionLab(t, "")
	f := &fakeHosts{}
	e := New(p, f, "/bin/false", nil)
	err := e.Change(context.Background(), Change{Verb: "delay", Link: "east-west", Value: "50ms"})
	if err == nil || !strings.Contains(err.Error(), "not running") {
		t.Errorf("change without a daemon: %v", err)
	}
	if err := e.Change(context.Background(), Change{Verb: "delay", Link: "north-south", Value: "50ms"}); err == nil ||
		!strings.Contains(err.Error(), "unknown link") {
		t.Errorf("change of an unknown link: %v", err)
	}
	if err := e.Heal(context.Background()); err != nil || len(f.ran) != 0 {
		t.Errorf("heal of an untouched WAN: %v, ran %v", err, f.ran)
	}
	if _, err := os.Stat(p.WAN.Config); !os.IsNotExist(err) {
		t.Errorf("nothing should be written: %v", err)
	}
}

func TestEmulatorCheck(t *testing.T) {
	p := twoRegionLab(t, "")
	var log bytes.Buffer
	cut := New(p, &fakeHosts{}, "/bin/false", &log)
	ms, err := cut.Check(context.Background(), false)
	if err == nil || len(ms) != 1 || ms[0].Samples != 0 || !strings.Contains(err.Error(), "cut") {
		t.Fatalf("a cut link must fail even a lenient check: %v %+v", err, ms)
	}
	ok := New(p, &fakeHosts{rtt: 20 * time.Millisecond}, "/bin/false", &log)
	ms, err = ok.Check(context.Background(), true)
	if err != nil || len(ms) != 1 || !ms[0].Usable || ms[0].From != "e1" || ms[0].To != "w1" {
		t.Fatalf("a 20 ms link measured through a 20 ms dial: %v %+v", err, ms)
	}
	if last := ok.Last(); len(last) != 1 || last[0].P50Ms != ms[0].P50Ms {
		t.Errorf("Last = %+v, want what Check recorded", last)
	}
	if _, err := os.Stat(filepath.Join(p.Dir, "wan.json")); err != nil {
		t.Error(err)
	}
}

func TestEmulatorDisabledWithoutLinks(t *testing.T) {
	p := &plan.Plan{Dir: t.TempDir(), Mode: plan.ModeNetns, Spec: &spec.Spec{}}
	plan.Complete(p)
	e := New(p, &fakeHosts{}, "/bin/false", nil)
	if e.Enabled() || e.Pid() != 0 || e.Last() != nil {
		t.Error("a lab without links has no emulator")
	}
	if err := e.Ensure(context.Background()); err != nil {
		t.Error(err)
	}
	if ms, err := e.Measure(context.Background()); ms != nil || err != nil {
		t.Error(ms, err)
	}
	err := e.Change(context.Background(), Change{Verb: "delay", Link: "east-west", Value: "50ms"})
	if err == nil || !strings.Contains(err.Error(), "it has none") {
		t.Errorf("a link fault on a lab without links: %v", err)
	}
}

// A remote host's daemon gets every link and its own rules only.
func TestConfigFor(t *testing.T) {
	c := Config{Links: []Link{{Name: "east-west"}},
		Rules: []Rule{{Host: "e1", Peer: "10.0.0.21"}, {Host: "w1", Peer: "10.0.0.11"}, {Host: "e1", Peer: "10.0.0.22"}}}
	got := c.For("e1")
	if len(got.Links) != 1 || len(got.Rules) != 2 || got.Rules[0].Peer != "10.0.0.21" || got.Rules[1].Peer != "10.0.0.22" {
		t.Errorf("e1's config: %+v", got)
	}
	if got := c.For("lb"); len(got.Rules) != 0 || len(got.Links) != 1 {
		t.Errorf("a host without rules: %+v", got)
	}
}
