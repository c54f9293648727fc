package integration

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// sshHosts are "remote machines" for the ssh provider: network namespaces
// on one bridge (in a namespace of its own), each running a real OpenSSH
// server on its own address, and a controller namespace from which an
// unprivileged user runs hadrill. That user's only way into a host is its
// SSH key (hosts log it in as root); each host's directory is root's and
// unreadable to it, so nothing can bypass SSH although the "hosts" share
// this machine's file system.
type sshHosts struct {
	e       *env
	lab     string // namespaces are hd-<lab>, hd-<lab>-<host>
	subnet  string // a /24 of the lab range: "198.19.250"
	dir     string // keys, sshd configs, host directories
	ctlHome string // the controller user's home: its key, known_hosts, inventory
	user    *user.User
	hosts   map[string]*sshHost
	procs   []*exec.Cmd
	created []string // namespaces, in creation order
}

type sshHost struct {
	name, ns, addr string
	dir            string // hadrill's directory on the host (root's, 0700)
	hostKey        string // its public host key line ("ssh-ed25519 AAAA…")
	fingerprint    string
}

// newSSHHosts starts sshd on each of names; lab names the namespaces.
func newSSHHosts(e *env, lab, subnet string, names ...string) *sshHosts {
	t := e.t
	t.Helper()
	for _, tool := range []string{"/usr/sbin/sshd", "ssh-keygen"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (make deps installs openssh-server)", tool)
		}
	}
	e.labs[lab] = true // its namespaces count as the env's leftovers
	s := &sshHosts{e: e, lab: lab, subnet: subnet, dir: filepath.Join(e.home, "ssh"), hosts: map[string]*sshHost{}, user: ensureUser(t)}
	t.Cleanup(s.close)
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(e.home, 0o755); err != nil { // the controller user reaches its home below it
		t.Fatal(err)
	}
	if _, err := os.Stat("/run/sshd"); os.IsNotExist(err) { // sshd's privilege separation directory
		os.Mkdir("/run/sshd", 0o755)
		t.Cleanup(func() { os.Remove("/run/sshd") })
	}
	bridge := "hd-" + lab
	s.ip("netns", "add", bridge)
	s.created = append(s.created, bridge)
	s.ip("-n", bridge, "link", "add", "br0", "type", "bridge")
	s.ip("-n", bridge, "link", "set", "br0", "up")
	// the controller: .250, the user's home with its key
	s.link("ctl", 250)
	s.ctlHome = filepath.Join(e.home, "controller")
	os.MkdirAll(filepath.Join(s.ctlHome, ".ssh"), 0o700)
	s.keygen(filepath.Join(s.ctlHome, ".ssh", "id_ed25519"))
	pub, err := os.ReadFile(filepath.Join(s.ctlHome, ".ssh", "id_ed25519.pub"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.dir, "authorized_keys"), pub, 0o644); err != nil {
		t.Fatal(err)
	}
	var known []string
	for i, name := range names {
		h := s.start(name, 11+i)
		known = append(known, h.addr+" "+h.hostKey)
	}
	s.write(filepath.Join(".ssh", "known_hosts"), strings.Join(known, "\n")+"\n")
	s.chown(s.ctlHome)
	return s
}

