package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/inventory"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/preflight"
	"github.com/hadrill/hadrill/internal/spec"
)

func (cli *app) preflightCmd() *cobra.Command {
	var preset, file, inv string
	var install bool
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "preflight [--preset P | -f FILE] --inventory HOSTS.yaml [--install]",
		Short: "Check the machines of an inventory before a lab is made on them: SSH with a verified host key, root, packages, free ports, clock, disk",
		Long: `Connects to every host of the inventory over SSH (its host key checked against known_hosts
or a pinned fingerprint) and checks, for the host's part of the spec: root (or sudo -n), the CPU
architecture, the Debian packages of its roles, the ports the lab listens on, room in hadrill's
directory, and the clock against this computer's. It creates nothing; with --install it installs the
missing packages (apt-get) and notes them in the host's directory. Every problem of every host is
reported at once (exit 2).`,
		Args: args(0, 0, "no arguments (use --preset or -f, and --inventory)"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var errs []error
			if timeout < time.Second || timeout > 5*time.Minute {
				errs = append(errs, hderr.User("--timeout: expected 1s to 5m, got %v", timeout))
			}
			s, name, r, err := cli.specAndInventory(preset, file, inv)
			if err := hderr.Join(append(errs, err)); err != nil {
				return err
			}
			home, err := cli.home()
			if err != nil {
				return err
			}
			rep, err := preflight.Run(cmd.Context(), r, preflight.Options{Install: install, Timeout: timeout, Arch: runtime.GOARCH,
				Progress: func(format string, a ...any) { warnf(format, a...) }}, func(f plan.Facts) (map[string]preflight.Need, error) {
				p, err := plan.Build(s, name, home, f) // as up builds it, from what the hosts said
				if err != nil {
					return nil, err
				}
				return preflight.Needs(p), nil
			})
			if cerr := cmd.Context().Err(); cerr != nil {
				return cerr
			}
			if err != nil {
				return err
			}
			if err := cli.emit(rep, func() { printPreflight(os.Stdout, os.Stderr, rep) }); err != nil {
				return err
			}
			return hderr.Users(rep.Problems())
		},
	}
	c.Flags().StringVar(&preset, "preset", "", "embedded topology (see `hadrill presets`); default "+spec.DefaultPreset)
	c.Flags().StringVarP(&file, "file", "f", "", "topology spec file (YAML)")
	c.Flags().StringVar(&inv, "inventory", "", "the inventory: which machine each host of the spec is, and how to reach it (YAML)")
	c.Flags().BoolVar(&install, "install", false, "install the missing Debian packages of each host's roles (apt-get)")
	c.Flags().DurationVar(&timeout, "timeout", 10*time.Second, "how long a connection to a host may take")
	return c
}

// specAndInventory loads a spec and an inventory and holds them against
// each other: every host of the spec placed, no other (no connection yet).
func (cli *app) specAndInventory(preset, file, inv string) (*spec.Spec, string, *inventory.Resolved, error) {
	var errs []error
	if inv == "" {
		errs = append(errs, hderr.User("--inventory: required: the file saying which machine each host is"))
	}
	s, name, _, err := cli.loadSpec(preset, file)
	if err != nil {
		errs = append(errs, err)
	}
	var r *inventory.Resolved
	if inv != "" {
		if r, err = loadInventory(inv); err != nil {
			errs = append(errs, err)
		}
	}
	if err := hderr.Join(errs); err != nil {
		return nil, "", nil, err
	}
	if err := r.Check(s.HostNames()); err != nil {
		return nil, "", nil, err
	}
	return s, name, r, nil
}

// inventoryOf reads --inventory's file (nil when none is given); its
// problems join err's, so that every problem is named at once.
func inventoryOf(file string, err error) (*inventory.Resolved, error) {
	if file == "" {
		return nil, err
	}
	inv, ierr := loadInventory(file)
	return inv, hderr.Join([]error{err, ierr})
}

// loadInventory reads and resolves an inventory file.
func loadInventory(file string) (*inventory.Resolved, error) {
	data, err := readBounded("--inventory", file, "an inventory")
	if err != nil {
		return nil, err
	}
	r, err := inventory.Parse(data, filepath.Dir(file), file, inventory.CurrentEnv())
	return r, prefix(file, err)
}

// printPreflight writes each host's verdict and facts to out, its
// warnings to warn.
func printPreflight(out, warn io.Writer, rep *preflight.Report) {
	fmt.Fprintf(out, "preflight of %d host(s) (inventory %s)\n", len(rep.Hosts), rep.Inventory)
	for _, h := range rep.Hosts {
		verdict := "ok"
		if n := len(h.Problems); n > 0 {
			verdict = fmt.Sprintf("%d problem(s)", n)
		}
		detail := "not reached"
		if f := h.Facts; f != nil {
			detail = fmt.Sprintf("%s %s, %d CPU(s), %.1f GiB, %.1f GiB free, clock %+.0f ms (±%.0f)", f.OS, f.Arch, f.CPUs, float64(f.MemBytes)/(1<<30),
				float64(f.FreeBytes)/(1<<30), float64(f.Skew)/float64(time.Millisecond), float64(f.SkewError)/float64(time.Millisecond))
		}
		fmt.Fprintf(out, "  %-8s %-28s %-16s %-13s %s\n", h.Name, h.Target, strings.Join(h.Need.Roles, ","), verdict, detail)
		if len(h.Installed) > 0 {
			fmt.Fprintf(out, "  %-8s installed %s\n", h.Name, strings.Join(h.Installed, " "))
		}
	}
	for _, h := range rep.Hosts {
		for _, w := range h.Warnings {
			fmt.Fprintf(warn, "warning: %s\n", w)
		}
	}
}
