// Package inventory maps a spec's hosts onto machines reached over SSH: an
// address, a login, how the host key is verified, an optional jump host,
// the private address cluster traffic uses and the directory hadrill owns
// there. Load is strict (unknown fields, wrong types, every problem at
// once, each naming its field); Check holds it against a plan's hosts.
package inventory

import (
	"cmp"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/spec"
)

// Defaults of a target.
const (
	DefaultPort = 22
	DefaultUser = "root"
	// DefaultDir is where hadrill keeps its binary and its labs' files on a host.
	DefaultDir = "/var/lib/hadrill"
)

// Inventory is the file a user writes.
type Inventory struct {
	// Defaults apply to every host and jump host that leaves a field out.
	Defaults Target `yaml:"defaults,omitempty"`
	// JumpHosts are bastions a host may be reached through (by name).
	JumpHosts map[string]Target `yaml:"jump_hosts,omitempty"`
	// Hosts maps each host of the spec (db1, lb, client, …) to a machine.
	Hosts map[string]Target `yaml:"hosts"`
	// VirtualIPs gives each load balancer pair of the spec (by name) the
	// address its two hosts share: an unused address of their network.
	VirtualIPs map[string]string `yaml:"virtual_ips,omitempty"`
}

// Target is how one machine is reached.
type Target struct {
	// Address is where SSH connects: an IP address or a DNS name.
	Address string `yaml:"address,omitempty"`
	Port    int    `yaml:"port,omitempty"`
	User    string `yaml:"user,omitempty"`
	// Identity is a private key file; without one, the SSH agent
	// (SSH_AUTH_SOCK) is asked.
	Identity string `yaml:"identity,omitempty"`
	// KnownHosts is the known_hosts file the host key must be in (default
	// ~/.ssh/known_hosts); Fingerprint (SHA256:…, as ssh-keygen -lf prints
	// it) pins the key instead. A host key is never trusted silently.
	KnownHosts  string `yaml:"known_hosts,omitempty"`
	Fingerprint string `yaml:"fingerprint,omitempty"`
	// Jump names a jump host the connection goes through.
	Jump string `yaml:"jump,omitempty"`
	// PrivateAddress is the host's address on the network its cluster
	// traffic uses (Galera, replication, the load balancer's checks);
	// default: Address, when that is an IP address.
	PrivateAddress string `yaml:"private_address,omitempty"`
	// ClusterAddress is the host's address on a network of its own for
	// cluster traffic (Galera, state transfers, replication), when the
	// spec has a cluster network (networks.cluster): a database host's or
	// arbitrator's second NIC.
	ClusterAddress string `yaml:"cluster_address,omitempty"`
	// Dir is the directory hadrill owns on the host (default
	// /var/lib/hadrill): its binary, and each lab's files below labs/.
	Dir string `yaml:"dir,omitempty"`
	// Sudo runs everything through `sudo -n` (default: when User is not
	// root). hadrill needs root on its hosts.
	Sudo *bool `yaml:"sudo,omitempty"`
}

// Host is a resolved target: every default applied, paths absolute.
type Host struct {
	Name           string `json:"name"`
	Address        string `json:"address"`
	Port           int    `json:"port"`
	User           string `json:"user"`
	Identity       string `json:"identity,omitempty"`
	KnownHosts     string `json:"known_hosts,omitempty"`
	Fingerprint    string `json:"fingerprint,omitempty"`
	Jump           *Host  `json:"jump,omitempty"`
	PrivateAddress string `json:"private_address,omitempty"`
	ClusterAddress string `json:"cluster_address,omitempty"`
	Dir            string `json:"dir,omitempty"`
	Sudo           bool   `json:"sudo"`
}

// Endpoint is host:port for dialing.
func (h Host) Endpoint() string { return net.JoinHostPort(h.Address, fmt.Sprint(h.Port)) }

// String names the host as ssh would: user@address:port (via jump).
func (h Host) String() string {
	s := fmt.Sprintf("%s@%s", h.User, h.Endpoint())
	if h.Jump != nil {
		s += " via " + h.Jump.String()
	}
	return s
}

