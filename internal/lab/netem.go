package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/netem"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/supervise"
)

// netemChain is the mangle-table chain (in each host's namespace) that
// queues packets arriving from another region to the netem daemon.
const netemChain = "HDNETEM"

func (l *Lab) netemFile() string  { return filepath.Join(l.Plan.Dir, "netem.json") }
func (l *Lab) netemReady() string { return filepath.Join(l.Plan.Dir, "netem.ready") }
func (l *Lab) netemPidFile() string {
	return filepath.Join(l.Plan.Dir, "netem.pid")
}

// wan reports whether the lab emulates links between regions.
func (l *Lab) wan() bool { return l.Plan.Mode == plan.ModeNetns && len(l.Plan.Spec.Links) > 0 }

// NetemConfig is the lab's current WAN: the spec's links with the changes
// faults made since (none after heal).
func (l *Lab) NetemConfig() (netem.Config, error) {
	if c, err := netem.Load(l.netemFile()); err == nil {
		return c, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return c, err
	}
	return netem.Build(l.Plan, netem.FromSpec(l.Plan.Spec.Links)), nil
}

// ensureNetem starts the lab's netem daemon and installs its rules and
// bandwidth classes; idempotent. Namespaces must exist.
func (l *Lab) ensureNetem(ctx context.Context) error {
	if !l.wan() {
		return nil
	}
	c, err := l.NetemConfig()
	if err != nil {
		return err
	}
	if err := c.Save(l.netemFile()); err != nil {
		return err
	}
	if err := l.startNetem(ctx); err != nil {
		return err
	}
	installed, err := l.netemRules(ctx, c)
	if err != nil || !installed {
		return err
	}
	return l.shape(ctx, c)
}

func (l *Lab) netemPid() int {
	pid := supervise.ReadPid(l.netemPidFile())
	if supervise.Owned(pid, l.Plan.Dir) {
		return pid
	}
	return 0
}

