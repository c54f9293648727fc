package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hadrill/hadrill/internal/buildinfo"
	"github.com/hadrill/hadrill/internal/hderr"
)

func (cli *app) newRoot() *cobra.Command {
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
		Version:       buildinfo.Version,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			var problems []string
			if cli.output != "text" && cli.output != "json" {
				problems = append(problems, fmt.Sprintf("--output: expected text or json, got %q", cli.output))
			}
			if cli.wait < 0 || cli.wait > time.Hour {
				problems = append(problems, fmt.Sprintf("--wait: expected 0 to 1h, got %v", cli.wait))
			}
			if f := cmd.Flags().Lookup("home"); f != nil && f.Changed && strings.TrimSpace(cli.homeFlag) == "" {
				// a script's --home "$UNSET" must not fall back on the default home's labs
				problems = append(problems, "--home: expected a directory, got an empty name (leave --home out for $HADRILL_HOME or ~/.hadrill)")
			}
			return hderr.Users(problems)
		},
	}
	pf := root.PersistentFlags()
	pf.StringVar(&cli.homeFlag, "home", "", "hadrill home (default $HADRILL_HOME or ~/.hadrill)")
	pf.StringVarP(&cli.output, "output", "o", "text", "output format: text or json")
	pf.StringVar(&cli.labFlag, "name", "", "lab name (default: the only lab, or the spec's name for up)")
	pf.DurationVar(&cli.wait, "wait", 0, "when the lab is busy with another command, wait up to this long for it (default: refuse at once, exit 3)")
	root.SetFlagErrorFunc(badFlag)
	root.AddCommand(cli.upCmd(), cli.studyCmd(), cli.checkCmd(), cli.netemCmd(), cli.diskCmd(), cli.drillCmd(), cli.downCmd(), cli.statusCmd(), cli.validateCmd(), cli.preflightCmd(), cli.presetsCmd(), cli.machinesCmd(), cli.disksCmd(), cli.templatesCmd(),
		cli.sqlCmd(), cli.logsCmd(), cli.planCmd(), cli.agentCmd(), cli.keeperCmd(), hostCmd(), lbCheckCmd(), lbIPTablesCmd(), cli.promoteCmd(), cli.rebuildCmd(), cli.drCmd(), cli.backupCmd(), cli.restoreCmd(), cli.faultCmd(cli.applyNow), cli.drainCmd(true), cli.drainCmd(false), cli.benchCmd(), cli.runsCmd(), cli.reportCmd(), cli.recoverCmd(), cli.nodeCmd("start"), cli.nodeCmd("stop"), cli.nodeCmd("restart"))
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

// args checks positional arguments with a message naming what was expected.
func args(min, max int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if len(a) >= min && (max < 0 || len(a) <= max) {
			return nil
		}
		got := "none"
		if len(a) > 0 {
			got = fmt.Sprintf("%d argument(s): %s", len(a), strings.Join(a, " "))
		}
		return hderr.User("%s: expected %s, got %s", cmd.Name(), what, got)
	}
}

// badValue is pflag's error for a value its flag's type cannot take.
var badValue = regexp.MustCompile(`^invalid argument "(.*)" for "(?:-\w, )?(--[\w-]+)" flag: `)

// badFlag is a flag the command line could not take, as bad input: a
// value of the wrong type named with the flag and the type it expected,
// anything else in pflag's words.
func badFlag(cmd *cobra.Command, err error) error {
	if m := badValue.FindStringSubmatch(err.Error()); m != nil {
		what := "a value of its type"
		if f := cmd.Flags().Lookup(strings.TrimPrefix(m[2], "--")); f != nil {
			what = map[string]string{"uint64": "a whole number from 0", "uint": "a whole number from 0", "int": "a whole number", "float64": "a number",
				"duration": "a duration such as 500ms, 10s or 2m", "bool": "true or false"}[f.Value.Type()]
			if what == "" {
				what = "a " + f.Value.Type()
			}
		}
		return hderr.User("%s: expected %s, got %q", m[2], what, m[1])
	}
	return hderr.User("%v", err)
}

func warnf(format string, a ...any) { fmt.Fprintf(os.Stderr, format+"\n", a...) }
