package netem

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/stats"
)

// remote is the daemons of a lab on remote machines: each host that
// receives packets from another region runs one of its own, which binds
// that host's queues in its own network namespace; its config holds every
// link and that host's rules. The lab's config (the links as they are
// now) stays on this computer.
type remote struct{ e *Emulator }

// For is the config of one host's daemon: every link, that host's rules.
func (c Config) For(host string) Config {
	out := Config{Links: c.Links, QueueBase: c.QueueBase}
	for _, r := range c.Rules {
		if r.Host == host {
			out.Rules = append(out.Rules, r)
		}
	}
	return out
}

// daemon is the daemon of a remote host, run by hadrill's copy there.
func (r remote) daemon(h host.Host) host.Daemon {
	d := r.e.wan.Remote[h.Name()]
	return d.Named("netem", []string{h.Exe(), "netem", "--config", d.Config, "--ready-file", d.ReadyFile})
}

// each runs f for every host with rules, at once.
func (r remote) each(c Config, f func(h host.Host, hc Config) error) error {
	hs := c.Hosts()
	errs := make([]error, len(hs))
	var wg sync.WaitGroup
	for i, hr := range hs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(r.e.hosts.Host(hr.Host), c.For(hr.Host))
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// writeConfig gives a host's daemon its config.
func (r remote) writeConfig(ctx context.Context, h host.Host, c Config) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return h.WriteFile(ctx, r.e.wan.Remote[h.Name()].Config, append(b, '\n'), 0o644)
}

// start writes each host's config and starts its daemon unless it runs,
// waiting until it has bound its queues.
func (r remote) start(ctx context.Context, c Config) error {
	return r.each(c, func(h host.Host, hc Config) error {
		if err := r.writeConfig(ctx, h, hc); err != nil {
			return err
		}
		d := r.daemon(h)
		if p, err := h.Process(ctx, d); err != nil || p.Pid != 0 {
			return err
		}
		ready := r.e.wan.Remote[h.Name()].ReadyFile
		if err := h.RemoveAll(ctx, ready); err != nil {
			return err
		}
		return host.EnsureReady(ctx, h, d, 10*time.Second, 50*time.Millisecond, func(ctx context.Context) error {
			if b, err := h.ReadFile(ctx, ready); err != nil || strings.TrimSpace(string(b)) == "" {
				return fmt.Errorf("netem daemon on %s not ready (see %s there)", h.Name(), d.LogFile)
			}
			return nil
		})
	})
}

// pid is a pid of the lab's daemons when every one runs, else 0.
func (r remote) pid(ctx context.Context) int {
	c, err := r.e.Config()
	if err != nil {
		return 0
	}
	var mu sync.Mutex
	pid, down := 0, false
	_ = r.each(c, func(h host.Host, _ Config) error {
		p, err := h.Process(ctx, r.daemon(h))
		mu.Lock()
		defer mu.Unlock()
		if err != nil || p.Pid == 0 {
			down = true
		} else if pid == 0 {
			pid = p.Pid
		}
		return nil
	})
	if down {
		return 0
	}
	return pid
}

// stop ends every host's daemon.
func (r remote) stop(ctx context.Context) error {
	c, err := r.e.Config()
	if err != nil {
		return err
	}
	return r.each(c, func(h host.Host, _ Config) error { return h.Kill(ctx, r.daemon(h)) })
}

// reload gives each host's daemon the links as they are now (one that
// does not run reads them when it starts).
func (r remote) reload(ctx context.Context, c Config) error {
	return r.each(c, func(h host.Host, hc Config) error {
		if err := r.writeConfig(ctx, h, hc); err != nil {
			return err
		}
		d := r.daemon(h)
		if p, err := h.Process(ctx, d); err != nil || p.Pid == 0 {
			return err
		}
		return h.Signal(ctx, d, syscall.SIGHUP)
	})
}

// removeScript takes the lab's queueing chain off a host ($1) and the
// bandwidth classes hadrill put on its NICs (the other arguments: an htb
// root whose default class is 9999, which tc reads as hex and prints
// 0x9999; no other tool picks it), in one round trip.
const removeScript = `chain=$1; shift
while iptables -w -t mangle -D PREROUTING -j "$chain" 2>/dev/null; do :; done
iptables -w -t mangle -F "$chain" 2>/dev/null
iptables -w -t mangle -X "$chain" 2>/dev/null
for nic in "$@"; do
	if tc qdisc show dev "$nic" root 2>/dev/null | grep -q '^qdisc htb 1: .*default 0x9999'; then
		tc qdisc del dev "$nic" root || exit 1
	fi
done
exit 0`

