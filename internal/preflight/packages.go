// Package preflight checks the machines of an inventory before anything is
// created on them: reachable over SSH with a verified host key, root (or
// sudo), the Debian packages of each host's roles, the lab's ports free,
// the clock close to this computer's, room on the disk, the same CPU
// architecture as this hadrill (it copies itself there). Every problem of
// every host is reported at once. The judging is pure (Judge); Run gathers
// the facts over SSH and can install what is missing.
package preflight

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"
)

//go:embed packages.txt
var packagesTxt string

// Package is a Debian package and the roles of the hosts that need it.
type Package struct {
	Name  string
	Roles []string
}

// Roles a host can have.
const (
	RoleDB         = "db"
	RoleArbitrator = "arbitrator"
	RoleLB         = "lb"
	RoleLBPair     = "lb-pair"
	RoleClient     = "client"
	// RoleMonitored is every host of a lab with monitoring (its
	// node_exporter), RoleMonitoredDB a database node of one (its
	// mysqld_exporter).
	RoleMonitored   = "monitored"
	RoleMonitoredDB = "monitored-db"
	RoleLocal       = "local"
)

var knownRoles = []string{RoleDB, RoleArbitrator, RoleLB, RoleLBPair, RoleClient, RoleMonitored, RoleMonitoredDB, RoleLocal}

// Packages is the list in packages.txt, in its order.
func Packages() []Package {
	ps, err := parsePackages(packagesTxt)
	if err != nil {
		panic(err) // packages.txt is part of the binary; a test reads it
	}
	return ps
}

func parsePackages(text string) ([]Package, error) {
	var out []Package
	for i, line := range strings.Split(text, "\n") {
		if j := strings.IndexByte(line, '#'); j >= 0 {
			line = line[:j]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) < 2 {
			return nil, fmt.Errorf("packages.txt:%d: %s has no role", i+1, f[0])
		}
		for _, r := range f[1:] {
			if !slices.Contains(knownRoles, r) {
				return nil, fmt.Errorf("packages.txt:%d: unknown role %q", i+1, r)
			}
		}
		out = append(out, Package{Name: f[0], Roles: f[1:]})
	}
	return out, nil
}

// allPackages are the packages of every role a remote host can have: what
// the probe looks for, before the host's part of the lab is known.
func allPackages() []string {
	return For([]string{RoleDB, RoleArbitrator, RoleLB, RoleLBPair, RoleClient, RoleMonitored, RoleMonitoredDB})
}

// For lists the packages hosts of these roles need, in the list's order.
func For(roles []string) []string {
	var out []string
	for _, p := range Packages() {
		for _, r := range p.Roles {
			if slices.Contains(roles, r) {
				out = append(out, p.Name)
				break
			}
		}
	}
	return out
}
