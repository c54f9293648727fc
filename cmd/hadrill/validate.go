package main

import (
	"fmt"
	"github.com/hadrill/hadrill/internal/words"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/facts"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/preflight"
	"github.com/hadrill/hadrill/internal/spec"
)

func (cli *app) validateCmd() *cobra.Command {
	var inv string
	c := &cobra.Command{
		Use:   "validate FILE [--inventory HOSTS.yaml]",
		Short: "Check a topology spec (and an inventory of machines for it) and print every problem, each with its field path",
		Args:  args(1, 1, "one spec file"),
		RunE: func(cmd *cobra.Command, a []string) error {
			if inv != "" {
				s, name, r, err := cli.specAndInventory("", a[0], inv)
				if err != nil {
					return err
				}
				home, err := cli.home()
				if err != nil {
					return err
				}
				// what the inventory alone decides (addresses, virtual IPs):
				// the rest is the hosts' own, which preflight reads
				if _, err := plan.Build(s, name, home, preflight.PlanFacts(r, nil)); err != nil {
					return err
				}
			}
			s, _, err := readSpecFile("FILE", a[0], false)
			if err != nil {
				return err
			}
			if err := facts.Options(cmd.Context(), s); err != nil { // as this computer's server reads them
				return prefix(a[0], err)
			}
			nodes := 0
			for _, c := range s.Clusters {
				nodes += c.NodeCount()
			}
			fields, err := spec.Fields(s)
			if err != nil {
				return err
			}
			return cli.emit(map[string]any{"file": a[0], "valid": true, "spec": fields}, func() {
				fmt.Printf("%s: valid (%d cluster(s), %d node(s), %d load balancer(s))\n", a[0], len(s.Clusters), nodes, len(s.LoadBalancers))
				if inv != "" {
					fmt.Printf("%s: every host of the spec is there (hadrill preflight connects and checks them)\n", inv)
				}
			})
		},
	}
	c.Flags().StringVar(&inv, "inventory", "", "an inventory of machines for the spec's hosts (YAML), checked without connecting")
	return c
}

func (cli *app) machinesCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "machines",
		Short: "List the built-in machine sizes a spec may name (hosts' CPU quota and memory limit)",
		Args:  args(0, 0, "no arguments"),
		RunE: func(*cobra.Command, []string) error {
			return cli.emit(spec.BuiltinMachines, func() {
				for _, m := range spec.BuiltinMachines {
					var limits []string
					if m.DiskIOPS > 0 {
						limits = append(limits, fmt.Sprintf("%d IOPS", m.DiskIOPS))
					}
					if m.DiskThroughput != "" {
						limits = append(limits, m.DiskThroughput+"/s")
					}
					caps := ""
					if len(limits) > 0 {
						caps = ", its disks together at most " + words.And(limits)
					}
					fmt.Printf("%-8s %s CPU(s), %s memory%s\n", m.Name, spec.FormatCores(m.CPUs), m.Memory, caps)
				}
			})
		},
	}
}

func (cli *app) disksCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "disks",
		Short: "List the built-in disk classes a spec's volumes may name (IOPS, throughput, latency per IO, host caching)",
		Args:  args(0, 0, "no arguments"),
		RunE: func(*cobra.Command, []string) error {
			return cli.emit(spec.BuiltinDisks, func() {
				for _, d := range spec.BuiltinDisks {
					fmt.Printf("%-9s %6d IOPS  %5s/s  %6s per IO  %s each  host caching %s\n", d.Name, d.IOPS, d.Throughput, d.Latency, d.Size, d.CachingPolicy())
				}
			})
		},
	}
}

func (cli *app) presetsCmd() *cobra.Command {
	list := func(*cobra.Command, []string) error {
		type row struct{ Name, Description string }
		var rows []row
		for _, n := range spec.PresetNames() {
			s, _ := spec.Preset(n)
			rows = append(rows, row{n, s.Description})
		}
		return cli.emit(rows, func() {
			for _, r := range rows {
				fmt.Printf("%-14s %s\n", r.Name, r.Description)
			}
		})
	}
	c := &cobra.Command{
		Use:   "presets [list | show NAME]",
		Short: "List the embedded topologies, or show one",
		Args:  args(0, 0, "no arguments"),
		RunE:  list,
	}
	c.AddCommand(&cobra.Command{Use: "list", Short: "List the embedded topologies", Args: args(0, 0, "no arguments"), RunE: list},
		&cobra.Command{
			Use: "show NAME", Short: "Print a preset's YAML (with -o json, the spec it loads as)", Args: args(1, 1, "a preset name"),
			RunE: func(_ *cobra.Command, a []string) error {
				src, err := spec.PresetSource(a[0])
				if err != nil {
					return hderr.User("NAME: unknown preset %q (known: %s)", a[0], strings.Join(spec.PresetNames(), ", "))
				}
				s, err := spec.Preset(a[0])
				if err != nil {
					return err
				}
				fields, err := spec.Fields(s)
				if err != nil {
					return err
				}
				return cli.emit(fields, func() { fmt.Print(string(src)) })
			},
		})
	return c
}

func (cli *app) templatesCmd() *cobra.Command {
	c := &cobra.Command{Use: "templates", Short: "List or show the embedded config templates and tuning profiles"}
	c.AddCommand(&cobra.Command{
		Use: "list", Short: "List templates", Args: args(0, 0, "no arguments"),
		RunE: func(*cobra.Command, []string) error {
			names := mariadb.TemplateNames()
			return cli.emit(names, func() {
				for _, n := range names {
					fmt.Println(n)
				}
			})
		},
	}, &cobra.Command{
		Use: "show NAME", Short: "Print a template", Args: args(1, 1, "a template name (see `hadrill templates list`)"),
		RunE: func(_ *cobra.Command, a []string) error {
			src, err := mariadb.TemplateSource(a[0])
			if err != nil {
				return hderr.User("NAME: %v", err)
			}
			fmt.Print(src)
			return nil
		},
	})
	return c
}
