package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/hadrill/hadrill/internal/backup"
	"github.com/hadrill/hadrill/internal/inventory"
	"github.com/hadrill/hadrill/internal/lab"
	"github.com/hadrill/hadrill/internal/spec"
	"github.com/hadrill/hadrill/internal/state"
)

func (cli *app) backupCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "backup NODE",
		Short: "Take a prepared full backup of a node with mariabackup (a Galera node is desynced meanwhile)",
		Long: `The backup lands in <lab>/backups/<id>/data, prepared (ready to start a server on),
with its binary log position and GTID. A Galera node is desynced while the backup
runs, so its agent answers 503 and the load balancer sends traffic elsewhere.
Binary logs of every node are archived continuously by the lab's keeper; with them,
'hadrill restore --to TIME|GTID' rebuilds the data as of any point after a backup.`,
		Args: args(1, 1, "one node name"),
		RunE: func(cmd *cobra.Command, a []string) error {
			l, err := cli.changeLab()
			if err != nil {
				return err
			}
			b, err := l.Backups().Backup(cmd.Context(), a[0])
			if err != nil {
				return err
			}
			return cli.emit(b, func() {
				fmt.Printf("backup %s: %s, %.1f MB in %.1fs, GTID %s\n", b.ID, b.Node, float64(b.Bytes)/1e6, b.Seconds, b.GTID)
			})
		},
	}
	c.AddCommand(cli.backupListCmd())
	return c
}

func (cli *app) backupListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List backups and, per cluster, the last recoverable time (the archive's last event: the RPO signal)",
		Args:  args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := cli.openLab()
			if err != nil {
				return err
			}
			bs, err := l.Backups().Backups()
			if err != nil {
				return err
			}
			out := struct {
				Backups []backup.Info        `json:"backups"`
				Archive []*backup.ArchiveEnd `json:"archive"`
			}{Backups: bs, Archive: []*backup.ArchiveEnd{}}
			if bs == nil {
				out.Backups = []backup.Info{}
			}
			for _, c := range l.Plan().Clusters {
				if end, err := l.Backups().ArchiveEnd(cmd.Context(), c.Name); err == nil {
					out.Archive = append(out.Archive, end)
				}
			}
			return cli.emit(out, func() { printBackups(os.Stdout, out.Backups, out.Archive, time.Now()) })
		},
	}
}

// printBackups writes the backups, a line each, then each cluster's last
// recoverable time as of now.
func printBackups(out io.Writer, bs []backup.Info, archive []*backup.ArchiveEnd, now time.Time) {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "BACKUP\tNODE\tCONSISTENT AS OF\tGTID\tSIZE")
	for _, b := range bs {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%.1f MB\n", b.ID, b.Node, b.Finished.Local().Format(time.DateTime), b.GTID, float64(b.Bytes)/1e6)
	}
	w.Flush()
	if len(bs) == 0 {
		fmt.Fprintln(out, "(no backups: hadrill backup NODE takes one)")
	}
	for _, a := range archive {
		fmt.Fprintf(out, "cluster %s: last recoverable %s (%s ago; archive of %s, at %s)\n", a.Cluster,
			a.Last.Local().Format(time.DateTime), now.Sub(a.Last).Round(time.Second), a.Node, a.Pos)
	}
}

func (cli *app) restoreCmd() *cobra.Command {
	var o backup.RestoreOptions
	var invFile string
	c := &cobra.Command{
		Use:   "restore --to TIME|GTID [--cluster C] [--as NEWLAB] [--inventory HOSTS.yaml]",
		Short: "Point-in-time restore: build a new lab holding a cluster's data exactly as of TIME or GTID",
		Long: `restore takes the latest backup before the target and replays the archived binary logs
from the backup's GTID up to the target into a new lab (one standalone server, named
by --as, default <lab>r). A time stops before the first transaction at or after it
("2026-11-22 10:04:05" local time, or RFC 3339); a GTID position includes it.
Targets before the oldest backup or after the last archived event are refused.
Backups and the archive are kept on this computer, so the new lab goes where you say,
whatever machines the source lab is on: on this computer, or with --inventory on the
machines it names (its hosts: the restored node, <cluster>1, and client).`,
		Args: args(0, 0, "no arguments (the target is --to)"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := cli.openLab()
			inv, err := inventoryOf(invFile, err)
			if err != nil {
				return err
			}
			o.Log = os.Stderr
			r, err := l.Backups().Restore(cmd.Context(), restoreLabs{home: l.Home(), log: os.Stderr, inv: inv}, o)
			if err != nil {
				return err
			}
			return cli.emit(r, func() {
				fmt.Printf("lab %s: %s restored to %s from backup %s + archive of %s in %.1fs (GTID %s)\n",
					r.Lab, r.Node, r.Target, r.Backup, r.Archive, r.Seconds, r.GTID)
				for _, w := range r.Warnings {
					fmt.Printf("warning: %s\n", w)
				}
				fmt.Printf("connect: hadrill sql --name %s %s\n", r.Lab, r.Node)
			})
		},
	}
	c.Flags().StringVar(&o.To, "to", "", "the target: a time or a GTID position (required)")
	c.Flags().StringVar(&o.Cluster, "cluster", "", "the cluster to restore (default: the one of the latest backup)")
	c.Flags().StringVar(&o.As, "as", "", "the new lab's name (default <lab>r)")
	c.Flags().StringVar(&invFile, "inventory", "", "place the new lab on these machines, over SSH (default: this computer)")
	return c
}

// restoreLabs creates and removes the lab a restore builds: on this
// computer, or on the machines of inv.
type restoreLabs struct {
	home string
	log  io.Writer
	inv  *inventory.Resolved
}

func (r restoreLabs) Exists(name string) bool {
	_, err := state.Load(r.home, name)
	return err == nil
}

func (r restoreLabs) Check(s *spec.Spec) error {
	if r.inv == nil {
		return nil
	}
	return r.inv.Check(s.HostNames())
}

func (r restoreLabs) Up(ctx context.Context, s *spec.Spec, fromBackup string) (*backup.Restored, error) {
	nl, err := lab.Up(ctx, r.home, lab.UpOptions{Name: s.Name, Spec: s, SpecGiven: true, Log: r.log, FromBackup: fromBackup, Inventory: r.inv})
	if err != nil {
		return nil, err
	}
	return &backup.Restored{Node: &nl.Plan().Nodes[0], Servers: nl.Servers(), Dir: nl.Plan().Dir}, nil
}

func (r restoreLabs) Down(ctx context.Context, name string) error {
	return lab.Down(ctx, r.home, name, false, 0, r.log) // the restore made it: nothing else holds it
}
