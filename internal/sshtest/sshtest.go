// Package sshtest gives tests "remote machines": network namespaces on one
// bridge (in a namespace of its own, nothing added to this machine's),
// each running a real OpenSSH server on its own address with a host key
// made for the test, a controller key pair whose public half every host
// accepts for root, and a known_hosts file holding every host's key. It
// needs root and Debian's openssh-server; every test removes what it made.
package sshtest

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Hosts are a test's machines.
type Hosts struct {
	t      T
	Lab    string // namespaces: hd-<Lab> (the bridge), hd-<Lab>-<host>
	Subnet string // a /24 of the lab range, e.g. "198.19.250"
	Dir    string // host keys, sshd configs and logs, each host's directory below hosts/
	// Controller is the controller's home: .ssh/id_ed25519 (its key) and
	// .ssh/known_hosts (every host's key).
	Controller string
	Hosts      map[string]*Host
	procs      []*exec.Cmd
	created    []string
}

// Host is one machine.
type Host struct {
	Name, Netns, Address string
	Dir                  string // hadrill's directory there (root's, 0700)
	HostKey              string // "ssh-ed25519 AAAA…"
	Fingerprint          string // SHA256:…
}

// Usable says why the machine cannot host these tests ("" when it can).
func Usable() string {
	if os.Geteuid() != 0 {
		return "needs root (network namespaces, sshd)"
	}
	for _, tool := range []string{"/usr/sbin/sshd", "ssh-keygen"} {
		if _, err := exec.LookPath(tool); err != nil {
			return tool + " not installed (make deps installs openssh-server)"
		}
	}
	return ""
}

// T is what Start needs of its caller: a test, or the benchmark program.
type T interface {
	Helper()
	Skip(args ...any)
	Fatalf(format string, args ...any)
	Cleanup(f func())
}

// Start makes the bridge and one host running sshd per name (at
// Subnet.11, .12, …), and removes all of it when the test ends.
func Start(t T, lab, subnet, dir string, names ...string) *Hosts {
	t.Helper()
	if why := Usable(); why != "" {
		t.Skip(why)
	}
	s := &Hosts{t: t, Lab: lab, Subnet: subnet, Dir: dir, Controller: filepath.Join(dir, "controller"), Hosts: map[string]*Host{}}
	t.Cleanup(s.close)
	if err := os.MkdirAll(filepath.Join(s.Controller, ".ssh"), 0o700); err != nil {
		t.Fatalf("%v", err)
	}
	holdPrivsep()
	t.Cleanup(releasePrivsep)
	bridge := "hd-" + lab
	s.ip("netns", "add", bridge)
	s.created = append(s.created, bridge)
	s.ip("-n", bridge, "link", "add", "br0", "type", "bridge")
	s.ip("-n", bridge, "link", "set", "br0", "up")
	key := filepath.Join(s.Controller, ".ssh", "id_ed25519")
	s.keygen(key)
	pub, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatalf("%v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "authorized_keys"), pub, 0o644); err != nil {
		t.Fatalf("%v", err)
	}
	var known []string
	for i, name := range names {
		h := s.start(name, 11+i)
		known = append(known, h.Address+" "+h.HostKey)
	}
	if err := os.WriteFile(filepath.Join(s.Controller, ".ssh", "known_hosts"), []byte(strings.Join(known, "\n")+"\n"), 0o600); err != nil {
		t.Fatalf("%v", err)
	}
	return s
}

