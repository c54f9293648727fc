package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/lab"
	"github.com/hadrill/hadrill/internal/netem"
)

// faultApply is one fault, parsed, to apply to a lab.
type faultApply func(ctx context.Context, l *lab.Lab) error

// faultRun is what a fault command does with its parsed fault: apply it to
// the lab now (applyNow), or hand it to a drill that applies it under
// traffic.
type faultRun func(cmd *cobra.Command, apply faultApply) error

// applyNow opens the lab for a change and applies the fault.
func applyNow(cmd *cobra.Command, apply faultApply) error {
	l, err := changeLab()
	if err != nil {
		return err
	}
	return apply(cmd.Context(), l)
}

// faultCmd is `hadrill fault`; run says what each fault command does with
// the fault it parsed (applyNow for the CLI itself).
func faultCmd(run faultRun) *cobra.Command {
	c := &cobra.Command{
		Use:   "fault",
		Short: "Inject faults: kill, stop, pause, resume, crash, disk, partition, link faults; heal undoes them all",
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
				return run(cmd, func(ctx context.Context, l *lab.Lab) error { return l.ProcessFault(ctx, kind, a) })
			},
		})
	}
	for _, e := range fault.Of(fault.OnHost) {
		c.AddCommand(&cobra.Command{
			Use:   e.Use,
			Short: e.Short,
			Args:  args(1, -1, "one or more hosts"),
			RunE: func(cmd *cobra.Command, a []string) error {
				return run(cmd, func(ctx context.Context, l *lab.Lab) error { return l.CrashHosts(ctx, a) })
			},
		})
	}
	c.AddCommand(diskFaultCmd(run), clockFaultCmd(run))
	var from, to []string
	pe := fault.Of(fault.OnNetwork)[0]
	part := &cobra.Command{
		Use:   pe.Use,
		Short: pe.Short,
		Long: pe.Short + `.

With --to instead of TARGET, the cut is one way: packets from the hosts (or regions) of
--from to those of --to are dropped, and only those (a TCP connection then fails both ways,
its replies lost; datagrams and probes show the asymmetry).`,
		Args: args(0, -1, "node, host or region names (or --from with --to)"),
		RunE: func(cmd *cobra.Command, a []string) error {
			if len(to) > 0 || len(a) == 0 {
				if len(a) > 0 {
					return hderr.User("TARGET: a one-way cut takes --from and --to, not targets (got %s)", strings.Join(a, " "))
				}
				return run(cmd, func(ctx context.Context, l *lab.Lab) error { return l.OneWayCut(ctx, from, to) })
			}
			return run(cmd, func(ctx context.Context, l *lab.Lab) error { return l.Partition(ctx, a, from) })
		},
	}
	part.Flags().StringSliceVar(&from, "from", nil, "hosts or regions on the other side (default: every other host); with --to, whose packets are dropped")
	part.Flags().StringSliceVar(&to, "to", nil, "a one-way cut: the hosts or regions that stop receiving --from's packets")
	for _, e := range fault.Of(fault.OnLink) {
		kind := e.Kind
		var jitter string
		lc := &cobra.Command{
			Use:   e.Use,
			Short: e.Short,
			Args:  args(2, 2, "a link (REGION-REGION) and a value"),
			RunE: func(cmd *cobra.Command, a []string) error {
				return run(cmd, func(ctx context.Context, l *lab.Lab) error {
					return l.LinkFault(ctx, netem.Change{Verb: kind, Link: a[0], Value: a[1], Jitter: jitter})
				})
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

// diskFaultCmd is `hadrill fault disk NODE …`.
func diskFaultCmd(run faultRun) *cobra.Command {
	e := fault.Of(fault.OnDisk)[0]
	var f fault.DiskFault
	c := &cobra.Command{
		Use:   e.Use,
		Short: e.Short,
		Long: e.Short + `.

The faults act on the node's emulated volumes (a spec's storage volumes), through the disk
daemon every IO of them crosses, and add to those already there; heal (and down) undoes them.
  --eio read,write,fsync   those IOs fail with EIO (--rate: a share of them, e.g. 1%)
  --full                   the volumes' file systems are filled: writes needing a block fail
                           with ENOSPC, as on a disk that filled up
  --stall D                every IO waits until D from now (a disk that stops answering)
  --slow F                 every IO takes F times as long
  --lose-unsynced          armed for the node's next kill or crash: its disks lose power then,
                           and every write they had not flushed is gone (as a power cut loses
                           what a disk's cache and the kernel still held)`,
		Args: args(1, 1, "one node"),
		RunE: func(cmd *cobra.Command, a []string) error {
			f.Node = a[0]
			return run(cmd, func(ctx context.Context, l *lab.Lab) error { return l.DiskFault(ctx, f) })
		},
	}
	c.Flags().StringSliceVar(&f.EIO, "eio", nil, "IOs that fail with EIO: read, write, fsync")
	c.Flags().StringVar(&f.Share, "rate", "", "the share of those IOs that fail (e.g. 1% or 0.01; default all)")
	c.Flags().BoolVar(&f.Full, "full", false, "fill the volumes' file systems (writes fail with ENOSPC)")
	c.Flags().DurationVar(&f.Stall, "stall", 0, "every IO waits until this long from now")
	c.Flags().Float64Var(&f.Slow, "slow", 0, "every IO takes this many times as long")
	c.Flags().BoolVar(&f.LoseUnsynced, "lose-unsynced", false, "at the node's next kill or crash, drop what its disks had not flushed")
	c.Flags().StringSliceVar(&f.Volumes, "volume", nil, "only these volumes of the node (default: all)")
	return c
}

// clockFaultCmd is `hadrill fault clock NODE OFFSET [--drift PPM]`.
func clockFaultCmd(run faultRun) *cobra.Command {
	e := fault.Of(fault.OnClock)[0]
	var drift string
	c := &cobra.Command{
		Use:   e.Use,
		Short: e.Short,
		Long: e.Short + `.

The server runs under Debian's libfaketime (restarted once under it, the first time its clock
moves), which reads the node's clock file every second: NOW(), UNIX_TIMESTAMP(), binary log
event times and GTID timestamps follow the moved clock; CLOCK_MONOTONIC stays the machine's,
as when NTP steps a real clock. OFFSET is signed (+30s, -5m, 0); --drift makes the clock run
fast or slow from now (500ppm: 43 s a day). Heal sets it back to the real time.`,
		Args: args(1, 2, "a node and its clock's offset"),
		RunE: func(cmd *cobra.Command, a []string) error {
			offset := ""
			if len(a) == 2 {
				offset = a[1]
			}
			f, err := fault.ParseClock(a[0], offset, drift)
			if err != nil {
				return err
			}
			return run(cmd, func(ctx context.Context, l *lab.Lab) error { return l.ClockFault(ctx, f) })
		},
	}
	c.Flags().StringVar(&drift, "drift", "", "the clock runs this many parts per million fast (e.g. 500ppm; negative: slow)")
	c.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		if m := negativeOffset.FindStringSubmatch(err.Error()); m != nil {
			return hderr.User("OFFSET: a negative offset goes after -- (hadrill fault clock NODE -- %s)", m[1])
		}
		return hderr.User("%v", err)
	})
	return c
}

// negativeOffset is how the flag parser reports a negative OFFSET.
var negativeOffset = regexp.MustCompile(`in (-[0-9][0-9.]*[a-zµ]+)`)
