package netem

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hadrill/hadrill/internal/iptables"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
)

func twoRegions() *plan.Plan {
	return &plan.Plan{Hosts: []plan.Host{
		{Name: "db1", Region: "east", Netns: "hd-l-db1", Address: "198.18.0.11"},
		{Name: "db2", Region: "west", Netns: "hd-l-db2", Address: "198.18.0.12"},
		{Name: "client", Region: "east", Netns: "hd-l-client", Address: "198.18.0.201"},
		{Name: "dr1", Region: "north", Netns: "hd-l-dr1", Address: "198.18.0.21"},
	}}
}

func TestBuildQueuesOnlyLinkedRegions(t *testing.T) {
	links := FromSpec([]spec.Link{{Between: []string{"east", "west"}, RTT: "100ms", Jitter: "2ms", Loss: 1, Bandwidth: "10mbit"}})
	if k := links[0]; k.Name != "east-west" || k.RTT != 100*time.Millisecond || k.Jitter != 2*time.Millisecond || k.Bandwidth != 10e6 {
		t.Fatalf("FromSpec: %+v", k)
	}
	c := Build(twoRegions(), links)
	var got []string
	for _, r := range c.Rules {
		got = append(got, r.Host+"<"+r.Peer)
	}
	want := "db1<198.18.0.12 db2<198.18.0.11 db2<198.18.0.201 client<198.18.0.12"
	if strings.Join(got, " ") != want {
		t.Fatalf("rules: %v, want %s (north has no link: untouched)", got, want)
	}
	if len(c.Queues()) != 3 || len(c.Hosts()) != 3 {
		t.Fatalf("queues %v hosts %v", c.Queues(), c.Hosts())
	}
}

func TestApply(t *testing.T) {
	links := FromSpec([]spec.Link{{Between: []string{"east", "west"}, RTT: "100ms"}})
	cases := []struct {
		c    Change
		want string // Describe, or the error
	}{
		{Change{Verb: "delay", Link: "west-east", Value: "250ms", Jitter: "4ms"}, "rtt 250ms ±4ms"},
		{Change{Verb: "delay", Link: "east-west", Value: "0"}, "rtt 0s"},
		{Change{Verb: "loss", Link: "east-west", Value: "2.5%"}, "rtt 100ms, loss 2.5%"},
		{Change{Verb: "reorder", Link: "east-west", Value: "25%"}, "rtt 100ms, reorder 25%"},
		{Change{Verb: "reorder", Link: "east-west", Value: "0"}, "rtt 100ms"},
		{Change{Verb: "reorder", Link: "east-west", Value: "often"}, "VALUE: expected a reorder percentage"},
		{Change{Verb: "duplicate", Link: "east-west", Value: "1%"}, "rtt 100ms, duplicate 1%"},
		{Change{Verb: "duplicate", Link: "east-west", Value: "100"}, "VALUE: expected a duplicate percentage"},
		{Change{Verb: "bandwidth", Link: "east-west", Value: "10mbit"}, "rtt 100ms, bandwidth 10mbit"},
		{Change{Verb: "bandwidth", Link: "east-west", Value: "unlimited"}, "rtt 100ms"},
		{Change{Verb: "delay", Link: "east-west", Value: "11s"}, "VALUE: expected a round-trip time from 0 to 10s"},
		{Change{Verb: "delay", Link: "east-west", Value: "-1ms"}, "VALUE: expected a round-trip time"},
		{Change{Verb: "loss", Link: "east-west", Value: "101"}, "VALUE: expected a loss percentage"},
		{Change{Verb: "bandwidth", Link: "east-west", Value: "fast"}, "VALUE: expected a rate"},
		{Change{Verb: "delay", Link: "east-north", Value: "1s"}, `LINK: unknown link "east-north" (links: east-west`},
		// bounds: no overflow, no NaN, jitter below the round trip
		{Change{Verb: "bandwidth", Link: "east-west", Value: "99999999999gbit"}, "VALUE: expected a rate from 8kbit to 100gbit"},
		{Change{Verb: "bandwidth", Link: "east-west", Value: "101gbit"}, "VALUE: expected a rate"},
		{Change{Verb: "bandwidth", Link: "east-west", Value: "100gbit"}, "rtt 100ms, bandwidth 100gbit"},
		{Change{Verb: "loss", Link: "east-west", Value: "NaN%"}, "VALUE: expected a loss percentage"},
		{Change{Verb: "loss", Link: "east-west", Value: "Inf"}, "VALUE: expected a loss percentage"},
		{Change{Verb: "delay", Link: "east-west", Value: "250ms", Jitter: "1s"}, "--jitter: must be less than the round trip"},
		{Change{Verb: "delay", Link: "east-west", Value: "250ms", Jitter: "250ms"}, "--jitter: must be less than the round trip"},
		{Change{Verb: "delay", Link: "east-west", Value: "250ms", Jitter: "249ms"}, "rtt 250ms ±249ms"},
	}
	for _, c := range cases {
		got, err := Apply(links, c.c)
		s := ""
		if err != nil {
			s = err.Error()
		} else {
			s = got[0].Describe()
		}
		if !strings.Contains(s, c.want) {
			t.Errorf("%+v: got %q, want %q", c.c, s, c.want)
		}
	}
	// nothing is delayed, so nothing can be overtaken
	flat := FromSpec([]spec.Link{{Between: []string{"east", "west"}, RTT: "0s"}})
	if _, err := Apply(flat, Change{Verb: "reorder", Link: "east-west", Value: "10"}); err == nil || !strings.Contains(err.Error(), "has no delay") {
		t.Errorf("reorder on a link without delay: %v", err)
	}
	// every problem at once
	_, err := Apply(links, Change{Verb: "delay", Link: "x", Value: "forever"})
	if err == nil || !strings.Contains(err.Error(), "LINK:") || !strings.Contains(err.Error(), "VALUE:") {
		t.Fatalf("want both problems, got %v", err)
	}
	if _, err := Find(nil, "a-b"); err == nil || !strings.Contains(err.Error(), "it has none") {
		t.Fatalf("no links: %v", err)
	}
}