// Resolved is a loaded inventory.
type Resolved struct {
	File       string            `json:"file"`
	Hosts      map[string]Host   `json:"hosts"`
	VirtualIPs map[string]string `json:"virtual_ips,omitempty"`
}

// Only is the part of the inventory that names these hosts and load
// balancer pairs: what one lab uses of an inventory several labs share
// (a study's variants, one after another on the same machines).
func (r *Resolved) Only(hosts, pairs []string) *Resolved {
	out := &Resolved{File: r.File, Hosts: map[string]Host{}}
	for _, h := range hosts {
		if t, ok := r.Hosts[h]; ok {
			out.Hosts[h] = t
		}
	}
	for _, lb := range pairs {
		if ip, ok := r.VirtualIPs[lb]; ok {
			if out.VirtualIPs == nil {
				out.VirtualIPs = map[string]string{}
			}
			out.VirtualIPs[lb] = ip
		}
	}
	return out
}

// Names lists the inventory's hosts, sorted.
func (r *Resolved) Names() []string { return slices.Sorted(maps.Keys(r.Hosts)) }

// Env is what resolving depends on outside the file: the user's home
// (for ~ and the default known_hosts) and whether an SSH agent is there.
type Env struct {
	Home  string
	Agent bool
}

// CurrentEnv reads Env from the process.
func CurrentEnv() Env {
	home, _ := os.UserHomeDir()
	return Env{Home: home, Agent: os.Getenv("SSH_AUTH_SOCK") != ""}
}

// Parse resolves an inventory's YAML (dir: where relative paths start).
func Parse(data []byte, dir, file string, env Env) (*Resolved, error) {
	var inv Inventory
	if err := spec.Strict(data, &inv, "inventory"); err != nil {
		return nil, err
	}
	r, problems := inv.resolve(dir, env, fileMode)
	if len(problems) > 0 {
		return nil, hderr.Users(problems)
	}
	r.File = file
	return r, nil
}

// fileMode is a regular file's permissions (false: no such file).
func fileMode(p string) (fs.FileMode, bool) {
	st, err := os.Stat(p)
	if err != nil || !st.Mode().IsRegular() {
		return 0, false
	}
	return st.Mode().Perm(), true
}

var (
	userRE        = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,31}$`)
	dnsRE         = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$`)
	fingerprintRE = regexp.MustCompile(`^SHA256:[A-Za-z0-9+/]{43}$`)
	// dirRE keeps a host directory to plain path characters: it is put
	// into remote commands and removed from by `down`.
	dirRE = regexp.MustCompile(`^(/[A-Za-z0-9._-]+)+$`)
)

// systemDirs are directories hadrill must never own: `down` removes what
// it made below its directory, and a mistake here would be costly.
var systemDirs = []string{"/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib64", "/proc", "/root", "/run", "/sbin",
	"/sys", "/tmp", "/usr", "/var", "/var/lib", "/var/log", "/var/tmp", "/opt", "/srv", "/mnt", "/media"}

