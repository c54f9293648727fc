package netem

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/infra/nic"
	"github.com/hadrill/hadrill/internal/iptables"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/supervise"
)

// Hosts is what the emulator needs of a lab's hosts: run a command on one
// (iptables, tc), dial from one (the round-trip check), and a remote host
// itself (its daemon, its files).
type Hosts interface {
	// Run runs argv on host; a failure's error carries what it printed.
	Run(ctx context.Context, host string, argv ...string) error
	Dial(ctx context.Context, host, network, addr string) (net.Conn, error)
	Host(name string) host.Host
}

// Emulator is the host side of a lab's WAN: the netem daemon, the rules
// that queue packets to it, the bandwidth classes, the links' current
// impairments and their measured round trips.
type Emulator struct {
	plan  *plan.Plan
	wan   *plan.WAN
	hosts Hosts
	exe   string // the hadrill binary the daemon runs
	log   io.Writer
	d     daemons
}

// daemons is where a lab's netem daemon runs: one on this computer for a
// lab of namespaces (local), one on each host that receives from another
// region for a lab on remote machines (remote, remote.go). Everything else
// the emulator does (rules, bandwidth, checks) is the same for both.
type daemons interface {
	// start starts what does not run, with c's links, and waits until it
	// has bound its queues.
	start(ctx context.Context, c Config) error
	// pid is a daemon's pid when every one runs, else 0.
	pid(ctx context.Context) int
	stop(ctx context.Context) error
	// reload makes what runs take c's links.
	reload(ctx context.Context, c Config) error
	// handshakes times TCP handshakes from a host to addr.
	handshakes(ctx context.Context, from, addr string) ([]time.Duration, int)
}

// New returns the emulator of a plan; Enabled says whether it has links.
// exe is the hadrill binary (the daemon is `exe netem`).
func New(p *plan.Plan, hosts Hosts, exe string, log io.Writer) *Emulator {
	if log == nil {
		log = io.Discard
	}
	e := &Emulator{plan: p, wan: p.WAN, hosts: hosts, exe: exe, log: log}
	if e.remote() {
		e.d = remote{e}
	} else {
		e.d = local{e}
	}
	return e
}

// remote reports whether the lab's hosts are remote machines.
func (e *Emulator) remote() bool { return e.wan != nil && len(e.wan.Remote) > 0 }

// Enabled reports whether the lab emulates links between regions.
func (e *Emulator) Enabled() bool { return e.wan != nil }

// Config is the lab's current WAN: the spec's links with the changes
// faults made since (none after heal); no links when not Enabled.
func (e *Emulator) Config() (Config, error) {
	if !e.Enabled() {
		return Config{}, nil
	}
	if c, err := Load(e.wan.Config); err == nil {
		return c, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return c, err
	}
	return Build(e.plan, FromSpec(e.wan.Links)), nil
}

// Ensure starts the daemon and installs its rules and bandwidth classes;
// idempotent. The hosts must exist.
func (e *Emulator) Ensure(ctx context.Context) error {
	if !e.Enabled() {
		return nil
	}
	c, err := e.Config()
	if err != nil {
		return err
	}
	if err := c.Save(e.wan.Config); err != nil {
		return err
	}
	if err := e.d.start(ctx, c); err != nil {
		return err
	}
	if err := e.measureBase(ctx, c); err != nil {
		return err
	}
	installed, err := e.rules(ctx, c)
	if err != nil || !installed {
		return err
	}
	return e.shape(ctx, c)
}

// Pid is the running daemon's pid, else 0 (on remote hosts: a pid of
// their daemons when every one runs).
func (e *Emulator) Pid() int {
	if !e.Enabled() {
		return 0
	}
	return e.d.pid(context.Background())
}

// Stop ends the daemon (its rules stay: packets they queue are dropped, a
// cut link, until the daemon runs again).
func (e *Emulator) Stop() error {
	if !e.Enabled() {
		return nil
	}
	return e.d.stop(context.Background())
}

