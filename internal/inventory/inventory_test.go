package inventory

import (
	"encoding/json"
	"io/fs"
	"strings"
	"testing"

	"github.com/hadrill/hadrill/internal/golden"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/spec"
)

var env = Env{Home: "/home/ops"}

// files that exist in these tests
var files = map[string]fs.FileMode{"/home/ops/.ssh/known_hosts": 0o644, "/home/ops/.ssh/id_ed25519": 0o600, "/etc/hadrill/lab.key": 0o400, "/inv/keys/db": 0o600,
	"/inv/keys/open": 0o644}

func parse(t *testing.T, y string, env Env) (*Resolved, []string) {
	t.Helper()
	var inv Inventory
	if err := spec.Strict([]byte(y), &inv, "inventory"); err != nil {
		return nil, err.(*hderr.UserError).Problems
	}
	return inv.resolve("/inv", env, func(p string) (fs.FileMode, bool) { m, ok := files[p]; return m, ok })
}

func TestResolve(t *testing.T) {
	r, problems := parse(t, `
defaults: {user: ops, identity: ~/.ssh/id_ed25519, dir: /data/hadrill}
jump_hosts:
  bastion: {address: bastion.example.net, port: 2222, fingerprint: "SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}
hosts:
  db1: {address: 203.0.113.11, private_address: 10.1.0.11, jump: bastion}
  db2: {address: db2.example.net, private_address: 10.1.0.12, user: root, identity: keys/db}
  lb: {address: 203.0.113.20, sudo: false}
  client: {address: "2001:db8::30", port: 2200, known_hosts: /home/ops/.ssh/known_hosts}
`, env)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	b, _ := json.MarshalIndent(r, "", "  ")
	golden.Check(t, "resolved.json", append(b, '\n'))
	if got := r.Hosts["db1"].String(); got != "ops@203.0.113.11:22 via ops@bastion.example.net:2222" {
		t.Errorf("db1: %s", got)
	}
	if got := r.Hosts["client"].Endpoint(); got != "[2001:db8::30]:2200" {
		t.Errorf("client endpoint: %s", got)
	}
	if err := r.Check([]string{"client", "db1", "db2", "db3", "lb"}, nil); err == nil || !strings.Contains(err.Error(), "hosts.db3: required") {
		t.Errorf("missing db3: %v", err)
	}
	if err := r.Check([]string{"client", "db1", "lb"}, nil); err == nil || !strings.Contains(err.Error(), "hosts.db2: the spec has no host of that name (its hosts: client, db1, lb)") {
		t.Errorf("extra db2: %v", err)
	}
	if err := r.Check([]string{"client", "db1", "db2", "lb"}, nil); err != nil {
		t.Errorf("exact: %v", err)
	}
	if err := r.Check([]string{"client", "db1", "db2", "lb"}, []string{"lb"}); err == nil || !strings.Contains(err.Error(), "virtual_ips.lb: required: load balancer lb is a pair") {
		t.Errorf("a pair without its virtual IP: %v", err)
	}
	r.VirtualIPs = map[string]string{"front": "10.1.0.100"}
	if err := r.Check([]string{"client", "db1", "db2", "lb"}, nil); err == nil || !strings.Contains(err.Error(), "virtual_ips.front: the spec has no load balancer pair of that name (its pairs: none)") {
		t.Errorf("a virtual IP of no pair: %v", err)
	}
}