func (s *Hosts) ip(args ...string) {
	s.t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		s.t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// Link makes the namespace hd-<Lab>-<name> with eth0 on the bridge at
// Subnet.octet (a host, or a controller's place on the network).
func (s *Hosts) Link(name string, octet int) (netns, addr string) {
	netns, addr = "hd-"+s.Lab+"-"+name, fmt.Sprintf("%s.%d", s.Subnet, octet)
	veth := fmt.Sprintf("v%d", octet)
	s.ip("netns", "add", netns)
	s.created = append(s.created, netns)
	s.ip("link", "add", veth, "netns", "hd-"+s.Lab, "type", "veth", "peer", "name", "eth0", "netns", netns)
	s.ip("-n", "hd-"+s.Lab, "link", "set", veth, "master", "br0", "up")
	s.ip("-n", netns, "addr", "add", addr+"/24", "dev", "eth0")
	s.ip("-n", netns, "link", "set", "eth0", "up")
	s.ip("-n", netns, "link", "set", "lo", "up")
	return netns, addr
}

// SecondNetwork gives each named host a second NIC, eth1, on a bridge of
// its own at subnet and the host's last octet (a network for cluster
// traffic beside the one SSH and clients use), and returns their
// addresses by host.
func (s *Hosts) SecondNetwork(subnet string, names ...string) map[string]string {
	s.t.Helper()
	bridge := "hd-" + s.Lab
	s.ip("-n", bridge, "link", "add", "br1", "type", "bridge")
	s.ip("-n", bridge, "link", "set", "br1", "up")
	out := map[string]string{}
	for _, name := range names {
		h := s.Hosts[name]
		octet := h.Address[strings.LastIndexByte(h.Address, '.')+1:]
		addr, veth := subnet+"."+octet, "c"+octet
		s.ip("link", "add", veth, "netns", bridge, "type", "veth", "peer", "name", "eth1", "netns", h.Netns)
		s.ip("-n", bridge, "link", "set", veth, "master", "br1", "up")
		s.ip("-n", h.Netns, "addr", "add", addr+"/24", "dev", "eth1")
		s.ip("-n", h.Netns, "link", "set", "eth1", "up")
		out[name] = addr
	}
	return out
}

func (s *Hosts) keygen(path string) {
	s.t.Helper()
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "hadrill-test", "-f", path).CombinedOutput(); err != nil {
		s.t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
}

func (s *Hosts) start(name string, octet int) *Host {
	t := s.t
	t.Helper()
	netns, addr := s.Link(name, octet)
	h := &Host{Name: name, Netns: netns, Address: addr, Dir: filepath.Join(s.Dir, "hosts", name)}
	if err := os.MkdirAll(h.Dir, 0o700); err != nil {
		t.Fatalf("%v", err)
	}
	key := filepath.Join(s.Dir, name+"_host_ed25519")
	s.keygen(key)
	pub, _ := os.ReadFile(key + ".pub")
	f := strings.Fields(string(pub))
	h.HostKey = f[0] + " " + f[1]
	out, err := exec.Command("ssh-keygen", "-l", "-E", "sha256", "-f", key+".pub").Output()
	if err != nil {
		t.Fatalf("%v", err)
	}
	h.Fingerprint = strings.Fields(string(out))[1]
	cfg := filepath.Join(s.Dir, name+"_sshd_config")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`ListenAddress %s:22
HostKey %s
PidFile none
AuthorizedKeysFile %s
PermitRootLogin prohibit-password
AllowUsers root
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
AcceptEnv none
`, addr, key, filepath.Join(s.Dir, "authorized_keys"))), 0o644)
	log := filepath.Join(s.Dir, name+"_sshd.log")
	c := exec.Command("ip", "netns", "exec", netns, "/usr/sbin/sshd", "-D", "-f", cfg, "-E", log)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		t.Fatalf("%v", err)
	}
	s.procs = append(s.procs, c)
	s.waitLog(log, "Server listening on "+addr)
	s.Hosts[name] = h
	return h
}

func (s *Hosts) waitLog(log, want string) {
	s.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		b, _ := os.ReadFile(log)
		if bytes.Contains(b, []byte(want)) {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: no %q within 10s\n%s", log, want, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Listen starts a TCP listener on port in a host (something else holding
// a port the lab needs) until the test ends.
func (s *Hosts) Listen(host string, port int) {
	s.t.Helper()
	h := s.Hosts[host]
	c := exec.Command("ip", "netns", "exec", h.Netns, "socat", "-u", fmt.Sprintf("TCP-LISTEN:%d,bind=0.0.0.0,reuseaddr", port), "OPEN:/dev/null")
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		s.t.Fatalf("%v", err)
	}
	s.procs = append(s.procs, c)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		out, _ := exec.Command("ip", "netns", "exec", h.Netns, "ss", "-Hltn").Output()
		if bytes.Contains(out, []byte(":"+strconv.Itoa(port)+" ")) {
			return
		}
	}
	s.t.Fatalf("nothing listens on %s:%d", host, port)
}

// Inventory is an inventory of every host (its address, its directory,
// the controller's key), with extra YAML lines under a host by name.
func (s *Hosts) Inventory(extra map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "defaults: {identity: %s, known_hosts: %s}\nhosts:\n", filepath.Join(s.Controller, ".ssh", "id_ed25519"), filepath.Join(s.Controller, ".ssh", "known_hosts"))
	for _, n := range slices.Sorted(maps.Keys(s.Hosts)) {
		h := s.Hosts[n]
		fmt.Fprintf(&b, "  %s:\n    address: %s\n    dir: %s\n", n, h.Address, h.Dir)
		for _, l := range strings.Split(extra[n], "\n") {
			if l != "" {
				b.WriteString("    " + l + "\n")
			}
		}
	}
	return b.String()
}

// close ends every process it started and removes its namespaces.
func (s *Hosts) close() {
	for _, c := range s.procs {
		if c.Process != nil {
			syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
			c.Wait()
		}
	}
	for i := len(s.created) - 1; i >= 0; i-- {
		exec.Command("ip", "netns", "del", s.created[i]).Run()
	}
}

// sshd's privilege separation directory: made when missing and removed
// when the last Hosts that needed it (tests may run at once) is closed.
var privsep struct {
	sync.Mutex
	users   int
	created bool
}

func holdPrivsep() {
	privsep.Lock()
	defer privsep.Unlock()
	if privsep.users == 0 {
		if _, err := os.Stat("/run/sshd"); os.IsNotExist(err) {
			privsep.created = os.Mkdir("/run/sshd", 0o755) == nil
		}
	}
	privsep.users++
}

func releasePrivsep() {
	privsep.Lock()
	defer privsep.Unlock()
	if privsep.users--; privsep.users == 0 && privsep.created {
		os.Remove("/run/sshd")
		privsep.created = false
	}
}
