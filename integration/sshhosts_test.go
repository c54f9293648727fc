package integration

import (
	"encoding/json"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/sshtest"
)

// sshHosts are "remote machines" for the ssh provider (sshtest: OpenSSH
// servers in network namespaces) and a controller namespace from which an
// unprivileged user runs hadrill. That user's only way into a host is its
// SSH key (hosts log it in as root); each host's directory is root's and
// unreadable to it, so nothing can bypass SSH although the "hosts" share
// this machine's file system.
// The SSH tests run in parallel (see active): each has its own hosts,
// bridge, lab names and home.
type sshHosts struct {
	*sshtest.Hosts
	e    *env
	user *user.User
}

// newSSHHosts starts sshd on each of names; lab names the namespaces.
func newSSHHosts(e *env, lab, subnet string, names ...string) *sshHosts {
	e.t.Helper()
	e.labs[lab] = true                              // its namespaces count as the env's leftovers
	if err := os.Chmod(e.home, 0o755); err != nil { // the controller user reaches its home below it
		e.t.Fatal(err)
	}
	s := &sshHosts{Hosts: sshtest.Start(e.t, lab, subnet, filepath.Join(e.home, "ssh"), names...), e: e, user: ensureUser(e.t)}
	os.Chmod(s.Dir, 0o755)
	s.Link("ctl", 250)
	s.chown(s.Controller)
	return s
}

// write puts a file into the controller user's home.
func (s *sshHosts) write(rel, text string) string {
	p := filepath.Join(s.Controller, rel)
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

// inventory writes an inventory of every host (extra: YAML lines under a
// host, by name) into the controller's home and returns its path.
func (s *sshHosts) inventory(file string, extra map[string]string) string {
	return s.write(file, s.Inventory(extra))
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
		// go-tpc beside it, as make deps puts it beside hadrill (a lab's
		// TPC-C copies it to the client host from there)
		if tpc, err := os.ReadFile(filepath.Join(filepath.Dir(bin), "go-tpc")); err == nil {
			os.WriteFile(filepath.Join(s.e.home, "go-tpc"), tpc, 0o755)
		}
	}
	c := exec.Command("ip", append([]string{"netns", "exec", "hd-" + s.Lab + "-ctl", "runuser", "-u", s.user.Username, "--", "env", "HOME=" + s.Controller, binCopy,
		"--home", filepath.Join(s.Controller, "hadrill")}, args...)...)
	c.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	c.Dir = s.Controller
	t0 := time.Now()
	r := s.e.collect(c, args)
	if d := time.Since(t0); d > 5*time.Second { // where a slow run of the suite spends its time
		s.e.t.Logf("hadrill %s: %v", strings.Join(args, " "), d.Round(100*time.Millisecond))
	}
	return r
}

// asDrill runs a drill as the controller user, tried again when it was
// refused for a load the lab could not carry then (see runDrill).
func (s *sshHosts) asDrill(args ...string) result {
	s.e.t.Helper()
	return retryRefused(s.e.t, func() result { return s.as(args...) })
}

// onHost runs argv on a host (in its namespace, as root, not over SSH) and
// returns what it printed.
func (s *sshHosts) onHost(name string, argv ...string) string {
	s.e.t.Helper()
	out, err := exec.Command("ip", append([]string{"netns", "exec", s.Hosts.Hosts[name].Netns}, argv...)...).CombinedOutput()
	if err != nil {
		s.e.t.Errorf("%s: %v: %v: %s", name, argv, err, out)
	}
	return string(out)
}

// status reads a lab's `status -o json` into v.
func (s *sshHosts) status(lab string, v any) {
	s.e.t.Helper()
	r := s.as("status", "--name", lab, "-o", "json")
	if err := json.Unmarshal([]byte(r.stdout), v); err != nil || r.code != 0 {
		s.e.t.Fatalf("status: exit %d %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
}

// val is the last line a query printed on a node of a lab (or through its
// load balancer, "lb"), and whether it ran.
func (s *sshHosts) val(lab, node, query string) (string, bool) {
	r := s.as("sql", node, "--name", lab, "-e", query)
	out := strings.TrimSpace(r.stdout)
	return out[strings.LastIndex(out, "\n")+1:], r.code == 0
}

// waitVal waits, within a time, until a query prints want on a node.
func (s *sshHosts) waitVal(lab, node, query, want string, within time.Duration) {
	s.e.t.Helper()
	for deadline := time.Now().Add(within); ; time.Sleep(250 * time.Millisecond) {
		got, ok := s.val(lab, node, query)
		if ok && got == want {
			return
		}
		if time.Now().After(deadline) {
			s.e.t.Fatalf("%s on %s: got %q, want %q", query, node, got, want)
		}
	}
}

// down removes a lab and checks that nothing of it is left on any host
// (hadrill's directory empty, no fault chain, no WAN rules or shaping)
// or on the controller; it returns what down said.
func (s *sshHosts) down(lab string) result {
	t := s.e.t
	t.Helper()
	r := s.as("down", "--name", lab)
	if r.code != 0 {
		t.Fatalf("down: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	s.gone(lab)
	return r
}

// gone checks that nothing of a lab is left on any host or on the
// controller.
func (s *sshHosts) gone(lab string) {
	t := s.e.t
	t.Helper()
	for name, h := range s.Hosts.Hosts {
		if left, _ := os.ReadDir(h.Dir); len(left) > 0 {
			t.Errorf("host %s keeps %v in hadrill's directory after down", name, left)
		}
		if out := s.onHost(name, "iptables", "-S"); strings.Contains(out, "HDFAULT") {
			t.Errorf("host %s keeps the lab's fault chain after down:\n%s", name, out)
		}
		if rules := s.onHost(name, "iptables", "-t", "mangle", "-S"); strings.Contains(rules, "HDNETEM") || strings.Contains(rules, "NFQUEUE") {
			t.Errorf("host %s keeps the lab's queueing rules:\n%s", name, rules)
		}
		if q := s.onHost(name, "tc", "qdisc", "show"); strings.Contains(q, "htb") {
			t.Errorf("host %s keeps a shaping qdisc:\n%s", name, q)
		}
	}
	if _, err := os.Stat(filepath.Join(s.Controller, "hadrill", "labs", lab)); err == nil {
		t.Errorf("the controller keeps lab %s", lab)
	}
}