// local is the one daemon of a lab of namespaces, on this computer: it
// binds every host's queues (entering each namespace).
type local struct{ e *Emulator }

// daemon is the emulator under supervision: recognised by its config file.
func (l local) daemon() supervise.Daemon {
	w := l.e.wan
	argv := []string{l.e.exe, "netem", "--config", w.Config, "--ready-file", w.ReadyFile}
	if cg := l.e.plan.NetemCgroup(); cg != "" {
		argv = append(argv, "--cgroup", cg)
	}
	return supervise.Daemon{Name: "netem", Argv: argv, LogFile: w.LogFile, PidFile: w.PidFile, Dir: w.Dir, Marker: w.Config}
}

func (l local) pid(context.Context) int { return l.daemon().Pid() }

func (l local) start(ctx context.Context, _ Config) error { // it reads the lab's config, saved already
	if l.daemon().Pid() != 0 {
		return nil
	}
	w := l.e.wan
	_ = os.Remove(w.ReadyFile)
	p, err := l.daemon().Start()
	if err != nil {
		return err
	}
	return p.WaitReady(ctx, 10*time.Second, 10*time.Millisecond, func(context.Context) error {
		b, err := os.ReadFile(w.ReadyFile)
		if err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(p.Pid) {
			return fmt.Errorf("netem daemon not ready (see %s)", w.LogFile)
		}
		return nil
	})
}

// stop kills the daemon; its cgroup goes with it (a killed daemon cannot
// remove it itself).
func (l local) stop(context.Context) error {
	return errors.Join(l.daemon().Kill(), RemoveCgroup(l.e.plan.NetemCgroup()))
}

// reload: the daemon re-reads the lab's config (saved already) on SIGHUP.
func (l local) reload(context.Context, Config) error {
	_, err := l.daemon().Signal(syscall.SIGHUP) // one that does not run reads the config when it starts
	return err
}

// handshakes are dialled from the host's namespace by this process.
func (l local) handshakes(ctx context.Context, from, addr string) ([]time.Duration, int) {
	p := Handshakes(ctx, rttProbes, addr, func(ctx context.Context, addr string) error {
		conn, err := l.e.hosts.Dial(ctx, from, "tcp", addr)
		if err == nil {
			conn.Close()
		}
		return err
	})
	return p.Samples, p.Failed
}

// rules installs, in each host's namespace (the lab's chain), one NFQUEUE rule per
// remote-region host (packets from it). Without the daemon bound, such
// packets are dropped: a dead daemon shows as a cut link, never as a
// silently perfect one. A host whose chain exists keeps it (the chain is
// written whole, in one command with the jump to it): re-installing under
// traffic would let packets through undelayed for a moment. It reports
// whether it installed anything.
func (e *Emulator) rules(ctx context.Context, c Config) (bool, error) {
	installed := false
	for _, hr := range c.Hosts() {
		h := hr.Host
		if err := e.iptables(ctx, h, "-t", "mangle", "-N", e.wan.Chain); err != nil {
			if strings.Contains(err.Error(), "exists") {
				continue
			}
			return installed, err
		}
		installed = true
		// the rules and the jump to them in one command: they take effect together
		if err := e.hosts.Run(ctx, h, iptables.Append("mangle", e.wan.Chain, ChainRules(c, h, e.self(h)), "PREROUTING")...); err != nil {
			return installed, err
		}
	}
	return installed, nil
}

// self is a host's own address, where a duplicated packet's copy is sent.
func (e *Emulator) self(host string) string {
	if h, ok := e.plan.Host(host); ok {
		return h.Address
	}
	return ""
}

// rewrite replaces every host's chain with the rules of c (the duplicate
// shares changed), each in one transaction.
func (e *Emulator) rewrite(ctx context.Context, c Config) error {
	for _, hr := range c.Hosts() {
		if err := e.hosts.Run(ctx, hr.Host, iptables.Replace("mangle", e.wan.Chain, ChainRules(c, hr.Host, e.self(hr.Host)))...); err != nil {
			return err
		}
	}
	return nil
}

