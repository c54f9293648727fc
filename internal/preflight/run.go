package preflight

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hadrill/hadrill/internal/facts"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/inventory"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/provider/ssh"
)

//go:embed probe.sh
var probeScript string

// InstalledFile is the file (in hadrill's directory on a host) listing the
// packages preflight installed there: they stay when labs go, and `down`
// says so.
const InstalledFile = "installed-packages"

// Options steer Run.
type Options struct {
	// Install installs the missing packages of each host's roles.
	Install bool
	// Timeout bounds each connection (and each jump through a jump host).
	Timeout time.Duration
	// Arch is this hadrill's GOARCH.
	Arch string
	// Progress, when set, is told what a long step is doing.
	Progress func(format string, a ...any)
}

// HostReport is one host's part of a preflight.
type HostReport struct {
	Name      string   `json:"name"`
	Target    string   `json:"target"`
	Need      Need     `json:"need"`
	Reached   bool     `json:"reached"`
	Facts     *Facts   `json:"facts,omitempty"`
	Installed []string `json:"installed,omitempty"`
	Problems  []string `json:"problems,omitempty"`
	Warnings  []string `json:"warnings,omitempty"`
}

// Report is a whole preflight.
type Report struct {
	Inventory string       `json:"inventory"`
	Hosts     []HostReport `json:"hosts"`
	OK        bool         `json:"ok"`
}

// Problems lists every host's problems, in host order.
func (r *Report) Problems() []string {
	var out []string
	for _, h := range r.Hosts {
		out = append(out, h.Problems...)
	}
	return out
}

// Run checks every host of the inventory. It connects to all of them at
// once and reads what each has (every package any role needs: nothing it
// reads depends on the lab yet), then asks needsOf what each host needs,
// given the facts found (the lab's plan, built once from them, the
// addresses of hosts not reached being the inventory's), installs the
// missing packages of each host's roles when asked, and judges every
// host. An error of needsOf (the spec and the hosts do not fit) is
// returned with the hosts that could not be reached.
func Run(ctx context.Context, inv *inventory.Resolved, o Options, needsOf func(plan.Facts) (map[string]Need, error)) (*Report, error) {
	if o.Timeout == 0 {
		o.Timeout = 10 * time.Second
	}
	names := inv.Names()
	r := &Report{Inventory: inv.File, Hosts: make([]HostReport, len(names))}
	conns := make([]*ssh.Client, len(names))
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	each := func(do func(i int, h inventory.Host)) {
		var wg sync.WaitGroup
		for i, name := range names {
			wg.Go(func() { do(i, inv.Hosts[name]) })
		}
		wg.Wait()
	}
	each(func(i int, h inventory.Host) { r.Hosts[i], conns[i] = readHost(ctx, h, o) })
	needs, err := needsOf(PlanFacts(inv, r))
	if err != nil {
		return nil, errors.Join(err, hderr.Users(r.Problems()))
	}
	each(func(i int, h inventory.Host) {
		r.Hosts[i].Need = needs[h.Name]
		if conns[i] != nil {
			checkHost(ctx, conns[i], h, &r.Hosts[i], needs[h.Name], o)
		}
	})
	r.OK = len(r.Problems()) == 0
	return r, nil
}

// readHost connects to a host and reads its facts and clock (the client
// stays open for what follows; nil when the host was not reached or its
// probe failed).
func readHost(ctx context.Context, h inventory.Host, o Options) (HostReport, *ssh.Client) {
	hr := HostReport{Name: h.Name, Target: h.String()}
	c, err := ssh.Connect(ctx, h, o.Timeout)
	if err != nil {
		hr.Problems = append(hr.Problems, h.Name+": "+err.Error())
		return hr, nil
	}
	hr.Reached = true
	f, err := probe(ctx, c, allPackages())
	if err != nil {
		c.Close()
		hr.Problems = append(hr.Problems, h.Name+": "+err.Error())
		return hr, nil
	}
	f.Skew, f.SkewError, err = clock(ctx, c)
	if err != nil {
		hr.Warnings = append(hr.Warnings, h.Name+": its clock could not be read: "+err.Error())
	}
	hr.Facts = &f
	return hr, c
}