// Remove takes what the WAN put on remote hosts' tables and NICs off them
// (a remote machine's outlive the lab); the daemons go with the lab's
// directory there.
func (e *Emulator) Remove(ctx context.Context) error {
	if !e.remote() {
		return nil
	}
	var errs []error
	for _, h := range e.plan.Hosts {
		argv := []string{"sh", "-c", removeScript, "sh", e.wan.Chain}
		for _, card := range h.NICs { // a cluster network's NIC is shaped too
			argv = append(argv, card.Name)
		}
		if _, err := e.hosts.Host(h.Name).Run(ctx, argv, nil); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// handshakes are timed on the remote host itself (`hadrill netem probe`):
// dialled through its connection they would include the round trip from
// this computer to the host.
func (r remote) handshakes(ctx context.Context, from, addr string) ([]time.Duration, int) {
	return r.probe(ctx, from, addr, false)
}

// probe runs `hadrill netem probe` on a host; refused: a refused
// connection counts as a round trip.
func (r remote) probe(ctx context.Context, from, addr string, refused bool) ([]time.Duration, int) {
	h := r.e.hosts.Host(from)
	argv := []string{h.Exe(), "netem", "probe", "--count", strconv.Itoa(rttProbes), addr}
	if refused {
		argv = append(argv, "--refused")
	}
	out, err := h.Run(ctx, argv, nil)
	if err != nil {
		return nil, rttProbes
	}
	var p Probe
	if json.Unmarshal(out, &p) != nil {
		return nil, rttProbes
	}
	return p.Samples, p.Failed
}

// measureBase measures, once and before any rule holds a packet, each
// link's round trip between its two machines (remote hosts: the emulated
// delay adds to it). Nothing listens yet, so a refused connection counts:
// its reset comes back after one round trip too.
func (e *Emulator) measureBase(ctx context.Context, c Config) error {
	if !e.remote() || e.wan.Base == "" {
		return nil
	}
	r := remote{e}
	if _, err := os.Stat(e.wan.Base); err == nil {
		return nil
	}
	base := map[string]time.Duration{}
	for _, k := range c.Links {
		from, to, ok := probePair(e.plan, k)
		if !ok {
			continue
		}
		samples, _ := r.probe(ctx, from.Name, fmt.Sprintf("%s:%d", to.Address, to.AgentPort), true)
		if len(samples) == 0 {
			return fmt.Errorf("link %s: no round trip between %s and %s before emulating it: the machines do not reach each other", k.Name, from.Name, to.Name)
		}
		slices.Sort(samples)
		base[k.Name] = stats.Percentile(samples, 50)
		fmt.Fprintf(e.log, "link %s: the machines' own round trip %.2f ms (p50, %s → %s), before emulating %s on top\n", k.Name, ms(base[k.Name]), from.Name, to.Name, k.RTT)
	}
	b, err := json.Marshal(base)
	if err != nil {
		return err
	}
	return os.WriteFile(e.wan.Base, b, 0o644)
}

// base is each link's round trip between the machines, as measured before
// it was emulated (none within one computer).
func (e *Emulator) base() map[string]time.Duration {
	base := map[string]time.Duration{}
	if e.wan.Base != "" {
		if b, err := os.ReadFile(e.wan.Base); err == nil {
			_ = json.Unmarshal(b, &base)
		}
	}
	return base
}

// Probe is what `hadrill netem probe` prints: each handshake's time, and
// how many failed.
type Probe struct {
	Samples []time.Duration `json:"samples_ns"`
	Failed  int             `json:"failed"`
}

// Handshakes times n TCP handshakes to addr through dial, started 5 ms
// apart. dial's error counts as a failed handshake.
func Handshakes(ctx context.Context, n int, addr string, dial func(ctx context.Context, addr string) error) Probe {
	var mu sync.Mutex
	var p Probe
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			t0 := time.Now()
			err := dial(cctx, addr)
			d := time.Since(t0)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				p.Failed++
				return
			}
			p.Samples = append(p.Samples, d)
		}()
		time.Sleep(5 * time.Millisecond)
	}
	wg.Wait()
	return p
}
