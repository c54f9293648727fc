package lab

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hadrill/hadrill/internal/netem"
	"github.com/hadrill/hadrill/internal/plan"
)

// rttProbes is how many TCP handshakes measure a link (started 5 ms apart,
// so a measurement takes about one round trip plus 0.1 s).
const rttProbes = 21

func (l *Lab) wanFile() string { return filepath.Join(l.Plan.Dir, "wan.json") }

// MeasureWAN measures every link's round trip: TCP handshakes from a host
// of one region to a node's health agent in the other (a handshake is one
// round trip: SYN there, SYN-ACK back).
func (l *Lab) MeasureWAN(ctx context.Context) ([]netem.Measured, error) {
	if !l.wan() {
		return nil, nil
	}
	c, err := l.NetemConfig()
	if err != nil {
		return nil, err
	}
	var out []netem.Measured
	for _, k := range c.Links {
		from, to, ok := l.probePair(k)
		if !ok {
			continue // no health agent in either region: nothing answers there
		}
		samples, failed := l.handshakes(ctx, from.Name, fmt.Sprintf("%s:%d", to.Address, to.AgentPort))
		m := netem.Judge(k, samples, failed)
		m.From, m.To, m.At = from.Name, to.Name, time.Now().UTC()
		out = append(out, m)
	}
	return out, ctx.Err()
}

// probePair picks a source host in one region of the link and a node (its
// agent answers) in the other.
func (l *Lab) probePair(k netem.Link) (plan.Host, *plan.Node, bool) {
	for _, dir := range [][2]string{{k.Regions[0], k.Regions[1]}, {k.Regions[1], k.Regions[0]}} {
		var src *plan.Host
		for i := range l.Plan.Hosts {
			if l.Plan.Hosts[i].Region == dir[0] {
				src = &l.Plan.Hosts[i]
				break
			}
		}
		for i := range l.Plan.Nodes {
			if n := &l.Plan.Nodes[i]; n.Region == dir[1] && src != nil {
				return *src, n, true
			}
		}
	}
	return plan.Host{}, nil, false
}

func (l *Lab) handshakes(ctx context.Context, from, addr string) ([]time.Duration, int) {
	var mu sync.Mutex
	var samples []time.Duration
	failed := 0
	var wg sync.WaitGroup
	for i := 0; i < rttProbes; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			t0 := time.Now()
			conn, err := l.Prov.Dial(cctx, from, "tcp", addr)
			d := time.Since(t0)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed++
				return
			}
			conn.Close()
			samples = append(samples, d)
		}()
		time.Sleep(5 * time.Millisecond)
	}
	wg.Wait()
	return samples, failed
}

// CheckWAN measures the links, records the result in <lab>/wan.json and
// fails, naming every link, when one misses its target.
//
// strict fails a link measured far off its target (past netem.Bound); not
// strict (up, start) fails only a cut link: a lab just formed can find the
// machine busy, and every benchmark and drill checks strictly again.
func (l *Lab) CheckWAN(ctx context.Context, strict bool) ([]netem.Measured, error) {
	var ms []netem.Measured
	var err error
	// A miss is measured again (up to three times, a second apart): right
	// after servers start, or under a passing spike, 21 handshakes can
	// catch the machine busy. What is recorded and judged is the last.
	for attempt := 1; ; attempt++ {
		if ms, err = l.MeasureWAN(ctx); err != nil || len(ms) == 0 {
			return ms, err
		}
		if allOK(ms) || attempt == 3 || ctx.Err() != nil {
			break
		}
		time.Sleep(time.Second)
	}
	b, _ := json.MarshalIndent(ms, "", "  ")
	if err := os.WriteFile(l.wanFile(), append(b, '\n'), 0o644); err != nil {
		return ms, err
	}
	var problems []string
	for _, m := range ms {
		if p := m.Problem(); p != "" && (strict || m.Samples == 0) {
			problems = append(problems, p)
		} else if p != "" {
			l.logf("warning: %s (measured again before every benchmark and drill, which refuse a link this far off)", p)
		} else if w := m.Warning(); w != "" {
			l.logf("warning: %s", w)
		} else {
			l.logf("link %s: round trip %.2f ms (p50; p99 %.2f ms; target %.0f ms)", m.Link, m.P50Ms, m.P99Ms, m.TargetMs)
		}
	}
	if len(problems) > 0 {
		return ms, fmt.Errorf("WAN emulation misses its targets:\n  %s", strings.Join(problems, "\n  "))
	}
	return ms, nil
}

// LastWAN is the last recorded measurement of the links.
func (l *Lab) LastWAN() []netem.Measured {
	var ms []netem.Measured
	if b, err := os.ReadFile(l.wanFile()); err == nil {
		_ = json.Unmarshal(b, &ms)
	}
	return ms
}

func allOK(ms []netem.Measured) bool {
	for _, m := range ms {
		if !m.OK {
			return false
		}
	}
	return true
}