func TestResolveRefuses(t *testing.T) {
	cases := []struct {
		name, yaml string
		env        Env
		want       []string
	}{
		{"empty", "{}", env, []string{"hosts: required"}},
		{"unknown field", "hosts: {db1: {address: 10.0.0.1, adress: x}}", env, []string{"hosts.db1.adress: unknown field"}},
		{"wrong type", "hosts: {db1: {address: 10.0.0.1, port: ssh}}", env, []string{"hosts.db1.port: expected an integer"}},
		{"no address", "hosts: {db1: {port: 22}}", env, []string{"hosts.db1.address: required"}},
		{"bad address", "hosts: {db1: {address: 'a b'}}", env, []string{"hosts.db1.address: expected an IP address or a DNS name"}},
		{"bad port", "hosts: {db1: {address: 10.0.0.1, port: 70000}}", env, []string{"hosts.db1.port: expected 1 to 65535, got 70000"}},
		{"bad user", "hosts: {db1: {address: 10.0.0.1, user: 'root;rm'}}", env, []string{"hosts.db1.user: expected a login name"}},
		{"no key, no agent", "hosts: {db1: {address: 10.0.0.1}}", Env{Home: "/home/ops"}, []string{"hosts.db1.identity: required: no key file given and no SSH agent"}},
		{"agent is enough", "hosts: {db1: {address: 10.0.0.1}}", Env{Home: "/home/ops", Agent: true}, nil},
		{"missing key file", "hosts: {db1: {address: 10.0.0.1, identity: nokey}}", env, []string{"hosts.db1.identity: no such key file: /inv/nokey"}},
		{"no known_hosts", "hosts: {db1: {address: 10.0.0.1, identity: /etc/hadrill/lab.key}}", Env{Home: "/home/new"},
			[]string{"hosts.db1.known_hosts: /home/new/.ssh/known_hosts does not exist: give the host's key in a known_hosts file or its fingerprint (host keys are never trusted silently)"}},
		{"a fingerprint instead", "hosts: {db1: {address: 10.0.0.1, identity: /etc/hadrill/lab.key, fingerprint: 'SHA256:BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB'}}", Env{Home: "/home/new"}, nil},
		{"bad fingerprint", "hosts: {db1: {address: 10.0.0.1, identity: /etc/hadrill/lab.key, fingerprint: 'MD5:aa:bb'}}", env, []string{"hosts.db1.fingerprint: expected SHA256:"}},
		{"unknown jump", "hosts: {db1: {address: 10.0.0.1, identity: /etc/hadrill/lab.key, jump: bast}}", env, []string{`hosts.db1.jump: unknown jump host "bast" (expected one of: )`}},
		{"jump of a jump", "jump_hosts: {a: {address: 10.0.0.9, identity: /etc/hadrill/lab.key, jump: b}, b: {address: 10.0.0.8, identity: /etc/hadrill/lab.key}}\nhosts: {db1: {address: 10.0.0.1, identity: /etc/hadrill/lab.key, jump: a}}", env,
			[]string{"jump_hosts.a.jump: a jump host is reached directly (one hop)"}},
		{"name needs a private address", "hosts: {db1: {address: db1.example.net, identity: /etc/hadrill/lab.key}}", env, []string{"hosts.db1.private_address: required when address is a DNS name"}},
		{"two hosts, one machine", "defaults: {identity: /etc/hadrill/lab.key}\nhosts: {db1: {address: 10.0.0.1}, db2: {address: 10.0.0.1}}", env,
			[]string{"hosts.db2.private_address: 10.0.0.1 is db1's too"}},
		{"host fields in defaults", "defaults: {address: 10.0.0.1, identity: /etc/hadrill/lab.key}\nhosts: {db1: {address: 10.0.0.2}}", env, []string{"defaults: address, private_address, cluster_address, jump and fingerprint belong to one host"}},
		{"cluster addresses", "defaults: {identity: /etc/hadrill/lab.key}\nhosts: {db1: {address: 10.0.0.1, cluster_address: 10.9.0.1}, db2: {address: 10.0.0.2, cluster_address: 10.9.0.2}}", env, nil},
		{"bad cluster addresses", "defaults: {identity: /etc/hadrill/lab.key, cluster_address: 10.9.0.9}\njump_hosts: {b: {address: 10.0.0.9, cluster_address: 10.9.0.8}}\n" +
			"hosts: {db1: {address: 10.0.0.1, cluster_address: x}, db2: {address: 10.0.0.2, cluster_address: 10.0.0.2}, db3: {address: 10.0.0.3, cluster_address: 10.0.0.1}}", env,
			[]string{"defaults: address, private_address, cluster_address", "jump_hosts.b: a jump host only forwards connections: private_address, cluster_address and dir do not apply",
				`hosts.db1.cluster_address: expected an IP address, got "x"`, "hosts.db2.cluster_address: 10.0.0.2 is its private_address too",
				"hosts.db3.cluster_address: 10.0.0.1 is db1's too"}},
		{"system dir", "hosts: {db1: {address: 10.0.0.1, identity: /etc/hadrill/lab.key, dir: /var/lib/}}", env, []string{"hosts.db1.dir: /var/lib is a system directory"}},
		{"root dir", "hosts: {db1: {address: 10.0.0.1, identity: /etc/hadrill/lab.key, dir: /}}", env, []string{"hosts.db1.dir: expected an absolute path"}},
		{"relative dir", "hosts: {db1: {address: 10.0.0.1, identity: /etc/hadrill/lab.key, dir: hadrill}}", env, []string{"hosts.db1.dir: expected an absolute path"}},
		{"dir with a space", "hosts: {db1: {address: 10.0.0.1, identity: /etc/hadrill/lab.key, dir: '/srv/my lab'}}", env, []string{"hosts.db1.dir: expected an absolute path"}},
		{"a virtual IP", "hosts: {lb1: {address: 10.0.0.1, identity: /etc/hadrill/lab.key}}\nvirtual_ips: {lb: 10.0.0.100}", env, nil},
		{"bad virtual IPs", "hosts: {lb1: {address: 10.0.0.1, identity: /etc/hadrill/lab.key}}\nvirtual_ips: {lb: 10.0.0.1, front: 'fe80::1', back: x}", env,
			[]string{"virtual_ips.lb: 10.0.0.1 is host lb1's private address", `virtual_ips.front: expected an IPv4 address, got "fe80::1"`, `virtual_ips.back: expected an IPv4 address, got "x"`}},
		{"virtual IPs no network of the hosts can share", "hosts: {lb1: {address: 10.0.0.1, identity: /etc/hadrill/lab.key}}\nvirtual_ips: {lb: 8.8.4.4, front: 127.0.0.5, back: 224.0.0.18, side: 169.254.1.1}", env,
			[]string{"virtual_ips.lb: 8.8.4.4 is a public address, and every host's private address is in a private range", "virtual_ips.front: 127.0.0.5 is not an address",
				"virtual_ips.back: 224.0.0.18 is not an address", "virtual_ips.side: 169.254.1.1 is not an address"}},
		{"a host given twice", "hosts:\n  db1: {address: 10.0.0.1, identity: /etc/hadrill/lab.key}\n  db1: {address: 10.0.0.2, identity: /etc/hadrill/lab.key}", env,
			[]string{"hosts.db1: given twice (lines 2 and 3)"}},
		{"a private key open to others", "hosts: {db1: {address: 10.0.0.1, identity: keys/open}}", env,
			[]string{"hosts.db1.identity: /inv/keys/open is open to others (mode 0644): OpenSSH ignores such a private key; chmod 600 /inv/keys/open"}},
		{"every problem at once", "hosts: {db1: {port: 0, user: X}, db2: {address: 'x y', identity: nokey}}", env,
			[]string{"hosts.db1.address: required", "hosts.db1.user: expected", "hosts.db2.address: expected", "hosts.db2.identity: no such key file"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, problems := parse(t, c.yaml, c.env)
			if len(c.want) == 0 && len(problems) > 0 {
				t.Fatalf("refused: %v", problems)
			}
			all := strings.Join(problems, "\n")
			for _, w := range c.want {
				if !strings.Contains(all, w) {
					t.Errorf("want a problem %q, got:\n%s", w, all)
				}
			}
		})
	}
}
