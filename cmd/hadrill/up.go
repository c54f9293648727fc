package main

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/lab"
	"github.com/hadrill/hadrill/internal/spec"
)

func upCmd() *cobra.Command {
	var preset, file string
	c := &cobra.Command{
		Use:   "up [--preset P | -f FILE] [--name LAB]",
		Short: "Deploy a lab (or start a stopped one) and wait until every node serves",
		Args:  args(0, 0, "no arguments (use --preset or -f)"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, name, given, err := loadSpec(preset, file)
			if err != nil {
				return err
			}
			h, err := home()
			if err != nil {
				return err
			}
			l, err := lab.Up(cmd.Context(), h, lab.UpOptions{Name: name, Spec: s, SpecGiven: given, Log: os.Stderr})
			if err != nil {
				return err
			}
			st := l.Status(cmd.Context())
			return emit(st, func() {
				printStatus(st)
				warnf("\nconnect:   hadrill sql %s        (or: mariadb --defaults-file=%s)", st.Nodes[0].Name, st.Client.DefaultsFile)
				warnf("tear down: hadrill down --name %s", st.Name)
			})
		},
	}
	c.Flags().StringVar(&preset, "preset", "", "embedded topology (see `hadrill presets`); default "+spec.DefaultPreset)
	c.Flags().StringVarP(&file, "file", "f", "", "topology spec file (YAML)")
	return c
}

// loadSpec reads the spec from a preset or a file and picks the lab name:
// --name, else the spec's name, else the file's base name.
func loadSpec(preset, file string) (s *spec.Spec, name string, given bool, err error) {
	switch {
	case preset != "" && file != "":
		return nil, "", false, hderr.User("--preset, --file: give one of them, not both")
	case file != "":
		data, rerr := os.ReadFile(file)
		if rerr != nil {
			return nil, "", false, hderr.User("--file: cannot read %s: %v", file, rerr)
		}
		if s, err = spec.Load(data); err != nil {
			return nil, "", false, prefix(file, err)
		}
		name = s.Name
		if name == "" {
			name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
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
	if g.name != "" {
		name = g.name
	}
	return s, name, given, nil
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
