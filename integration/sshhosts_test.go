package integration

import (
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