// resolve applies defaults and checks every field; exists says whether a
// file is there (a test's stand-in for the file system).
func (inv *Inventory) resolve(dir string, env Env, mode func(string) (fs.FileMode, bool)) (*Resolved, []string) {
	exists := func(p string) bool { _, ok := mode(p); return ok }
	var problems []string
	add := func(field, format string, a ...any) {
		problems = append(problems, field+": "+fmt.Sprintf(format, a...))
	}
	path := func(p string) string {
		switch {
		case p == "":
			return ""
		case p == "~" || strings.HasPrefix(p, "~/"):
			return filepath.Join(env.Home, strings.TrimPrefix(p, "~"))
		case filepath.IsAbs(p):
			return filepath.Clean(p)
		}
		return filepath.Join(dir, p)
	}
	d := inv.Defaults
	if d.Address != "" || d.PrivateAddress != "" || d.ClusterAddress != "" || d.Jump != "" || d.Fingerprint != "" {
		add("defaults", "address, private_address, cluster_address, jump and fingerprint belong to one host, not to every host")
	}
	one := func(field, name string, t Target, jumps map[string]*Host) Host {
		h := Host{Name: name, Address: t.Address, Port: cmp.Or(t.Port, d.Port, DefaultPort), User: cmp.Or(t.User, d.User, DefaultUser),
			Identity: path(cmp.Or(t.Identity, d.Identity)), KnownHosts: path(cmp.Or(t.KnownHosts, d.KnownHosts)),
			Fingerprint: t.Fingerprint, PrivateAddress: t.PrivateAddress, ClusterAddress: t.ClusterAddress, Dir: cmp.Or(t.Dir, d.Dir, DefaultDir)}
		h.Sudo = h.User != "root"
		if s := cmp.Or(t.Sudo, d.Sudo); s != nil {
			h.Sudo = *s
		}
		switch {
		case h.Address == "":
			add(field+".address", "required: the machine's IP address or DNS name")
		case net.ParseIP(h.Address) == nil && !dnsRE.MatchString(h.Address):
			add(field+".address", "expected an IP address or a DNS name, got %q", h.Address)
		}
		if h.Port < 1 || h.Port > 65535 {
			add(field+".port", "expected 1 to 65535, got %d", h.Port)
		}
		if !userRE.MatchString(h.User) {
			add(field+".user", "expected a login name (lowercase letters, digits, _ and -), got %q", h.User)
		}
		if m, ok := mode(h.Identity); h.Identity != "" && !ok {
			add(field+".identity", "no such key file: %s", h.Identity)
		} else if ok && m&0o077 != 0 {
			add(field+".identity", "%s is open to others (mode %04o): OpenSSH ignores such a private key; chmod 600 %s", h.Identity, m, h.Identity)
		}
		if h.Identity == "" && !env.Agent {
			add(field+".identity", "required: no key file given and no SSH agent running (SSH_AUTH_SOCK is not set)")
		}
		switch {
		case h.Fingerprint != "":
			if !fingerprintRE.MatchString(h.Fingerprint) {
				add(field+".fingerprint", "expected SHA256: and 43 base64 characters, as `ssh-keygen -lf` prints a key's fingerprint, got %q", h.Fingerprint)
			}
			h.KnownHosts = ""
		case h.KnownHosts == "":
			h.KnownHosts = filepath.Join(env.Home, ".ssh", "known_hosts")
			if !exists(h.KnownHosts) {
				add(field+".known_hosts", "%s does not exist: give the host's key in a known_hosts file or its fingerprint (host keys are never trusted silently)", h.KnownHosts)
			}
		case !exists(h.KnownHosts):
			add(field+".known_hosts", "no such file: %s", h.KnownHosts)
		}
		if t.Jump != "" {
			if jumps == nil {
				add(field+".jump", "a jump host is reached directly (one hop)")
			} else if j, ok := jumps[t.Jump]; ok {
				h.Jump = j
			} else {
				add(field+".jump", "unknown jump host %q (expected one of: %s)", t.Jump, strings.Join(slices.Sorted(maps.Keys(jumps)), ", "))
			}
		}
		return h
	}
	jumps := map[string]*Host{}
	for _, name := range slices.Sorted(maps.Keys(inv.JumpHosts)) {
		t := inv.JumpHosts[name]
		field := "jump_hosts." + name
		if t.PrivateAddress != "" || t.ClusterAddress != "" || t.Dir != "" {
			add(field, "a jump host only forwards connections: private_address, cluster_address and dir do not apply")
		}
		h := one(field, name, t, nil)
		h.Dir, h.PrivateAddress, h.ClusterAddress = "", "", ""
		jumps[name] = &h
	}
	if len(inv.Hosts) == 0 {
		add("hosts", "required: every host of the spec, each with at least its address")
	}
	r := &Resolved{Hosts: map[string]Host{}}
	private := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(inv.Hosts)) {
		t := inv.Hosts[name]
		field := "hosts." + name
		h := one(field, name, t, jumps)
		if h.PrivateAddress == "" && net.ParseIP(h.Address) != nil {
			h.PrivateAddress = h.Address
		}
		switch {
		case h.PrivateAddress == "" && h.Address != "":
			add(field+".private_address", "required when address is a DNS name: the IP address cluster traffic uses")
		case h.PrivateAddress != "" && net.ParseIP(h.PrivateAddress) == nil:
			add(field+".private_address", "expected an IP address, got %q", h.PrivateAddress)
		case h.PrivateAddress != "":
			if other, ok := private[h.PrivateAddress]; ok {
				add(field+".private_address", "%s is %s's too: every host of a lab is a machine of its own (its ports would clash)", h.PrivateAddress, other)
			}
			private[h.PrivateAddress] = name
		}
		switch {
		case h.ClusterAddress == "":
		case net.ParseIP(h.ClusterAddress) == nil:
			add(field+".cluster_address", "expected an IP address, got %q", h.ClusterAddress)
		case h.ClusterAddress == h.PrivateAddress:
			add(field+".cluster_address", "%s is its private_address too: the cluster network is a second NIC's, on a network of its own", h.ClusterAddress)
		default:
			if other, ok := private[h.ClusterAddress]; ok {
				add(field+".cluster_address", "%s is %s's too: every address is one machine's", h.ClusterAddress, other)
			}
			private[h.ClusterAddress] = name
		}
		h.Dir = filepath.Clean(h.Dir)
		switch {
		case !filepath.IsAbs(h.Dir) || !dirRE.MatchString(h.Dir):
			add(field+".dir", "expected an absolute path of letters, digits, '.', '_' and '-', got %q", h.Dir)
		case slices.Contains(systemDirs, h.Dir):
			add(field+".dir", "%s is a system directory: give a directory of hadrill's own (default %s)", h.Dir, DefaultDir)
		}
		r.Hosts[name] = h
	}
	for _, name := range slices.Sorted(maps.Keys(inv.VirtualIPs)) {
		a := inv.VirtualIPs[name]
		ip := net.ParseIP(a)
		switch {
		case ip == nil || ip.To4() == nil:
			add("virtual_ips."+name, "expected an IPv4 address, got %q", a)
		case private[a] != "":
			add("virtual_ips."+name, "%s is host %s's private address: a virtual IP is an unused address of the pair's network", a, private[a])
		case ip.IsLoopback() || ip.IsMulticast() || ip.IsUnspecified() || ip.IsLinkLocalUnicast() || ip.Equal(net.IPv4bcast):
			add("virtual_ips."+name, "%s is not an address a host's network can share: a virtual IP is an unused address of the pair's network", a)
		case !ip.IsPrivate() && allPrivate(private):
			add("virtual_ips."+name, "%s is a public address, and every host's private address is in a private range: a virtual IP is an unused address of the pair's own network", a)
		default:
			if r.VirtualIPs == nil {
				r.VirtualIPs = map[string]string{}
			}
			r.VirtualIPs[name] = a
		}
	}
	return r, problems
}

