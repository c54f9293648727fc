package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/state"
)

// globals are the flags every command shares.
type globals struct {
	home   string
	output string
	name   string
}

var g globals

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "hadrill",
		Short: "Deploy, load, break and report on MySQL/MariaDB high-availability labs",
		Long: `hadrill builds a real MariaDB Galera (or replication) topology on this machine,
one network namespace per host, and measures it.

  hadrill up                 deploy the default lab (preset galera3)
  hadrill status             what runs, and in which state
  hadrill sql db1            a SQL shell on a node
  hadrill down               remove the lab and everything it created`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Version:       version,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Name() == "report" && g.output != "text" && g.output != "json" {
				reportFile, g.output = g.output, "text" // `hadrill report ID -o FILE.html`
			}
			var problems []string
			if g.output != "text" && g.output != "json" {
				problems = append(problems, fmt.Sprintf("--output: expected text or json, got %q", g.output))
			}
			if state.LockWait < 0 || state.LockWait > time.Hour {
				problems = append(problems, fmt.Sprintf("--wait: expected 0 to 1h, got %v", state.LockWait))
			}
			return hderr.Users(problems)
		},
	}
	pf := root.PersistentFlags()
	pf.StringVar(&g.home, "home", "", "hadrill home (default $HADRILL_HOME or ~/.hadrill)")
	pf.StringVarP(&g.output, "output", "o", "text", "output format: text or json")
	pf.StringVar(&g.name, "name", "", "lab name (default: the only lab, or the spec's name for up)")
	pf.DurationVar(&state.LockWait, "wait", 0, "when the lab is busy with another command, wait up to this long for it (default: refuse at once, exit 3)")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return hderr.User("%v", err) })
	root.AddCommand(upCmd(), studyCmd(), checkCmd(), netemCmd(), diskCmd(), drillCmd(), downCmd(), statusCmd(), validateCmd(), preflightCmd(), presetsCmd(), machinesCmd(), disksCmd(), templatesCmd(),
		sqlCmd(), logsCmd(), planCmd(), agentCmd(), keeperCmd(), hostCmd(), lbCheckCmd(), promoteCmd(), rebuildCmd(), drCmd(), backupCmd(), restoreCmd(), faultCmd(applyNow), drainCmd(true), drainCmd(false), benchCmd(), runsCmd(), reportCmd(), recoverCmd(), nodeCmd("start"), nodeCmd("stop"), nodeCmd("restart"))
	for _, c := range root.Commands() {
		c.SetFlagErrorFunc(root.FlagErrorFunc())
		unknownSub(c)
	}
	return root
}

// unknownSub makes a command group refuse an unknown subcommand (exit 2)
// instead of printing its help and exiting 0.
func unknownSub(c *cobra.Command) {
	if !c.HasSubCommands() || c.Run != nil || c.RunE != nil {
		return
	}
	c.Args = cobra.ArbitraryArgs
	c.RunE = func(cmd *cobra.Command, a []string) error {
		if len(a) == 0 {
			return cmd.Help()
		}
		var names []string
		for _, s := range cmd.Commands() {
			if s.IsAvailableCommand() {
				names = append(names, s.Name())
			}
		}
		return hderr.User("%s: unknown command %q (commands: %s)", cmd.CommandPath(), a[0], strings.Join(names, ", "))
	}
	for _, s := range c.Commands() {
		unknownSub(s)
	}
}

func home() (string, error) { return state.Home(g.home) }

// labName resolves --name or the only lab.
func labName() (string, error) {
	h, err := home()
	if err != nil {
		return "", err
	}
	return state.Resolve(h, g.name)
}

// emit prints v as JSON with --output json, or text otherwise.
func emit(v any, text func()) error {
	if g.output == "json" {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	text()
	return nil
}

// args checks positional arguments with a message naming what was expected.
func args(min, max int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if len(a) < min || (max >= 0 && len(a) > max) {
			return hderr.User("%s: expected %s, got %d argument(s): %s", cmd.Name(), what, len(a), strings.Join(a, " "))
		}
		return nil
	}
}

func warnf(format string, a ...any) { fmt.Fprintf(os.Stderr, format+"\n", a...) }
