package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hadrill/hadrill/internal/lb"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
)

func (cli *app) planCmd() *cobra.Command {
	var preset, file string
	c := &cobra.Command{
		Use:   "plan [--preset P | -f FILE] [--name LAB]",
		Short: "Print what `up` would create (hosts, addresses, paths, rendered my.cnf) without creating anything",
		Args:  args(0, 0, "no arguments (use --preset or -f)"),
		RunE: func(*cobra.Command, []string) error {
			s, name, _, err := cli.loadSpec(preset, file)
			if err != nil {
				return err
			}
			h, err := cli.home()
			if err != nil {
				return err
			}
			p, err := plan.Build(s, name, h, cli.machine())
			if err != nil {
				return err
			}
			shown, err := planShown(p)
			if err != nil {
				return err
			}
			return cli.emit(shown, func() { printPlan(os.Stdout, p) })
		},
	}
	c.Flags().StringVar(&preset, "preset", "", "embedded topology")
	c.Flags().StringVarP(&file, "file", "f", "", "topology spec file (YAML)")
	return c
}

// shownPlan is a plan as plan -o json prints it: its spec under the file's
// own keys (spec.Fields), not the Go names a lab's record stores it under.
type shownPlan struct {
	*plan.Plan
	Spec map[string]any `json:"spec"`
}

func planShown(p *plan.Plan) (*shownPlan, error) {
	fields, err := spec.Fields(p.Spec)
	if err != nil {
		return nil, err
	}
	return &shownPlan{Plan: p, Spec: fields}, nil
}

// printPlan writes what up would create: the hosts, volumes, virtual IPs,
// replication and fault domains, then every configuration file.
func printPlan(out io.Writer, p *plan.Plan) {
	printPlanHosts(out, p)
	printPlanLayout(out, p)
	for _, w := range p.Warnings {
		warnf("warning: %s", w)
	}
	printPlanConfigs(out, p)
}

// printPlanHosts writes the lab's hosts, a line each (and their NICs).
func printPlanHosts(out io.Writer, p *plan.Plan) {
	fmt.Fprintf(out, "lab %s: %s mode, network %s, files in %s\n", p.Lab, p.Mode, p.Network, p.Dir)
	for _, host := range p.Hosts {
		machine := ""
		if host.Machine != nil {
			machine = "machine " + host.Machine.String()
		}
		fmt.Fprintf(out, "  %-8s %-10s %-8s %-15s %-18s %s\n", host.Name, host.Role, host.Region, host.Address, host.Netns, machine)
		if len(host.NICs) > 1 || (len(host.NICs) == 1 && host.NICs[0].RateBps > 0) {
			var nics []string
			for _, c := range host.NICs {
				nics = append(nics, c.String())
			}
			fmt.Fprintf(out, "  %-8s NICs: %s\n", host.Name, strings.Join(nics, ", "))
		}
	}
}

// printPlanLayout writes the volumes, virtual IPs, replication and fault
// domains.
func printPlanLayout(out io.Writer, p *plan.Plan) {
	for _, n := range p.Nodes {
		for _, v := range n.Volumes {
			fmt.Fprintf(out, "  %-8s %s volume: %s, mounted at %s\n", n.Name, v.Name, v, v.Mount)
		}
	}
	for _, lb := range p.LoadBalancers {
		if lb.VirtualIP {
			fmt.Fprintf(out, "  %-8s virtual IP %s, held by one of %s, %s (keepalived)\n", lb.Name, lb.Address, lb.Instances[0].Host, lb.Instances[1].Host)
		}
	}
	for _, c := range p.Clusters {
		if c.Kind == spec.KindPrimary {
			how := "manual (`hadrill promote`)"
			if c.AutoFailover {
				how = fmt.Sprintf("auto (the keeper promotes the replica that has everything once the primary is out of reach for failover_after %v, or its server is gone; failover_max_lag %v)", c.FailoverAfter, c.FailoverMaxLag)
			}
			fmt.Fprintf(out, "  %-8s %s replication, primary %s, failover %s\n", c.Name, c.Mode, c.Primary, how)
		}
	}
	for _, h := range p.Hosts {
		if h.FaultDomain != h.Name {
			fmt.Fprintf(out, "  %-8s fault domain %s\n", h.Name, h.FaultDomain)
		}
	}
}

// printPlanConfigs writes every node's and load balancer's configuration.
func printPlanConfigs(out io.Writer, p *plan.Plan) {
	for _, n := range p.Nodes {
		fmt.Fprintf(out, "\n# %s\n%s", n.ConfigFile, n.Config)
	}
	for i := range p.LoadBalancers {
		b := &p.LoadBalancers[i]
		files, err := lb.Render(p, b)
		if err != nil {
			warnf("load balancer %s: %v", b.Name, err)
			continue
		}
		for j, in := range b.Instances {
			fmt.Fprintf(out, "\n# %s\n%s", in.ConfigFile, files[j].Proxy)
			if k := in.Keepalived; k != nil {
				fmt.Fprintf(out, "\n# %s\n%s", k.ConfigFile, files[j].Keepalived)
			}
		}
	}
}
