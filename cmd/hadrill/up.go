package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/lab"
	"github.com/hadrill/hadrill/internal/spec"
)

func (cli *app) upCmd() *cobra.Command {
	var preset, file, invFile string
	var monitoring bool
	c := &cobra.Command{
		Use:   "up [--preset P | -f FILE] [--name LAB] [--inventory HOSTS.yaml]",
		Short: "Deploy a lab (or start a stopped one) and wait until every node serves",
		Long: `Deploys a lab on this computer (network namespaces as root, else addresses on lo) or, with
--inventory, on the machines the inventory names, reached over SSH: they are checked first (as
` + "`hadrill preflight`" + ` does: every problem at once, nothing made), then each host gets hadrill's own
copy and the lab's files in <its directory>/labs/<lab>. A lab that exists is started instead.`,
		Args: args(0, 0, "no arguments (use --preset or -f)"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, name, given, err := cli.loadSpec(preset, file)
			inv, err := inventoryOf(invFile, err)
			if err != nil {
				return err
			}
			if monitoring {
				s.Monitoring, given = true, true
			}
			h, err := cli.home()
			if err != nil {
				return err
			}
			l, err := lab.Up(cmd.Context(), h, lab.UpOptions{Name: name, Spec: s, SpecGiven: given, Log: os.Stderr, Inventory: inv, Wait: cli.wait})
			if err != nil {
				return err
			}
			for _, w := range l.Plan().Warnings {
				warnf("warning: %s", w)
			}
			st := l.Status(cmd.Context())
			return cli.emit(st, func() {
				printStatus(st)
				on := ""
				if st.Inventory != "" {
					on = ", on " + st.Client.Name
				}
				warnf("\nconnect:   hadrill sql %s        (or%s: mariadb --defaults-file=%s)", st.Nodes[0].Name, on, st.Client.DefaultsFile)
				warnf("tear down: hadrill down --name %s", st.Name)
			})
		},
	}
	c.Flags().StringVar(&preset, "preset", "", "embedded topology (see `hadrill presets`); default "+spec.DefaultPreset)
	c.Flags().StringVarP(&file, "file", "f", "", "topology spec file (YAML)")
	c.Flags().StringVar(&invFile, "inventory", "", "place the lab on these machines, over SSH (YAML: see `hadrill preflight`)")
	c.Flags().BoolVar(&monitoring, "monitoring", false, "run the exporters (node_exporter per host, mysqld_exporter per node, the proxy's endpoint), scraped every second during runs (as monitoring: true in the spec)")
	return c
}

// loadSpec reads the spec from a preset or a file and picks the lab name:
// --name, else the spec's name, else the file's base name.
func (cli *app) loadSpec(preset, file string) (s *spec.Spec, name string, given bool, err error) {
	switch {
	case preset != "" && file != "":
		return nil, "", false, hderr.User("--preset, --file: give one of them, not both")
	case file != "":
		if s, name, err = readSpecFile("--file", file, cli.labFlag != ""); err != nil {
			return nil, "", false, err
		}
		given = true
	default:
		given = preset != ""
		if preset == "" {
			preset = spec.DefaultPreset
		}
		if s, err = spec.Preset(preset); err != nil {
			return nil, "", false, err
		}
		name = s.Name
	}
	if cli.labFlag != "" {
		name = cli.labFlag
	}
	return s, name, given, nil
}

// maxSpecFile bounds the YAML files a user hands hadrill (a spec, an
// inventory): each is a page.
const maxSpecFile = 1 << 20

// readBounded reads a user's YAML file (what: "a topology spec"), refusing
// one larger than maxSpecFile without reading it whole.
func readBounded(arg, file, what string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, hderr.User("%s: cannot read %s: %v", arg, file, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSpecFile+1))
	if err != nil {
		return nil, hderr.User("%s: cannot read %s: %v", arg, file, err)
	}
	if len(data) > maxSpecFile {
		return nil, hderr.User("%s: %s is larger than %d KiB; %s is a page of YAML", arg, file, maxSpecFile>>10, what)
	}
	return data, nil
}

// readSpecFile loads a spec file the same way for validate and up: bounded
// in size, every problem at once, and the lab name it would get (the spec's
// name, else the file's base name) checked by the rule up applies, unless
// --name replaces it. Warnings go to stderr.
func readSpecFile(arg, file string, named bool) (*spec.Spec, string, error) {
	data, err := readBounded(arg, file, "a topology spec")
	if err != nil {
		return nil, "", err
	}
	s, err := spec.Load(data)
	var problems []error
	if err != nil {
		problems = append(problems, prefix(file, err))
	}
	name := ""
	if s != nil {
		name = s.Name
	}
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
		if !spec.ValidName(name) && !named {
			problems = append(problems, hderr.User("%s: the spec has no name, so the lab would be named %q after the file, which is not a valid lab name "+
				"(%s); add `name:` or use --name", file, name, spec.NameRule))
		}
	}
	if err := hderr.Join(problems); err != nil {
		return nil, "", err
	}
	for _, w := range spec.Warnings(s) {
		warnf("%s: warning: %s", file, w)
	}
	return s, name, nil
}

// prefix puts the file name in front of every problem of a user error.
func prefix(file string, err error) error {
	u, ok := err.(*hderr.UserError)
	if !ok {
		return err
	}
	out := make([]string, len(u.Problems))
	for i, p := range u.Problems {
		out[i] = file + ": " + p
	}
	return &hderr.UserError{Problems: out}
}
