package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/netem"
)

func faultCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "fault",
		Short: "Inject faults: kill, stop, pause, resume, partition; heal undoes them all",
		Long: `Every fault is recorded with its time in <lab>/faults.jsonl, and copied into the runs of
benchmarks that were running at that moment. Network faults (partition, delay, loss,
bandwidth) need network namespaces (root); links are named REGION-REGION.`,
	}
	for _, e := range fault.Of(fault.OnProcess) {
		kind := e.Kind
		c.AddCommand(&cobra.Command{
			Use:   e.Use,
			Short: e.Short,
			Args:  args(1, -1, "one or more node names"),
			RunE: func(cmd *cobra.Command, a []string) error {
				l, err := changeLab()
				if err != nil {
					return err
				}
				return l.ProcessFault(cmd.Context(), kind, a)
			},
		})
	}
	for _, e := range fault.Of(fault.OnHost) {
		c.AddCommand(&cobra.Command{
			Use:   e.Use,
			Short: e.Short,
			Args:  args(1, -1, "one or more hosts"),
			RunE: func(cmd *cobra.Command, a []string) error {
				l, err := changeLab()
				if err != nil {
					return err
				}
				return l.CrashHosts(cmd.Context(), a)
			},
		})
	}
	var from []string
	pe := fault.Of(fault.OnNetwork)[0]
	part := &cobra.Command{
		Use:   pe.Use,
		Short: pe.Short,
		Args:  args(1, -1, "one or more node, host or region names"),
		RunE: func(cmd *cobra.Command, a []string) error {
			l, err := changeLab()
			if err != nil {
				return err
			}
			return l.Partition(cmd.Context(), a, from)
		},
	}
	part.Flags().StringSliceVar(&from, "from", nil, "hosts or regions on the other side (default: every other host)")
	for _, e := range fault.Of(fault.OnLink) {
		kind := e.Kind
		var jitter string
		lc := &cobra.Command{
			Use:   e.Use,
			Short: e.Short,
			Args:  args(2, 2, "a link (REGION-REGION) and a value"),
			RunE: func(cmd *cobra.Command, a []string) error {
				l, err := changeLab()
				if err != nil {
					return err
				}
				return l.LinkFault(cmd.Context(), netem.Change{Verb: kind, Link: a[0], Value: a[1], Jitter: jitter})
			},
		}
		if kind == fault.Delay {
			lc.Flags().StringVar(&jitter, "jitter", "", "round-trip jitter (uniform, packets keep their order)")
		}
		c.AddCommand(lc)
	}
	c.AddCommand(part, &cobra.Command{
		Use:   "heal",
		Short: "Undo every fault: lift partitions, resume paused servers, start killed or stopped ones",
		Args:  args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := changeLab()
			if err != nil {
				return err
			}
			return l.Heal(cmd.Context())
		},
	}, &cobra.Command{
		Use:   "log",
		Short: "List the faults injected into the lab",
		Args:  args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := openLab()
			if err != nil {
				return err
			}
			recs := l.Faults(time.Time{}, time.Now().Add(time.Hour))
			return emit(recs, func() {
				for _, r := range recs {
					fmt.Printf("%s  %s", r.At.Local().Format("2006-01-02 15:04:05.000"), r.Label())
					if len(r.From) > 0 {
						fmt.Printf(" from %v", r.From)
					}
					fmt.Println()
				}
			})
		},
	})
	return c
}
