package preflight

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hadrill/hadrill/internal/inventory"
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

// Run checks every host of the inventory against what it needs, all at
// once, and installs missing packages when asked.
func Run(ctx context.Context, inv *inventory.Resolved, needs map[string]Need, o Options) *Report {
	if o.Timeout == 0 {
		o.Timeout = 10 * time.Second
	}
	names := inv.Names()
	r := &Report{Inventory: inv.File, Hosts: make([]HostReport, len(names))}
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.Hosts[i] = checkHost(ctx, inv.Hosts[name], needs[name], o)
		}()
	}
	wg.Wait()
	r.OK = len(r.Problems()) == 0
	return r
}

func checkHost(ctx context.Context, h inventory.Host, need Need, o Options) HostReport {
	hr := HostReport{Name: h.Name, Target: h.String(), Need: need}
	c, err := ssh.Connect(ctx, h, o.Timeout)
	if err != nil {
		hr.Problems = append(hr.Problems, h.Name+": "+err.Error())
		return hr
	}
	defer c.Close()
	hr.Reached = true
	f, err := probe(ctx, c, need)
	if err != nil {
		hr.Problems = append(hr.Problems, h.Name+": "+err.Error())
		return hr
	}
	if o.Install && len(f.Missing) > 0 && f.UID == 0 && !f.NoDpkg {
		if o.Progress != nil {
			o.Progress("%s: installing %s", h.Name, strings.Join(f.Missing, " "))
		}
		if err := install(ctx, c, f.Missing); err != nil {
			hr.Problems = append(hr.Problems, h.Name+": installing "+strings.Join(f.Missing, " ")+": "+err.Error())
		} else {
			hr.Installed = f.Missing
		}
		if f, err = probe(ctx, c, need); err != nil {
			hr.Problems = append(hr.Problems, h.Name+": "+err.Error())
			return hr
		}
	}
	f.Skew, f.SkewError, err = clock(ctx, c)
	if err != nil {
		hr.Warnings = append(hr.Warnings, h.Name+": its clock could not be read: "+err.Error())
	}
	hr.Facts = &f
	p, w := Judge(h.Name, h.PrivateAddress, need, f, o.Arch)
	hr.Problems = append(hr.Problems, p...)
	hr.Warnings = append(hr.Warnings, w...)
	return hr
}

// probe runs the probe script on the host and reads its facts.
func probe(ctx context.Context, c *ssh.Client, need Need) (Facts, error) {
	argv := append([]string{"sh", "-s", "--", c.Host.Dir}, need.Packages...)
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