// checkHost holds a reached host's facts against what it needs, after
// installing the missing packages of its roles when asked.
func checkHost(ctx context.Context, c *ssh.Client, h inventory.Host, hr *HostReport, need Need, o Options) {
	f := *hr.Facts
	f.Missing = slices.DeleteFunc(slices.Clone(f.Missing), func(p string) bool { return !slices.Contains(need.Packages, p) })
	if o.Install && len(f.Missing) > 0 && f.UID == 0 && !f.NoDpkg {
		if o.Progress != nil {
			o.Progress("%s: installing %s", h.Name, strings.Join(f.Missing, " "))
		}
		if err := install(ctx, c, f.Missing); err != nil {
			hr.Problems = append(hr.Problems, h.Name+": installing "+strings.Join(f.Missing, " ")+": "+err.Error())
		} else {
			hr.Installed = f.Missing
		}
		again, err := probe(ctx, c, need.Packages)
		if err != nil {
			hr.Problems = append(hr.Problems, h.Name+": "+err.Error())
			return
		}
		f.Missing = again.Missing
	}
	hr.Facts = &f
	p, w := Judge(h.Name, h.PrivateAddress, need, f, o.Arch)
	hr.Problems = append(hr.Problems, p...)
	hr.Warnings = append(hr.Warnings, w...)
}

// PlanFacts are what a lab's plan needs of the inventory's machines: each
// host's address for the lab's traffic and hadrill's directory there (the
// inventory's), and what its probe found (the interface holding that
// address and its network, its memory; unknown for a host not reached).
func PlanFacts(inv *inventory.Resolved, r *Report) plan.Facts {
	f := plan.Facts{User: "root", GaleraLib: facts.GaleraLibs[0], Remote: map[string]plan.Remote{}, VirtualIPs: inv.VirtualIPs}
	for name, ih := range inv.Hosts {
		f.Remote[name] = plan.Remote{Address: ih.PrivateAddress, Dir: ih.Dir, ClusterAddress: ih.ClusterAddress}
	}
	if r == nil {
		return f
	}
	for _, h := range r.Hosts {
		rem, ok := f.Remote[h.Name]
		if !ok || h.Facts == nil {
			continue
		}
		rem.MemBytes = h.Facts.MemBytes
		if a, ok := h.Facts.AddrOf(rem.Address); ok {
			rem.Interface, rem.Network = a.Interface, a.Prefix
		}
		if a, ok := h.Facts.AddrOf(rem.ClusterAddress); ok && rem.ClusterAddress != "" {
			rem.ClusterInterface = a.Interface
		}
		f.Remote[h.Name] = rem
	}
	return f
}

// probe runs the probe script on the host and reads its facts.
func probe(ctx context.Context, c *ssh.Client, packages []string) (Facts, error) {
	argv := append([]string{"sh", "-s", "--", c.Host.Dir}, packages...)
	res, err := c.Run(ctx, argv, strings.NewReader(probeScript))
	if err != nil {
		return Facts{}, err
	}
	if res.Code != 0 {
		msg := res.Reason()
		if c.Host.Sudo && strings.HasPrefix(msg, "sudo") {
			return Facts{}, fmt.Errorf("sudo -n does not run commands as root for %s (%s): hadrill needs root on its hosts", c.Host.User, msg)
		}
		return Facts{}, fmt.Errorf("the probe failed (exit %d): %s", res.Code, msg)
	}
	return ParseFacts(string(res.Stdout))
}

// install installs packages with apt-get and notes them in the host's
// InstalledFile.
func install(ctx context.Context, c *ssh.Client, packages []string) error {
	script := `set -e
dir=$1; shift
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
mkdir -p "$dir"
for p in "$@"; do grep -qx "$p" "$dir/` + InstalledFile + `" 2>/dev/null || echo "$p" >> "$dir/` + InstalledFile + `"; done
`
	res, err := c.Run(ctx, append([]string{"sh", "-c", script, "sh", c.Host.Dir}, packages...), nil)
	if err != nil {
		return err
	}
	if res.Code != 0 {
		return fmt.Errorf("exit %d: %s", res.Code, res.Reason())
	}
	return nil
}

// clock measures the host's clock against this computer's over one
// session: a shell answers each line sent with its clock, so a sample's
// round trip is one exchange on an open channel, not a command's start.
// The sample with the shortest round trip of five counts; its error is
// half that trip.
func clock(ctx context.Context, c *ssh.Client) (skew, uncertainty time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	sess, err := c.Stream(ctx, []string{"sh", "-c", "while read -r _; do date +%s%N; done"})
	if err != nil {
		return 0, 0, err
	}
	defer sess.Close()
	best := time.Duration(-1)
	for range 5 {
		t0 := time.Now()
		if _, err := sess.Stdin.Write([]byte("\n")); err != nil {
			return 0, 0, err
		}
		line, err := sess.Stdout.ReadString('\n')
		t1 := time.Now()
		if err != nil {
			return 0, 0, fmt.Errorf("reading its clock: %v", err)
		}
		ns, err := strconv.ParseInt(strings.TrimSpace(line), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("date printed %q", strings.TrimSpace(line))
		}
		if rtt := t1.Sub(t0); best < 0 || rtt < best {
			best = rtt
			skew, uncertainty = time.Unix(0, ns).Sub(t0.Add(rtt/2)), rtt/2
		}
	}
	return skew, uncertainty, nil
}