func TestLaneDelayOrderAndLoss(t *testing.T) {
	k := Link{RTT: 100 * time.Millisecond, Jitter: 20 * time.Millisecond}
	l := NewLane(1)
	t0 := time.Unix(0, 0)
	var prev time.Time
	for i := 0; i < 1000; i++ {
		now := t0.Add(time.Duration(i) * 100 * time.Microsecond)
		r, drop, ahead := l.Admit(&k, now)
		if drop || ahead {
			t.Fatal("no loss configured")
		}
		if d := r.Sub(now); d < 40*time.Millisecond || d > 60*time.Millisecond+10*time.Millisecond {
			t.Fatalf("one-way delay %v outside 50 ms ± 10 ms", d)
		}
		if r.Before(prev) {
			t.Fatal("reordered")
		}
		prev = r
	}
	k = Link{RTT: 10 * time.Millisecond, Loss: 25}
	drops := 0
	for i := 0; i < 10000; i++ {
		if _, d, _ := l.Admit(&k, t0); d {
			drops++
		}
	}
	if drops < 2200 || drops > 2800 {
		t.Fatalf("25%% loss dropped %d of 10000", drops)
	}
}

func TestExpected(t *testing.T) {
	for _, c := range []struct {
		reorder float64
		want    time.Duration
	}{{0, 200 * time.Millisecond}, {25, 200 * time.Millisecond}, {50, 100 * time.Millisecond}, {70, 100 * time.Millisecond}, {80, 0}, {100, 0}} {
		if got := (Link{RTT: 200 * time.Millisecond, Reorder: c.reorder}).Expected(); got != c.want {
			t.Errorf("reorder %g%%: expected median %v, want %v", c.reorder, got, c.want)
		}
	}
}

func TestLaneReorder(t *testing.T) {
	l := NewLane(2)
	t0 := time.Unix(0, 0)
	k := Link{RTT: 100 * time.Millisecond, Reorder: 25}
	ahead, overtaken := 0, 0
	var last time.Time // the latest release of a delayed packet
	for i := 0; i < 10000; i++ {
		now := t0.Add(time.Duration(i) * 100 * time.Microsecond)
		r, drop, a := l.Admit(&k, now)
		switch {
		case drop:
			t.Fatal("no loss configured")
		case a:
			ahead++
			if !r.Equal(now) {
				t.Fatalf("a packet sent ahead is released at %v, not when it came (%v)", r, now)
			}
			if r.Before(last) {
				overtaken++
			}
		default:
			if d := r.Sub(now); d != 50*time.Millisecond {
				t.Fatalf("a delayed packet waits %v, want 50ms", d)
			}
			last = r
		}
	}
	if ahead < 2200 || ahead > 2800 || overtaken < ahead-5 {
		t.Fatalf("25%% reorder: %d of 10000 sent ahead, %d of them overtook a delayed packet", ahead, overtaken)
	}
	// no reorder: never ahead (the "no effect" side)
	k.Reorder = 0
	for i := 0; i < 1000; i++ {
		if _, _, a := l.Admit(&k, t0); a {
			t.Fatal("sent ahead without reorder")
		}
	}
}

