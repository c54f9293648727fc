package study

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hadrill/hadrill/internal/golden"
	"github.com/hadrill/hadrill/internal/inventory"
)

// On remote hosts every embedded study either runs, saying what of each
// variant its hosts stand in for, or is refused for what would make it
// meaningless there.
func TestStudiesOnHosts(t *testing.T) {
	var b strings.Builder
	for _, n := range Names() {
		s, err := Embedded(n)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "== %s\n", n)
		if problems := s.OnHosts(); len(problems) > 0 {
			for _, p := range problems {
				fmt.Fprintf(&b, "refused: %s\n", p)
			}
			continue
		}
		cp := *s
		cp.Variants = append([]Variant(nil), s.Variants...)
		var names []string
		for _, v := range s.Variants {
			names = append(names, v.Name)
		}
		if _, err := newPlacement(&cp, names, Options{Inventory: &inventory.Resolved{File: "hosts.yaml", Hosts: hostsOf(t, s)}}, &Result{Labs: map[string]string{}}); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		fmt.Fprintf(&b, "runs: %s\n", hostsNote(&cp, names, "hosts.yaml"))
		for _, v := range cp.Variants {
			for _, e := range v.NotEmulated {
				fmt.Fprintf(&b, "  %s: %s = %s\n", v.Name, e.Path, e.Value)
			}
		}
	}
	golden.Check(t, "onhosts", []byte(b.String()))
}

func hostsOf(t *testing.T, s *Study) map[string]inventory.Host {
	t.Helper()
	out := map[string]inventory.Host{}
	for _, v := range s.Variants {
		sp, err := v.Spec()
		if err != nil {
			t.Fatal(err)
		}
		sp.DropEmulated()
		for _, c := range sp.Clusters {
			for j := 1; j <= c.NodeCount(); j++ {
				out[fmt.Sprintf("%s%d", c.Name, j)] = inventory.Host{}
			}
		}
		for _, lb := range sp.LoadBalancers {
			out[lb.Name] = inventory.Host{}
		}
		if sp.Client != nil {
			out[sp.Client.Name] = inventory.Host{}
		}
	}
	return out
}
