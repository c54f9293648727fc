package integration

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSSHPreflight: galera3's five hosts as sshd in namespaces, checked
// over SSH by an unprivileged controller. All well: exit 0, every host
// reached (one by a pinned fingerprint), its facts read. Then every kind
// of trouble at once (nothing on the port, a changed host key, an unknown
// one, a login refused, a port taken): exit 2 naming each, nothing
// created on any host. A bad inventory is refused before any connection.
func TestSSHPreflight(t *testing.T) {
	t.Parallel() // see active
	e := newEnv(t)
	s := newSSHHosts(e, "itssh", "198.19.249", "db1", "db2", "db3", "lb", "client")
	if out, err := exec.Command("runuser", "-u", s.user.Username, "--", "ls", s.Hosts.Hosts["db1"].Dir).CombinedOutput(); err == nil {
		t.Fatalf("the controller user reads a host's directory: %s", out)
	}
	good := s.inventory("hosts.yaml", map[string]string{"lb": "fingerprint: " + s.Hosts.Hosts["lb"].Fingerprint})
	r := s.as("preflight", "--preset", "galera3", "--inventory", good, "-o", "json")
	var rep struct {
		OK    bool
		Hosts []struct {
			Name, Target string
			Reached      bool
			Need         struct{ Roles []string }
			Facts        *struct {
				UID       int
				Arch      string
				FreeBytes int64 `json:"free_bytes"`
				Skew      int64 `json:"skew_ns"`
			}
			Problems, Warnings []string
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != 0 || !rep.OK || len(rep.Hosts) != 5 {
		t.Fatalf("preflight: exit %d, %v\n%s\n%s", r.code, err, r.stdout, r.stderr)
	}
	for _, h := range rep.Hosts {
		if !h.Reached || h.Facts == nil || h.Facts.UID != 0 || h.Facts.FreeBytes == 0 || h.Facts.Skew > 1e8 || h.Facts.Skew < -1e8 {
			t.Errorf("%s: %+v", h.Name, h)
		}
		t.Logf("%s %s %v: %+v %v", h.Name, h.Target, h.Need.Roles, *h.Facts, h.Warnings)
	}
	if r := s.as("preflight", "--preset", "galera3", "--inventory", good); r.code != 0 || strings.Count(r.stdout, " ok ") != 5 {
		t.Errorf("text: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	} else {
		t.Logf("preflight:\n%s", r.stdout)
	}
	if r := s.as("validate", "--inventory", good, e.writeSpec("g3.yaml", "name: g3\nclusters: [{name: db, nodes: 3}]\nload_balancers: [{name: lb, cluster: db}]\nclient: {name: client}\n")); r.code != 0 {
		t.Errorf("validate --inventory: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// every kind of trouble, all reported by one run
	s.Listen("db2", 4567)
	s.write("other_known_hosts", s.Hosts.Hosts["db1"].Address+" "+s.Hosts.Hosts["db1"].HostKey+"\n"+s.Hosts.Hosts["db3"].Address+" "+s.Hosts.Hosts["db1"].HostKey+"\n")
	s.write("empty_known_hosts", "")
	bad := s.inventory("bad.yaml", map[string]string{
		"db1":    "port: 2222",
		"db3":    "known_hosts: other_known_hosts",
		"lb":     "known_hosts: empty_known_hosts",
		"client": "user: nobody",
	})
	r = s.as("preflight", "--preset", "galera3", "--inventory", bad)
	t.Logf("troubled preflight:\n%s%s", r.stdout, r.stderr)
	if r.code != 2 {
		t.Fatalf("troubled preflight: exit %d, want 2\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"db1: cannot reach " + s.Hosts.Hosts["db1"].Address + ":2222: connection refused",
		"db2: port 4567 is taken (something listens on 0.0.0.0:4567)",
		"db3: " + s.Hosts.Hosts["db3"].Address + ":22: its host key " + s.Hosts.Hosts["db3"].Fingerprint + " (ssh-ed25519) is not the one known for it",
		"lb: " + s.Hosts.Hosts["lb"].Address + ":22: its host key " + s.Hosts.Hosts["lb"].Fingerprint + " (ssh-ed25519) is not in",
		"client: " + s.Hosts.Hosts["client"].Address + ":22 refused the login as nobody",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("want %q in\n%s", want, r.stderr)
		}
	}
	// a host not reached still has its part of the lab said (the plan is built from the inventory's addresses)
	if !regexp.MustCompile(`(?m)^\s+db1\s+\S+\s+db\s+1 problem\(s\)\s+not reached$`).MatchString(r.stdout) ||
		!regexp.MustCompile(`(?m)^\s+lb\s+\S+\s+lb\s+1 problem\(s\)`).MatchString(r.stdout) {
		t.Errorf("the roles of hosts not reached are not shown:\n%s", r.stdout)
	}
	for _, h := range s.Hosts.Hosts {
		if out, _ := exec.Command("ls", "-A", h.Dir).Output(); len(out) > 0 {
			t.Errorf("preflight created %s on %s", out, h.Name)
		}
	}

	// a bad inventory: every problem at once, no connection
	incomplete := s.write("incomplete.yaml", "hosts:\n  db1: {address: "+s.Hosts.Hosts["db1"].Address+", identity: ~/.ssh/id_ed25519}\n  db9: {address: 'not an address'}\n")
	r = s.as("preflight", "--preset", "galera3", "--inventory", incomplete)
	if r.code != 2 || !strings.Contains(r.stderr, "hosts.db9.address: expected an IP address or a DNS name") || !strings.Contains(r.stderr, incomplete) {
		t.Errorf("bad inventory: exit %d\n%s", r.code, r.stderr)
	}
	missing := s.write("missing.yaml", "defaults: {identity: ~/.ssh/id_ed25519}\nhosts:\n  db1: {address: "+s.Hosts.Hosts["db1"].Address+"}\n  db9: {address: 198.19.250.99}\n")
	r = s.as("preflight", "--preset", "galera3", "--inventory", missing)
	for _, want := range []string{"hosts.db2: required", "hosts.lb: required", "hosts.client: required", "hosts.db9: the spec has no host of that name"} {
		if r.code != 2 || !strings.Contains(r.stderr, want) {
			t.Errorf("incomplete inventory: exit %d, want %q\n%s", r.code, want, r.stderr)
		}
	}
	// a private key others may read, as OpenSSH refuses it
	key, err := os.ReadFile(filepath.Join(s.Controller, ".ssh", "id_ed25519"))
	if err != nil {
		t.Fatal(err)
	}
	openKey := s.write("open_key", string(key))
	if err := os.Chmod(openKey, 0o644); err != nil {
		t.Fatal(err)
	}
	openInv := s.write("open.yaml", "defaults: {identity: "+openKey+"}\nhosts:\n  db1: {address: "+s.Hosts.Hosts["db1"].Address+"}\n")
	if r := s.as("validate", "--inventory", openInv, e.writeSpec("one.yaml", "name: one\nclusters: [{name: db, kind: standalone}]\n")); r.code != 2 ||
		!strings.Contains(r.stderr, "hosts.db1.identity: "+openKey+" is open to others (mode 0644): OpenSSH ignores such a private key") {
		t.Errorf("a key open to others: exit %d\n%s", r.code, r.stderr)
	}
	if r := s.as("preflight", "--preset", "galera3"); r.code != 2 || !strings.Contains(r.stderr, "--inventory: required") {
		t.Errorf("no inventory: exit %d\n%s", r.code, r.stderr)
	}
}
