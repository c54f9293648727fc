package local

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/netns"
	"github.com/hadrill/hadrill/internal/provider"
)

// OwnerDir records which lab directory owns a lab's namespaces. Namespace
// names are machine-wide while labs live in a home, so two homes may use
// the same lab name; the record (in /run, which lives exactly as long as the
// namespaces do) keeps one from adopting or removing the other's hosts.
var OwnerDir = "/run/hadrill/labs"

func (n *Netns) ownerFile() string { return filepath.Join(OwnerDir, n.p.Lab) }

func (n *Netns) owner() string {
	b, err := os.ReadFile(n.ownerFile())
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Claim makes this lab the owner of its namespace names, or says who is.
func (n *Netns) Claim() error {
	switch owner := n.owner(); {
	case owner == n.p.Dir:
		return nil
	case owner != "" && n.stale(owner):
		// a record of a lab whose directory and namespaces are both gone
		// (removed by hand): nothing of it is left to protect
	case owner != "":
		return hderr.User("--name: lab name %q is in use on this machine by the lab in %s (network namespaces are machine-wide); choose another --name",
			n.p.Lab, owner)
	}
	if existing := n.existing(); len(existing) > 0 {
		return hderr.User("--name: network namespaces %s exist but belong to no lab; if they are left from an earlier lab, remove them with `hadrill down --name %s`",
			strings.Join(existing, ", "), n.p.Lab)
	}
	if err := os.MkdirAll(OwnerDir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(n.ownerFile(), []byte(n.p.Dir+"\n"), 0o644)
}

// stale reports whether a claim by the lab in dir is left over: that lab's
// directory is gone and no namespace of this name exists.
func (n *Netns) stale(dir string) bool {
	_, err := os.Stat(dir)
	return errors.Is(err, os.ErrNotExist) && len(n.existing()) == 0
}

// mine reports whether teardown may touch the lab's namespaces: they are
// recorded as this lab's, or recorded as no one's.
func (n *Netns) mine() error {
	if owner := n.owner(); owner != "" && owner != n.p.Dir {
		return fmt.Errorf("namespaces hd-%s*: %w (%s); not touching them", n.p.Lab, provider.ErrForeign, owner)
	}
	return nil
}

func (n *Netns) release() error {
	err := os.Remove(n.ownerFile())
	if errors.Is(err, os.ErrNotExist) {
		err = nil
	}
	_ = os.Remove(OwnerDir)               // only when empty
	_ = os.Remove(filepath.Dir(OwnerDir)) // likewise
	return err
}

// existing lists the lab's namespaces that exist now.
func (n *Netns) existing() []string {
	var out []string
	if netns.Exists(n.p.Netns) {
		out = append(out, n.p.Netns)
	}
	return append(out, netns.List(n.p.Netns+"-")...)
}
