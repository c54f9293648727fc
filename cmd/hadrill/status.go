package main

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/hadrill/hadrill/internal/lab"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/spec"
)

func (cli *app) statusCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "status [--name LAB]",
		Short: "Show every node's state (Galera: Synced, Donor/Desynced, Joining, ...) and the lab's hosts",
		Args:  args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := cli.openLab()
			if err != nil {
				return err
			}
			st := l.StatusOver(cmd.Context(), lab.CPUWindow)
			return cli.emit(st, func() { printStatus(st) })
		},
	}
}

func printStatus(st lab.Status) {
	where := "network " + st.Network
	if st.Inventory != "" {
		where = "hosts of " + st.Inventory
	}
	fmt.Printf("lab %s (%s, %s, %s)\n", st.Name, st.Status, st.Mode, where)
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NODE\tCLUSTER\tROLE\tREGION\tADDRESS\tSTATE\tPID\tPROFILE")
	for _, n := range st.Nodes {
		state := n.State
		if n.Drained {
			state += " (drained)"
		}
		if n.DisksDown {
			state += " (disks down)"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s:%d\t%s\t%d\t%s\n", n.Name, n.Cluster, n.Role, n.Region, n.Address, n.Port, state, n.Pid, n.Profile)
	}
	for _, lb := range st.LoadBalancers {
		fmt.Fprintf(w, "%s\t%s\tlb/%s\t\t%s:%d\t%s\t\t%s\n", lb.Name, lb.Cluster, lb.Mode, lb.Address, lb.Port, lb.State, backends(lb))
		for _, in := range lb.Instances { // a pair: which host holds the virtual IP
			state := map[bool]string{true: "haproxy up", false: "haproxy down"}[in.Haproxy]
			if in.Keepalived != nil && !*in.Keepalived {
				state += ", keepalived down"
			}
			holds := map[bool]string{true: "holds " + lb.Address, false: "standby"}[in.Holder]
			fmt.Fprintf(w, "  %s\t%s\tlb host\t\t%s\t%s\t\t%s\n", in.Host, lb.Cluster, in.Address, state, holds)
		}
	}
	for _, a := range st.Arbitrators {
		fmt.Fprintf(w, "%s\t%s\tarbitrator\t%s\t%s:4567\t%s\t%d\t\n", a.Name, a.Cluster, a.Region, a.Address, a.State, a.Pid)
	}
	fmt.Fprintf(w, "%s\t\tclient\t\t%s\t\t\t\n", st.Client.Name, st.Client.Address)
	w.Flush()
	for _, n := range st.Nodes {
		if n.Fenced != "" {
			fmt.Printf("%s is fenced: it %s\n", n.Name, n.Fenced)
		}
		if n.Stopped != "" {
			fmt.Printf("%s stopped: %s\n", n.Name, n.Stopped)
		}
		if n.Clock != "" {
			fmt.Printf("%s clock: %s from the real time (hadrill fault heal undoes it)\n", n.Name, n.Clock)
		}
		for _, v := range slices.Sorted(maps.Keys(n.DiskFaults)) {
			fmt.Printf("%s %s volume: disk fault %s (hadrill fault heal undoes it)\n", n.Name, v, n.DiskFaults[v])
		}
	}
	if len(st.Faults) > 0 {
		var what []string
		for _, r := range st.Faults {
			w := r.Label()
			if len(r.From) > 0 {
				w += " from " + strings.Join(r.From, ",")
			}
			what = append(what, w+" ("+r.At.Local().Format("15:04:05")+")")
		}
		fmt.Printf("faults since the last heal: %s (hadrill fault heal undoes them)\n", strings.Join(what, "; "))
	}
	if d := st.Disks; d != nil && d.State != "serving" {
		fmt.Printf("DISKS DOWN: %s; the servers on them fail at their next write. `%s` stops them and serves the volumes again from their images (the data is there)\n", d.Problem, d.Fix)
	}
	printHosts(st)
	printReplication(st)
	for _, k := range st.Links {
		fmt.Printf("link %s: rtt %g ms", k.Name, k.RTTMs)
		if k.JitterMs > 0 {
			fmt.Printf(" ±%g ms", k.JitterMs)
		}
		if k.LossPercent > 0 {
			fmt.Printf(", loss %g%%", k.LossPercent)
		}
		if k.ReorderPct > 0 {
			fmt.Printf(", reorder %g%%", k.ReorderPct)
		}
		if k.DuplicatePct > 0 {
			fmt.Printf(", duplicate %g%%", k.DuplicatePct)
		}
		if k.BandwidthBps > 0 {
			fmt.Printf(", bandwidth %s", spec.FormatRate(k.BandwidthBps))
		}
		fmt.Printf(" (emulator %s)", k.Emulator)
		if m := k.Measured; m != nil {
			fmt.Printf("; measured %s: %s", m.At.Local().Format("15:04:05"), m.Summary())
		}
		fmt.Println()
	}
}

// printHosts shows the hosts' machines and what they use, when a host has a
// machine or lost a process to the memory limit, and every remote machine.
func printHosts(st lab.Status) {
	remote := st.Mode == plan.ModeSSH
	show, domains := remote, false
	for _, h := range st.Hosts {
		domains = domains || h.FaultDomain != h.Name
		show = show || domains || h.Machine != nil || h.OOMKills > 0 || len(h.NICs) > 1 || (len(h.NICs) == 1 && h.NICs[0].RateBps > 0) || len(h.Volumes) > 0
	}
	if !show {
		return
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "HOST\tFAULT DOMAIN\tMACHINE\tCPU USED\tMEMORY USED\tMEMORY-LIMIT KILLS\tNICS\tDISKS")
	for _, h := range st.Hosts {
		machine, cpu, mem := "(unlimited)", "-", spec.FormatSize(h.MemoryBytes)
		if remote {
			machine = "its own"
		}
		if h.CPUCores != nil {
			cpu = fmt.Sprintf("%.2f", *h.CPUCores)
		}
		if m := h.Machine; m != nil {
			machine = m.String()
			cpu += " of " + spec.FormatCores(m.CPUs)
			mem += " of " + spec.FormatSize(m.MemoryBytes)
		}
		var nics []string
		for _, c := range h.NICs {
			nics = append(nics, c.String())
		}
		var vols []string
		for _, v := range h.Volumes {
			vol := fmt.Sprintf("%s: %s", v.Name, v)
			for _, m := range h.DisksMeasured {
				switch {
				case m.Volume != v.Name || m.Error != "":
				case m.OnHost:
					vol += fmt.Sprintf(" asked, not emulated: the host's own disk measured %s: %.0f IOPS, %.2f ms", m.At.Local().Format("15:04:05"), m.IOPS, m.LatencyP50)
				default:
					vol += fmt.Sprintf(" (measured %s: %.0f IOPS, %.2f ms)", m.At.Local().Format("15:04:05"), m.IOPS, m.LatencyP50)
				}
			}
			vols = append(vols, vol)
		}
		kills := strconv.Itoa(h.OOMKills)
		if remote { // no limit there: the machine's own memory
			kills = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", h.Name, h.FaultDomain, machine, cpu, mem, kills, strings.Join(nics, ", "), strings.Join(vols, "; "))
	}
	w.Flush()
}

// printReplication lists each replication connection and each semi-sync primary.
func printReplication(st lab.Status) {
	for _, n := range st.Nodes {
		for _, r := range n.Replication {
			lag := "lag unknown"
			if r.LagSeconds != nil {
				lag = fmt.Sprintf("lag %.2fs", *r.LagSeconds)
			}
			name := "replica"
			if r.Channel != "" {
				name = "channel " + r.Channel
			}
			semi := ""
			if r.SemiSync {
				semi = ", semi-sync"
			}
			fmt.Printf("%s ← %s (%s): IO %s, SQL %s, %s, at %s%s", n.Name, r.Source, name, r.IO, r.SQL, lag, r.GTIDSlavePos, semi)
			if r.LastError != "" {
				fmt.Printf(" — %s", r.LastError)
			}
			fmt.Println()
		}
		if ss := n.SemiSync; ss != nil {
			fmt.Printf("%s semi-sync primary: %s, %d replica(s) acknowledging, %d commits acknowledged, %d not (fell back to async)\n",
				n.Name, ss.Status, ss.Clients, ss.AckedTx, ss.AsyncTx)
		}
	}
}

// backends summarises what HAProxy sees: "writes: db1 UP*, db2 UP, db3 DOWN"
// where * marks the servers taking new connections.
func backends(lb lab.LBInfo) string {
	var parts []string
	proxy := ""
	for _, b := range lb.Backends {
		if b.Proxy != proxy {
			proxy = b.Proxy
			parts = append(parts, proxy+":")
		}
		mark := ""
		if b.Serving {
			mark = "*"
		}
		parts = append(parts, fmt.Sprintf("%s %s%s", b.Name, b.Status, mark))
	}
	return strings.Join(parts, " ")
}