func (e *Emulator) iptables(ctx context.Context, host string, args ...string) error {
	return e.hosts.Run(ctx, host, append([]string{"iptables", "-w"}, args...)...)
}

func (e *Emulator) tc(ctx context.Context, host string, args ...string) error {
	return e.hosts.Run(ctx, host, append([]string{"tc"}, args...)...)
}

// shape sets each host's egress bandwidth towards the hosts of a
// bandwidth-limited link: an htb class per link on the NIC that reaches
// them, below the NIC's own rate when it has one (unclassified traffic is
// shaped only by that rate). Each sending host gets the link's rate, like a
// per-VM egress cap.
func (e *Emulator) shape(ctx context.Context, c Config) error {
	for _, hr := range c.Hosts() {
		h, ok := e.plan.Host(hr.Host)
		if !ok {
			continue
		}
		for _, card := range h.NICs {
			var classes []nic.Class
			for q, k := range c.Links {
				if k.Bandwidth <= 0 {
					continue
				}
				cl := nic.Class{Minor: 10 + q, RateBps: k.Bandwidth}
				for _, r := range c.Rules {
					if r.Host == h.Name && int(r.Queue) == q && e.plan.NetworkOf(r.Peer) == card.Network {
						cl.Peers = append(cl.Peers, r.Peer)
					}
				}
				if len(cl.Peers) > 0 {
					classes = append(classes, cl)
				}
			}
			_ = e.tc(ctx, h.Name, "qdisc", "del", "dev", card.Name, "root") // absent: fine
			for _, cmd := range nic.Egress(card.Name, card.RateBps, classes) {
				if err := e.tc(ctx, h.Name, cmd...); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Change applies a link fault (delay, loss, bandwidth) to the running
// daemon. The caller records it.
func (e *Emulator) Change(ctx context.Context, ch Change) error {
	c, err := e.Config()
	if err != nil {
		return err
	}
	links, err := Apply(c.Links, ch)
	if err != nil {
		return err
	}
	if e.Pid() == 0 {
		return fmt.Errorf("the lab's netem daemon is not running; start the lab (`hadrill start --all`) first")
	}
	return e.set(ctx, c, links)
}

// Validate checks a link fault against the lab's links, changing nothing.
func (e *Emulator) Validate(ch Change) error {
	c, err := e.Config()
	if err != nil {
		return err
	}
	_, err = Apply(c.Links, ch)
	return err
}

// Heal restores the spec's link impairments.
func (e *Emulator) Heal(ctx context.Context) error {
	if !e.Enabled() {
		return nil
	}
	c, err := e.Config()
	if err != nil {
		return err
	}
	spec := FromSpec(e.wan.Links)
	same := len(spec) == len(c.Links)
	for i := 0; same && i < len(spec); i++ {
		same = spec[i] == c.Links[i]
	}
	if same {
		return nil
	}
	return e.set(ctx, c, spec)
}

// set stores new link impairments and makes them effective: the daemon
// re-reads them (SIGHUP), the bandwidth classes are rebuilt.
func (e *Emulator) set(ctx context.Context, c Config, links []Link) error {
	bwChanged, dupChanged := false, false
	for i := range links {
		bwChanged = bwChanged || links[i].Bandwidth != c.Links[i].Bandwidth
		dupChanged = dupChanged || links[i].Duplicate != c.Links[i].Duplicate || links[i].Corrupt != c.Links[i].Corrupt
	}
	c.Links = links
	if err := c.Save(e.wan.Config); err != nil {
		return err
	}
	if err := e.d.reload(ctx, c); err != nil {
		return err
	}
	for _, k := range links {
		fmt.Fprintf(e.log, "link %s: %s\n", k.Name, k.Describe())
	}
	if dupChanged {
		if err := e.rewrite(ctx, c); err != nil {
			return err
		}
	}
	if bwChanged {
		return e.shape(ctx, c)
	}
	return nil
}

// rttProbes is how many TCP handshakes measure a link (started 5 ms apart,
// so a measurement takes about one round trip plus 0.1 s).
const rttProbes = 21

// Measure measures every link's round trip: TCP handshakes from a host of
// one region to a node's health agent in the other (a handshake is one
// round trip: SYN there, SYN-ACK back).
func (e *Emulator) Measure(ctx context.Context) ([]Measured, error) {
	if !e.Enabled() {
		return nil, nil
	}
	c, err := e.Config()
	if err != nil {
		return nil, err
	}
	var out []Measured
	for _, k := range c.Links {
		from, to, ok := probePair(e.plan, k)
		if !ok {
			continue // no health agent in either region: nothing answers there
		}
		samples, failed := e.d.handshakes(ctx, from.Name, fmt.Sprintf("%s:%d", to.Address, to.AgentPort))
		m := Judge(k, e.base()[k.Name], samples, failed)
		m.From, m.To, m.At = from.Name, to.Name, time.Now().UTC()
		out = append(out, m)
	}
	return out, ctx.Err()
}

// probePair picks a source host in one region of the link and a node (its
// agent answers) in the other.
func probePair(p *plan.Plan, k Link) (plan.Host, *plan.Node, bool) {
	for _, dir := range [][2]string{{k.Regions[0], k.Regions[1]}, {k.Regions[1], k.Regions[0]}} {
		var src *plan.Host
		for i := range p.Hosts {
			if p.Hosts[i].Region == dir[0] {
				src = &p.Hosts[i]
				break
			}
		}
		for i := range p.Nodes {
			if n := &p.Nodes[i]; n.Region == dir[1] && src != nil {
				return *src, n, true
			}
		}
	}
	return plan.Host{}, nil, false
}

// Check measures the links, records the result (Last) and fails, naming
// every link, when one misses its target.
//
// strict fails a link measured far off its target (past Bound); not strict
// (up, start) fails only a cut link: a lab just formed can find the machine
// busy, and every benchmark and drill checks strictly again.
func (e *Emulator) Check(ctx context.Context, strict bool) ([]Measured, error) {
	var ms []Measured
	var err error
	// A miss is measured again (up to three times, a second apart): right
	// after servers start, or under a passing spike, 21 handshakes can
	// catch the machine busy. What is recorded and judged is the last.
	for attempt := 1; ; attempt++ {
		if ms, err = e.Measure(ctx); err != nil || len(ms) == 0 {
			return ms, err
		}
		if allOK(ms) || attempt == 3 || ctx.Err() != nil {
			break
		}
		time.Sleep(time.Second)
	}
	b, _ := json.MarshalIndent(ms, "", "  ")
	if err := os.WriteFile(e.wan.Measured, append(b, '\n'), 0o644); err != nil {
		return ms, err
	}
	var problems []string
	for _, m := range ms {
		if p := m.Problem(); p != "" && (strict || m.Samples == 0) {
			problems = append(problems, p)
		} else if p != "" {
			fmt.Fprintf(e.log, "warning: %s (measured again before every benchmark and drill, which refuse a link this far off)\n", p)
		} else if w := m.Warning(); w != "" {
			fmt.Fprintf(e.log, "warning: %s\n", w)
		} else {
			fmt.Fprintf(e.log, "link %s: round trip %.2f ms (p50; p99 %.2f ms; target %.0f ms%s)\n", m.Link, m.P50Ms, m.P99Ms, m.TargetMs, m.OnTop())
		}
	}
	if len(problems) > 0 {
		return ms, fmt.Errorf("WAN emulation misses its targets:\n  %s", strings.Join(problems, "\n  "))
	}
	return ms, nil
}

// Last is the last recorded measurement of the links.
func (e *Emulator) Last() []Measured {
	var ms []Measured
	if !e.Enabled() {
		return ms
	}
	if b, err := os.ReadFile(e.wan.Measured); err == nil {
		_ = json.Unmarshal(b, &ms)
	}
	return ms
}

func allOK(ms []Measured) bool {
	for _, m := range ms {
		if !m.OK {
			return false
		}
	}
	return true
}