func (s *sshHosts) ip(args ...string) {
	s.e.t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		s.e.t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// link makes the namespace hd-<lab>-<name> with eth0 on the bridge at
// subnet.octet; nothing is added to this machine's own namespace.
func (s *sshHosts) link(name string, octet int) (ns, addr string) {
	ns, addr = "hd-"+s.lab+"-"+name, fmt.Sprintf("%s.%d", s.subnet, octet)
	veth := fmt.Sprintf("v%d", octet)
	s.ip("netns", "add", ns)
	s.created = append(s.created, ns)
	s.ip("link", "add", veth, "netns", "hd-"+s.lab, "type", "veth", "peer", "name", "eth0", "netns", ns)
	s.ip("-n", "hd-"+s.lab, "link", "set", veth, "master", "br0", "up")
	s.ip("-n", ns, "addr", "add", addr+"/24", "dev", "eth0")
	s.ip("-n", ns, "link", "set", "eth0", "up")
	s.ip("-n", ns, "link", "set", "lo", "up")
	return ns, addr
}

func (s *sshHosts) keygen(path string) {
	s.e.t.Helper()
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "hadrill-test", "-f", path).CombinedOutput(); err != nil {
		s.e.t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
}

// start makes a host and runs sshd in it, waiting until it listens.
func (s *sshHosts) start(name string, octet int) *sshHost {
	t := s.e.t
	t.Helper()
	ns, addr := s.link(name, octet)
	h := &sshHost{name: name, ns: ns, addr: addr, dir: filepath.Join(s.dir, "hosts", name)}
	if err := os.MkdirAll(h.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(s.dir, name+"_host_ed25519")
	s.keygen(key)
	pub, _ := os.ReadFile(key + ".pub")
	f := strings.Fields(string(pub))
	h.hostKey = f[0] + " " + f[1]
	out, err := exec.Command("ssh-keygen", "-l", "-E", "sha256", "-f", key+".pub").Output()
	if err != nil {
		t.Fatal(err)
	}
	h.fingerprint = strings.Fields(string(out))[1]
	cfg := filepath.Join(s.dir, name+"_sshd_config")
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
`, addr, key, filepath.Join(s.dir, "authorized_keys"))), 0o644)
	log := filepath.Join(s.dir, name+"_sshd.log")
	c := exec.Command("ip", "netns", "exec", ns, "/usr/sbin/sshd", "-D", "-f", cfg, "-E", log)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	s.procs = append(s.procs, c)
	s.waitLog(log, "Server listening on "+addr)
	s.hosts[name] = h
	return h
}

func (s *sshHosts) waitLog(log, want string) {
	s.e.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		b, _ := os.ReadFile(log)
		if bytes.Contains(b, []byte(want)) {
			return
		}
		if time.Now().After(deadline) {
			s.e.t.Fatalf("%s: no %q within 10s\n%s", log, want, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// listen starts a TCP listener on port in host's namespace (something
// else holding a port the lab needs).
func (s *sshHosts) listen(host string, port int) {
	h := s.hosts[host]
	c := exec.Command("ip", "netns", "exec", h.ns, "socat", "-u", fmt.Sprintf("TCP-LISTEN:%d,bind=0.0.0.0,reuseaddr", port), "OPEN:/dev/null")
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		s.e.t.Fatal(err)
	}
	s.procs = append(s.procs, c)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		out, _ := exec.Command("ip", "netns", "exec", h.ns, "ss", "-Hltn").Output()
		if bytes.Contains(out, []byte(":"+strconv.Itoa(port)+" ")) {
			return
		}
	}
	s.e.t.Fatalf("nothing listens on %s:%d", host, port)
}

// write puts a file into the controller user's home.
func (s *sshHosts) write(rel, text string) string {
	p := filepath.Join(s.ctlHome, rel)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		s.e.t.Fatal(err)
	}
	s.chown(p)
	return p
}

func (s *sshHosts) chown(path string) {
	uid, _ := strconv.Atoi(s.user.Uid)
	gid, _ := strconv.Atoi(s.user.Gid)
	filepath.Walk(path, func(p string, _ os.FileInfo, _ error) error { return os.Chown(p, uid, gid) })
}

// inventory writes an inventory of every host (extra: YAML lines added
// under a host, by name) and returns its path.
func (s *sshHosts) inventory(file string, extra map[string]string) string {
	var b strings.Builder
	b.WriteString("defaults: {identity: ~/.ssh/id_ed25519}\nhosts:\n")
	names := make([]string, 0, len(s.hosts))
	for n := range s.hosts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		h := s.hosts[n]
		fmt.Fprintf(&b, "  %s:\n    address: %s\n    dir: %s\n", n, h.addr, h.dir)
		for _, l := range strings.Split(extra[n], "\n") {
			if l != "" {
				b.WriteString("    " + l + "\n")
			}
		}
	}
	return s.write(file, b.String())
}

// as runs hadrill as the controller user in the controller's namespace.
func (s *sshHosts) as(args ...string) result {
	s.e.t.Helper()
	binCopy := filepath.Join(s.e.home, "hadrill-ctl")
	if _, err := os.Stat(binCopy); err != nil {
		data, err := os.ReadFile(bin)
		if err != nil {
			s.e.t.Fatal(err)
		}
		os.WriteFile(binCopy, data, 0o755)
	}
	c := exec.Command("ip", append([]string{"netns", "exec", "hd-" + s.lab + "-ctl", "runuser", "-u", s.user.Username, "--", "env", "HOME=" + s.ctlHome, binCopy,
		"--home", filepath.Join(s.ctlHome, "hadrill")}, args...)...)
	c.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + s.ctlHome}
	c.Dir = s.ctlHome
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	code := 0
	if x, ok := err.(*exec.ExitError); ok {
		code = x.ExitCode()
	} else if err != nil {
		s.e.t.Fatalf("hadrill %v: %v", args, err)
	}
	return result{out.String(), errb.String(), code}
}

// close ends every process the hosts run and removes their namespaces.
func (s *sshHosts) close() {
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