func (l *Lab) startNetem(ctx context.Context) error {
	if l.netemPid() != 0 {
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	_ = os.Remove(l.netemReady())
	p, err := supervise.Start(supervise.Spec{Name: "netem", Argv: []string{exe, "netem", "--config", l.netemFile(),
		"--ready-file", l.netemReady()},
		LogFile: filepath.Join(l.Plan.Dir, "netem.log"), PidFile: l.netemPidFile(), Dir: filepath.Join(l.Plan.Dir, "netem")})
	if err != nil {
		return err
	}
	return p.WaitReady(ctx, 10*time.Second, 10*time.Millisecond, func(context.Context) error {
		b, err := os.ReadFile(l.netemReady())
		if err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(p.Pid) {
			return fmt.Errorf("netem daemon not ready (see %s)", filepath.Join(l.Plan.Dir, "netem.log"))
		}
		return nil
	})
}

// netemRules installs, in each host's namespace, one NFQUEUE rule per
// remote-region host (packets from it). Without the daemon bound, such
// packets are dropped: a dead daemon shows as a cut link, never as a
// silently perfect one. A host whose chain exists keeps it (hadrill writes
// a chain whole; it lives as long as the namespace): re-installing under
// traffic would let packets through undelayed for a moment. It reports
// whether it installed anything.
func (l *Lab) netemRules(ctx context.Context, c netem.Config) (bool, error) {
	installed := false
	for _, hr := range c.Hosts() {
		h, _ := l.host(hr.Host)
		if err := l.iptables(ctx, h, "-t", "mangle", "-N", netemChain); err != nil {
			if strings.Contains(err.Error(), "exists") {
				continue
			}
			return installed, err
		}
		installed = true
		for _, r := range c.Rules {
			if r.Host != h.Name {
				continue
			}
			if err := l.iptables(ctx, h, "-t", "mangle", "-A", netemChain, "-s", r.Peer, "-j", "NFQUEUE",
				"--queue-num", strconv.Itoa(int(r.Queue))); err != nil {
				return installed, err
			}
		}
		if err := l.iptables(ctx, h, "-t", "mangle", "-A", "PREROUTING", "-j", netemChain); err != nil {
			return installed, err
		}
	}
	return installed, nil
}

// shape sets each host's egress bandwidth towards the hosts of a
// bandwidth-limited link: an htb class per link on eth0 (unclassified
// traffic is not shaped). Each sending host gets the link's rate, like a
// per-VM egress cap.
func (l *Lab) shape(ctx context.Context, c netem.Config) error {
	for _, hr := range c.Hosts() {
		h, _ := l.host(hr.Host)
		_ = l.tc(ctx, h, "qdisc", "del", "dev", "eth0", "root") // absent: fine
		limited := map[uint16]bool{}
		for _, r := range c.Rules {
			if r.Host == h.Name && c.Links[r.Queue].Bandwidth > 0 {
				limited[r.Queue] = true
			}
		}
		if len(limited) == 0 {
			continue
		}
		if err := l.tc(ctx, h, "qdisc", "add", "dev", "eth0", "root", "handle", "1:", "htb", "default", "9999"); err != nil {
			return err
		}
		for q := range limited {
			rate := netem.FormatRate(c.Links[q].Bandwidth)
			class := fmt.Sprintf("1:%d", 10+q)
			if err := l.tc(ctx, h, "class", "add", "dev", "eth0", "parent", "1:", "classid", class, "htb", "rate", rate, "ceil", rate); err != nil {
				return err
			}
		}
		for _, r := range c.Rules {
			if r.Host == h.Name && limited[r.Queue] {
				if err := l.tc(ctx, h, "filter", "add", "dev", "eth0", "parent", "1:", "protocol", "ip", "prio", "1", "u32",
					"match", "ip", "dst", r.Peer+"/32", "flowid", fmt.Sprintf("1:%d", 10+r.Queue)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (l *Lab) tc(ctx context.Context, h plan.Host, args ...string) error {
	argv := l.Prov.Wrap(h.Name, append([]string{"tc"}, args...))
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: tc %s: %v: %s", h.Name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func (l *Lab) host(name string) (plan.Host, bool) {
	for _, h := range l.Plan.Hosts {
		if h.Name == name {
			return h, true
		}
	}
	return plan.Host{}, false
}

// LinkFault changes a link's delay, loss or bandwidth (recorded as a fault;
// heal restores the spec's values).
func (l *Lab) LinkFault(ctx context.Context, ch netem.Change) error {
	if err := l.needNetns(ch.Verb); err != nil {
		return err
	}
	c, err := l.NetemConfig()
	if err != nil {
		return err
	}
	links, err := netem.Apply(c.Links, ch)
	if err != nil {
		return err
	}
	if l.netemPid() == 0 {
		return fmt.Errorf("the lab's netem daemon is not running; start the lab (`hadrill start --all`) first")
	}
	rec := fault.Record{Fault: ch.Verb, Targets: []string{ch.Link}, Value: ch.Value, At: time.Now().UTC()}
	if err := l.setLinks(ctx, c, links); err != nil {
		return err
	}
	return l.RecordFault(rec)
}

// setLinks stores new link impairments and makes them effective: the
// daemon re-reads them (SIGHUP), the bandwidth classes are rebuilt.
func (l *Lab) setLinks(ctx context.Context, c netem.Config, links []netem.Link) error {
	bwChanged := false
	for i := range links {
		bwChanged = bwChanged || links[i].Bandwidth != c.Links[i].Bandwidth
	}
	c.Links = links
	if err := c.Save(l.netemFile()); err != nil {
		return err
	}
	if pid := l.netemPid(); pid != 0 {
		if err := syscall.Kill(pid, syscall.SIGHUP); err != nil {
			return err
		}
	}
	for _, k := range links {
		l.logf("link %s: %s", k.Name, k.Describe())
	}
	if bwChanged {
		return l.shape(ctx, c)
	}
	return nil
}

// healLinks restores the spec's link impairments.
func (l *Lab) healLinks(ctx context.Context) error {
	if !l.wan() {
		return nil
	}
	c, err := l.NetemConfig()
	if err != nil {
		return err
	}
	spec := netem.FromSpec(l.Plan.Spec.Links)
	same := len(spec) == len(c.Links)
	for i := 0; same && i < len(spec); i++ {
		same = spec[i] == c.Links[i]
	}
	if same {
		return nil
	}
	return l.setLinks(ctx, c, spec)
}

func (l *Lab) stopNetem() error {
	if pid := l.netemPid(); pid != 0 {
		return supervise.Kill(pid)
	}
	return nil
}
