package main

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hadrill/hadrill/internal/chaos"
	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/hderr"
)

// faultRun is what a fault command does with its parsed fault: inject it
// into the lab now (applyNow), or hand it to a drill that injects it under
// traffic.
type faultRun func(cmd *cobra.Command, f chaos.Fault) error

// applyNow opens the lab for a change and injects the fault.
func (cli *app) applyNow(cmd *cobra.Command, f chaos.Fault) error {
	l, err := cli.changeLab()
	if err != nil {
		return err
	}
	return l.Inject(cmd.Context(), f)
}

// faultNames are the fault kinds' names, in heal order.
func faultNames() []string {
	var out []string
	for _, k := range chaos.Kinds() {
		out = append(out, string(k.Name))
	}
	return out
}

// faultCmd is `hadrill fault`: a command per fault kind (chaos.Kinds), its
// flags declared by the kind; run says what each does with the fault it
// parsed (applyNow for the CLI itself).
func (cli *app) faultCmd(run faultRun) *cobra.Command {
	c := &cobra.Command{
		Use:   "fault",
		Short: "Inject faults (" + strings.Join(faultNames(), ", ") + "); heal undoes them",
		Long: `Every fault is recorded with its time in <lab>/faults.jsonl, and copied into the runs of
benchmarks that were running at that moment. Network faults (partition, crash, delay, loss,
reorder, duplicate, bandwidth) need network namespaces (root); links are named REGION-REGION.`,
	}
	for _, k := range chaos.Kinds() {
		long := k.Short
		if k.Long != "" {
			long += ".\n\n" + k.Long
		}
		kc := &cobra.Command{Use: k.Use, Short: k.Short, Long: long, Args: args(k.MinArgs, k.MaxArgs, k.ArgsWhat)}
		read := k.Parse(kc.Flags())
		kc.RunE = func(cmd *cobra.Command, a []string) error {
			f, err := read(a)
			if err != nil {
				return err
			}
			return run(cmd, f)
		}
		kc.SetFlagErrorFunc(flagError)
		c.AddCommand(kc)
	}
	c.AddCommand(&cobra.Command{
		Use:   "heal",
		Short: "Undo every fault: partitions lifted, links, disks and clocks back, paused servers resumed, killed, stopped or crashed ones started",
		Args:  args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := cli.changeLab()
			if err != nil {
				return err
			}
			return l.Heal(cmd.Context())
		},
	}, cli.faultLogCmd())
	return c
}

// flagError names a negative value taken for a flag (a clock's -5m) and
// how to give it; any other flag error is badFlag's.
func flagError(cmd *cobra.Command, err error) error {
	if m := negativeValue.FindStringSubmatch(err.Error()); m != nil {
		return hderr.User("%s: a negative value goes after -- (%s ARGUMENTS -- %s)", cmd.Name(), cmd.CommandPath(), m[1])
	}
	return badFlag(cmd, err)
}

// negativeValue is how the flag parser reports a negative argument.
var negativeValue = regexp.MustCompile(`in (-[0-9][0-9.]*[a-zµ]+)`)

func (cli *app) faultLogCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "log",
		Short: "List the faults injected into the lab",
		Args:  args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := cli.openLab()
			if err != nil {
				return err
			}
			recs := l.Faults(time.Time{}, time.Now().Add(time.Hour))
			if recs == nil {
				recs = []fault.Record{} // JSON: an empty list, not null
			}
			return cli.emit(recs, func() {
				if len(recs) == 0 {
					fmt.Printf("no faults injected into lab %s\n", l.Plan().Lab)
				}
				for _, r := range recs {
					fmt.Printf("%s  %s", r.At.Local().Format("2006-01-02 15:04:05.000"), r.Label())
					if len(r.From) > 0 {
						fmt.Printf(" from %s", strings.Join(r.From, ","))
					}
					fmt.Println()
				}
			})
		},
	}
}