// allPrivate says whether every host's private address (address → host)
// is in a private range (RFC 1918, RFC 4193).
func allPrivate(private map[string]string) bool {
	for a := range private {
		if ip := net.ParseIP(a); ip == nil || !ip.IsPrivate() {
			return false
		}
	}
	return len(private) > 0
}

// Check holds the inventory against the hosts a plan needs and its load
// balancer pairs: every one must be there, and nothing else (a name the
// spec lacks is a typo).
func (r *Resolved) Check(hosts, pairs []string) error {
	var problems []string
	for _, lb := range pairs {
		if _, ok := r.VirtualIPs[lb]; !ok {
			problems = append(problems, fmt.Sprintf("%s: virtual_ips.%s: required: load balancer %s is a pair, whose hosts share an address of their network the inventory names", r.File, lb, lb))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.VirtualIPs)) {
		if !slices.Contains(pairs, name) {
			problems = append(problems, fmt.Sprintf("%s: virtual_ips.%s: the spec has no load balancer pair of that name (its pairs: %s)", r.File, name, cmp.Or(strings.Join(pairs, ", "), "none")))
		}
	}
	for _, h := range hosts {
		if _, ok := r.Hosts[h]; !ok {
			problems = append(problems, fmt.Sprintf("%s: hosts.%s: required: the spec has a host %s, the inventory does not say where it runs", r.File, h, h))
		}
	}
	for _, name := range r.Names() {
		if !slices.Contains(hosts, name) {
			problems = append(problems, fmt.Sprintf("%s: hosts.%s: the spec has no host of that name (its hosts: %s)", r.File, name, strings.Join(hosts, ", ")))
		}
	}
	return hderr.Users(problems)
}