func TestJudge(t *testing.T) {
	k := Link{Name: "a-b", RTT: 100 * time.Millisecond}
	ms := func(v ...float64) []time.Duration {
		var out []time.Duration
		for _, x := range v {
			out = append(out, time.Duration(x*float64(time.Millisecond)))
		}
		return out
	}
	if m := Judge(k, 0, ms(100.4, 100.6, 101, 140), 0); !m.OK || m.P50Ms != 100.6 || m.Tolerance != 3 {
		t.Fatalf("within tolerance: %+v", m)
	}
	if m := Judge(k, 0, ms(103.5, 103.6, 103.7), 0); m.OK || !m.Usable || m.Problem() != "" || !strings.Contains(m.Warning(), "3.60 ms off its target 100.00 ms (tolerance 3.00 ms)") {
		t.Errorf("off by more than the tolerance, within the bound: a warning, not a failure: %+v", m)
	}
	if m := Judge(k, 0, ms(116, 116, 116), 0); m.Usable || !strings.Contains(m.Problem(), "target 100.00 ms ± 15.00 ms") {
		t.Fatalf("16 ms off must fail: %+v %s", m, m.Problem())
	}
	if m := Judge(k, 0, nil, 21); m.OK || !strings.Contains(m.Problem(), "cut") || strings.Contains(m.Summary(), "0.00") ||
		m.Summary() != "not measured (all 21 probes failed: the link is cut, the netem daemon is down or nothing answers in the other region)" {
		t.Fatalf("no samples: %+v %q", m, m.Summary())
	}
	if m := Judge(k, 0, ms(100.4, 100.6, 101), 0); m.Summary() != "p50 100.60 ms, p99 101.00 ms" || m.NotMeasured != "" {
		t.Fatalf("measured: %q", m.Summary())
	}
	if m := Judge(Link{RTT: 0}, 0, ms(0.2, 0.3), 0); !m.OK {
		t.Fatalf("0 ms link within 1 ms: %+v", m)
	}
	// real machines: the emulated delay adds to their own round trip
	base := 4 * time.Millisecond
	if m := Judge(k, base, ms(104.2, 104.5), 0); !m.OK || m.BaseMs != 4 {
		t.Fatalf("100 ms on top of 4 ms: %+v", m)
	}
	if m := Judge(k, base, ms(120, 120), 0); m.Usable || !strings.Contains(m.Problem(), "target 100.00 ms on top of the machines' own 4.00 ms") {
		t.Fatalf("far off on top of 4 ms: %+v %s", m, m.Problem())
	}
}

func TestChainRules(t *testing.T) {
	links := FromSpec([]spec.Link{{Between: []string{"east", "west"}, RTT: "100ms"}})
	c := Build(twoRegions(), links)
	show := func(rs []iptables.Rule) string {
		var s []string
		for _, r := range rs {
			s = append(s, strings.Join(r, " "))
		}
		return strings.Join(s, "\n")
	}
	if got := show(ChainRules(c, "db2", "198.18.0.12")); got != "-s 198.18.0.11 -j NFQUEUE --queue-num "+strconv.Itoa(int(c.QueueNum(0)))+
		"\n-s 198.18.0.201 -j NFQUEUE --queue-num "+strconv.Itoa(int(c.QueueNum(0))) {
		t.Errorf("no duplication: the queue rules alone\n%s", got)
	}
	c.Links[0].Duplicate = 2.5
	got := show(ChainRules(c, "db1", "198.18.0.11"))
	want := "-s 198.18.0.12 ! -i lo -m statistic --mode random --probability 0.025 -j TEE --gateway 198.18.0.11\n" +
		"-s 198.18.0.12 -j NFQUEUE --queue-num " + strconv.Itoa(int(c.QueueNum(0)))
	if got != want {
		t.Errorf("duplicate 2.5%%:\n%s\nwant\n%s", got, want)
	}
}
