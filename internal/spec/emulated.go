package spec

import (
	"fmt"
	"sort"
	"strings"
)

// Emulated is a setting that hadrill emulates on this computer only (a
// host's machine, a node's disks, the NICs): on remote hosts each host is
// the machine it is, with its own disks and NICs.
type Emulated struct {
	Path  string `json:"path"`  // clusters[0].storage
	Value string `json:"value"` // as the spec gives it, to compare and to show
}

// DropEmulated removes from the spec every setting emulated on this
// computer only and returns them, in field order: what the spec asks of
// its hosts that remote hosts cannot be made to be. The machine and disk
// catalogues go too (nothing names them any more).
func (s *Spec) DropEmulated() []Emulated {
	var out []Emulated
	add := func(path string, v any) {
		out = append(out, Emulated{Path: path, Value: fmt.Sprint(v)})
	}
	if s.Networks != nil {
		add("networks", networksString(s.Networks))
		s.Networks = nil
	}
	for i := range s.Clusters {
		c := &s.Clusters[i]
		if c.Machine != "" {
			add(fmt.Sprintf("clusters[%d].machine", i), c.Machine)
			c.Machine = ""
		}
		if len(c.NodeMachines) > 0 {
			var nodes []string
			for n := range c.NodeMachines {
				nodes = append(nodes, n)
			}
			sort.Strings(nodes)
			for _, n := range nodes {
				add(fmt.Sprintf("clusters[%d].node_machines.%s", i, n), c.NodeMachines[n])
			}
			c.NodeMachines = nil
		}
		if c.Storage != nil {
			add(fmt.Sprintf("clusters[%d].storage", i), storageString(c.Storage))
			c.Storage = nil
		}
		if a := c.Arbitrator; a != nil && a.Machine != "" {
			add(fmt.Sprintf("clusters[%d].arbitrator.machine", i), a.Machine)
			a.Machine = ""
		}
	}
	for i := range s.LoadBalancers {
		if lb := &s.LoadBalancers[i]; lb.Machine != "" {
			add(fmt.Sprintf("load_balancers[%d].machine", i), lb.Machine)
			lb.Machine = ""
		}
	}
	if s.Client != nil && s.Client.Machine != "" {
		add("client.machine", s.Client.Machine)
		s.Client.Machine = ""
	}
	s.Machines, s.Disks = nil, nil
	return out
}

func networksString(n *Networks) string {
	str := func(x *Network) string {
		if x == nil {
			return "none"
		}
		if x.Bandwidth == "" {
			return "unlimited"
		}
		return x.Bandwidth
	}
	return fmt.Sprintf("application %s, cluster %s", str(n.Application), str(n.Cluster))
}

func storageString(st *Storage) string {
	s := ""
	for i, v := range st.Volumes {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s: %d× %s", v.Name, v.Disks(), v.Disk)
		var opts []string
		for _, o := range []struct{ k, v string }{{"fs", v.FS}, {"stripe", v.Stripe}, {"allocation unit", v.AllocationUnit}} {
			if o.v != "" {
				opts = append(opts, o.k+" "+o.v)
			}
		}
		if len(opts) > 0 {
			s += " (" + strings.Join(opts, ", ") + ")"
		}
	}
	datadir, redo, binlog, tmpdir := st.Placement()
	return fmt.Sprintf("%s; datadir on %s, redo on %s, binlog on %s, tmpdir on %s", s, datadir, redo, binlog, tmpdir)
}
