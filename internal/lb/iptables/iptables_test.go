package iptables

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/lb/proxy"
	"github.com/hadrill/hadrill/internal/spec"
)

func testConfig() Config {
	return Config{Lab: "t", Name: "lb", Address: "198.18.0.101", Source: "198.18.0.101",
		Groups:    []Group{{Name: "writes", Port: 3306, Check: "/", First: false}, {Name: "reads", Port: 3307, Check: "/"}},
		Backends:  []Backend{{"db1", "198.18.0.11", 3306}, {"db2", "198.18.0.12", 3306}, {"db3", "198.18.0.13", 3306}},
		CheckPort: 9200, Timing: TimingOf(spec.LBChecksFast), AdminSocket: "/tmp/x.sock", Chain: ChainOf("t", "lb"), Dir: "/tmp/x"}
}

func text(rules [][]string) string {
	var b strings.Builder
	for _, r := range rules {
		b.WriteString(strings.Join(r, " ") + "\n")
	}
	return b.String()
}

func TestDNATRules(t *testing.T) {
	c := testConfig()
	all := map[string][]string{"writes": {"db1", "db2", "db3"}, "reads": {"db2", "db3"}}
	got := func(c Config, s map[string][]string) string {
		var rs [][]string
		for _, r := range DNATRules(c, s) {
			rs = append(rs, r)
		}
		return text(rs)
	}
	// three servers: 1/3, then 1/2 of the rest, then the rest
	want := `-d 198.18.0.101/32 -p tcp --dport 3306 -m statistic --mode random --probability 0.33333 -m comment --comment writes/db1 -j DNAT --to-destination 198.18.0.11:3306
-d 198.18.0.101/32 -p tcp --dport 3306 -m statistic --mode random --probability 0.50000 -m comment --comment writes/db2 -j DNAT --to-destination 198.18.0.12:3306
-d 198.18.0.101/32 -p tcp --dport 3306 -m comment --comment writes/db3 -j DNAT --to-destination 198.18.0.13:3306
-d 198.18.0.101/32 -p tcp --dport 3307 -m statistic --mode random --probability 0.50000 -m comment --comment reads/db2 -j DNAT --to-destination 198.18.0.12:3306
-d 198.18.0.101/32 -p tcp --dport 3307 -m comment --comment reads/db3 -j DNAT --to-destination 198.18.0.13:3306
`
	if g := got(c, all); g != want {
		t.Errorf("balanced:\n%s\nwant\n%s", g, want)
	}
	// single-writer: the first server up takes every write
	c.Groups = c.Groups[:1]
	c.Groups[0].First = true
	if g := got(c, map[string][]string{"writes": {"db2", "db3"}}); g != "-d 198.18.0.101/32 -p tcp --dport 3306 -m comment --comment writes/db2 -j DNAT --to-destination 198.18.0.12:3306\n" {
		t.Errorf("single-writer: %s", g)
	}
	// no server: no rule (the host refuses the connection)
	if g := got(c, map[string][]string{"writes": {}}); g != "" {
		t.Errorf("no server: %q", g)
	}
}

// The shares the rules give add up to one each: 1/n for every server.
func TestDNATShares(t *testing.T) {
	for n := 1; n <= 6; n++ {
		c := testConfig()
		c.Backends = nil
		var names []string
		for i := range n {
			c.Backends = append(c.Backends, Backend{fmt.Sprintf("db%d", i+1), fmt.Sprintf("198.18.0.%d", 11+i), 3306})
			names = append(names, fmt.Sprintf("db%d", i+1))
		}
		left := 1.0
		for i, r := range DNATRules(c, map[string][]string{"writes": names}) {
			p := 1.0
			for j, w := range r {
				if w == "--probability" {
					fmt.Sscanf(r[j+1], "%g", &p)
				}
			}
			share := left * p
			left -= share
			if d := share - 1/float64(n); d > 1e-4 || d < -1e-4 {
				t.Errorf("%d servers: server %d gets %.5f, want %.5f", n, i+1, share, 1/float64(n))
			}
		}
	}
}

func TestObserve(t *testing.T) {
	tm := Timing{Rise: 2, Fall: 3}
	c := check{Up: true}
	var changed bool
	steps := []struct {
		ok      bool
		up      bool
		changed bool
		status  string
	}{
		{false, true, false, "UP 1/3"}, {true, true, false, "UP"}, // a single failure forgotten
		{false, true, false, "UP 1/3"}, {false, true, false, "UP 2/3"}, {false, false, true, "DOWN"},
		{true, false, false, "DOWN 1/2"}, {false, false, false, "DOWN"}, {true, false, false, "DOWN 1/2"}, {true, true, true, "UP"},
	}
	for i, s := range steps {
		c, changed = c.Observe(s.ok, "why", tm)
		if c.Up != s.up || changed != s.changed || c.Status(tm) != s.status {
			t.Errorf("step %d (ok %v): up %v changed %v %q, want %v %v %q", i, s.ok, c.Up, changed, c.Status(tm), s.up, s.changed, s.status)
		}
	}
}

func TestEventsRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 30, 11, 0, 0, 123456000, time.UTC)
	in := []proxy.Event{
		{At: at, Proxy: "writes", Server: "db1", What: proxy.Down, Reason: "no answer from its agent: i/o timeout; or so", Sessions: 3},
		{At: at.Add(time.Second), Proxy: "writes", Server: "db1", What: proxy.Up},
		{At: at.Add(2 * time.Second), Proxy: "reads", What: proxy.NoServer},
		{At: at.Add(3 * time.Second), Proxy: "reads", Server: "db2", What: proxy.Down, Reason: "its agent answered 503 (donor)"},
	}
	var log strings.Builder
	log.WriteString("2026-11-30T11:00:00Z balancing 198.18.0.101 over 3 servers, probing their agents every 200ms\n")
	for _, e := range in {
		log.WriteString(LogLine(e) + "\n")
	}
	log.WriteString("not a line\n")
	out := Events([]byte(log.String()))
	if fmt.Sprint(out) != fmt.Sprint(in) {
		t.Errorf("events:\n%v\nwant\n%v\nlog:\n%s", out, in, log.String())
	}
}

func TestSessions(t *testing.T) {
	c := testConfig()
	track := `ipv4     2 tcp      6 431999 ESTABLISHED src=198.18.0.2 dst=198.18.0.101 sport=40000 dport=3306 src=198.18.0.12 dst=198.18.0.101 sport=3306 dport=40000 [ASSURED] mark=0 use=1
ipv4     2 tcp      6 431999 ESTABLISHED src=198.18.0.2 dst=198.18.0.101 sport=40001 dport=3306 src=198.18.0.12 dst=198.18.0.101 sport=3306 dport=40001 [ASSURED] mark=0 use=1
ipv4     2 tcp      6 431999 ESTABLISHED src=198.18.0.2 dst=198.18.0.101 sport=40002 dport=3307 src=198.18.0.13 dst=198.18.0.101 sport=3306 dport=40002 [ASSURED] mark=0 use=1
ipv4     2 tcp      6 110 TIME_WAIT src=198.18.0.2 dst=198.18.0.101 sport=40003 dport=3306 src=198.18.0.11 dst=198.18.0.101 sport=3306 dport=40003 [ASSURED] mark=0 use=1
ipv4     2 tcp      6 431999 ESTABLISHED src=198.18.0.101 dst=198.18.0.11 sport=50000 dport=9200 src=198.18.0.11 dst=198.18.0.101 sport=9200 dport=50000 mark=0 use=1
ipv4     2 udp      17 20 src=198.18.0.2 dst=198.18.0.101 sport=5000 dport=3306 src=198.18.0.101 dst=198.18.0.2 sport=3306 dport=5000 mark=0 use=1
`
	got := Sessions(c, []byte(track))
	if fmt.Sprint(got) != "map[reads:map[db3:1] writes:map[db2:2]]" {
		t.Errorf("sessions: %v", got)
	}
}

func TestConfigCheck(t *testing.T) {
	if err := testConfig().Check(); err != nil {
		t.Errorf("a good configuration: %v", err)
	}
	err := Config{Groups: []Group{{Name: "writes", Port: 0}}, Backends: []Backend{{Name: "db1"}}}.Check()
	for _, want := range []string{"address and source: both required", "groups[0]: a port of 1 to 65535 and a check path, got 0", "backends[0]: a name, an address",
		"timing: an interval and a timeout above 0", "check_port, admin_socket, chain and dir"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("a bad configuration: %v, want %q", err, want)
		}
	}
}

// The chains go in, route, and come out of a network namespace of the
// test's own, leaving its tables as they were.
func TestInstallRouteUninstall(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root: a network namespace of its own")
	}
	if _, err := exec.LookPath("iptables-restore"); err != nil {
		t.Skip("no iptables-restore")
	}
	ns := fmt.Sprintf("hdt-lbipt-%d", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	run := func(argv []string) string {
		t.Helper()
		out, err := exec.Command("ip", append([]string{"netns", "exec", ns}, argv...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v: %s", argv[:3], err, out)
		}
		return string(out)
	}
	before := run([]string{"iptables", "-w", "-t", "nat", "-S"})
	c := testConfig()
	for range 2 { // a second install (after a killed prober) starts from empty chains
		for _, argv := range Install(c) {
			run(argv)
		}
		run(Route(c, map[string][]string{"writes": {"db1", "db2"}, "reads": {"db3"}}))
	}
	got := run([]string{"iptables", "-w", "-t", "nat", "-S"})
	for _, want := range []string{"-A PREROUTING -j " + c.Chain, "-A OUTPUT -j " + c.Chain, "-A POSTROUTING -j " + c.Chain + "-S",
		`--comment "writes/db1" -j DNAT --to-destination 198.18.0.11:3306`, `--comment "reads/db3" -j DNAT --to-destination 198.18.0.13:3306`,
		"-A " + c.Chain + "-S -d 198.18.0.12/32 -p tcp -m tcp --dport 3306 -m conntrack --ctstate DNAT -j SNAT --to-source 198.18.0.101"} {
		if !strings.Contains(got, want) {
			t.Errorf("rules lack %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "-j DNAT"); n != 3 {
		t.Errorf("%d DNAT rules, want 3:\n%s", n, got)
	}
	if n := strings.Count(got, "-A PREROUTING -j "+c.Chain); n != 1 {
		t.Errorf("%d jumps from PREROUTING, want 1:\n%s", n, got)
	}
	for _, argv := range Uninstall(c) {
		run(argv)
	}
	if after := run([]string{"iptables", "-w", "-t", "nat", "-S"}); after != before {
		t.Errorf("after uninstall:\n%s\nbefore:\n%s", after, before)
	}
}
