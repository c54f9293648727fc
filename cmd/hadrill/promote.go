package main

import (
	"github.com/spf13/cobra"
)

func (cli *app) promoteCmd() *cobra.Command {
	var force bool
	c := &cobra.Command{
		Use:   "promote NODE [--force]",
		Short: "Make a replica of a primary cluster its primary (safe switchover; refuses to lose transactions)",
		Long: `With the primary running, promote is a switchover: the primary turns read-only, NODE
applies everything it committed, becomes the writable primary, and every other node
(the old primary too) follows it by GTID. Channels out of the cluster follow it too,
and the load balancer's /primary checks move writes within a second.
Promote refuses, changing nothing, when NODE holds transactions the primary never had
(errant GTIDs, named), lacks some another replica has, or when the primary is down
(what only it had would be lost); --force promotes anyway.`,
		Args: args(1, 1, "one node name"),
		RunE: func(cmd *cobra.Command, a []string) error {
			l, err := cli.changeLab()
			if err != nil {
				return err
			}
			return l.Replication().Promote(cmd.Context(), a[0], force)
		},
	}
	c.Flags().BoolVar(&force, "force", false, "promote even if transactions may be lost or are errant")
	return c
}

func (cli *app) rebuildCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "rebuild NODE",
		Short: "Make a replica of a primary cluster (a fenced former primary) a fresh copy of its primary",
		Long: `rebuild takes a mariabackup of the primary, replaces NODE's data with it and makes NODE
replicate from the backup's GTID position. It is how a fenced node (a former primary
holding transactions the new primary never received) comes back into service. NODE's
old data, binary logs and their archive are kept beside the new ones
(<datadir>.replaced-<time>), so what only it held can still be read.`,
		Args: args(1, 1, "one node name"),
		RunE: func(cmd *cobra.Command, a []string) error {
			l, err := cli.changeLab()
			if err != nil {
				return err
			}
			if err := l.Rebuild(cmd.Context(), a[0]); err != nil {
				return err
			}
			st := l.Status(cmd.Context())
			return cli.emit(st, func() { printStatus(st) })
		},
	}
}

func (cli *app) drCmd() *cobra.Command {
	dr := &cobra.Command{Use: "dr", Short: "Disaster-recovery channels between clusters"}
	var to string
	repoint := &cobra.Command{
		Use:   "repoint [CHANNEL] [--to NODE]",
		Short: "Move a DR channel to another Synced node of its source cluster now, by GTID",
		Long: `The lab's keeper does this by itself when a channel's source node stops being a
Synced member of its cluster; repoint does it on demand (e.g. before maintenance).
The new source must hold everything the receiver applied, so nothing is skipped or
applied twice.`,
		Args: args(0, 1, "at most one channel name"),
		RunE: func(cmd *cobra.Command, a []string) error {
			l, err := cli.changeLab()
			if err != nil {
				return err
			}
			ch := ""
			if len(a) == 1 {
				ch = a[0]
			}
			return l.Replication().Repoint(cmd.Context(), ch, to)
		},
	}
	repoint.Flags().StringVar(&to, "to", "", "the source node to use (default: the first healthy other node)")
	dr.AddCommand(repoint)
	return dr
}
