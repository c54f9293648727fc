// Package status is a lab's status as `hadrill status` reports it: the
// record (JSON, fields added and never renamed) and its text form (Text,
// golden-tested). The lab fills it in.
package status

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/hadrill/hadrill/internal/chaos"
	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/infra/disk"
	"github.com/hadrill/hadrill/internal/lb"
	"github.com/hadrill/hadrill/internal/netem"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/replication"
	"github.com/hadrill/hadrill/internal/server"
	"github.com/hadrill/hadrill/internal/spec"
	"github.com/hadrill/hadrill/internal/state"
)

// Status is what `hadrill status --output json` prints. Fields may be
// added, never renamed (other tools rely on them).
type Status struct {
	Name          string     `json:"name"`
	Status        string     `json:"status"`
	Mode          string     `json:"mode"`
	Network       string     `json:"network"`
	Inventory     string     `json:"inventory,omitempty"` // a lab of remote hosts: the inventory it was placed by
	Dir           string     `json:"dir"`
	Nodes         []NodeInfo `json:"nodes"`
	LoadBalancers []LBInfo   `json:"load_balancers"`
	Client        ClientInfo `json:"client"`
	// Links are the emulated WAN links: their current impairment (the
	// spec's, or a fault's) and the last measured round trip.
	Links []LinkInfo `json:"links,omitempty"`
	// Arbitrators are the clusters' garbd processes.
	Arbitrators []ArbitratorInfo `json:"arbitrators,omitempty"`
	// Disks is the lab's disk daemon, when it emulates disks: whether it
	// serves the volumes.
	Disks *DisksInfo `json:"disks,omitempty"`
	// Faults are those injected since the last heal that may still be in
	// force (`hadrill fault heal` undoes them); FaultsOver those since the
	// last heal that are over already (a partition lifted by a drill that
	// was killed, a killed node running again).
	Faults     []fault.Record `json:"faults,omitempty"`
	FaultsOver []fault.Record `json:"faults_over,omitempty"`
	// Hosts are the measured hosts: machine, CPU and memory in use,
	// memory-limit kills (root labs on a machine with cgroup v1).
	Hosts []HostInfo `json:"hosts,omitempty"`
	// Daemons are the daemons the lab runs on its hosts (a node's server
	// and health agent, an arbitrator's garbd, a load balancer instance's
	// keepalived and proxy, the exporters), each with whether it runs.
	Daemons []DaemonInfo `json:"daemons,omitempty"`
}

// DaemonInfo is one daemon a lab runs on a host.
type DaemonInfo struct {
	Host  string `json:"host"`
	Role  string `json:"role"` // server, agent, arbitrator, keepalived, proxy, exporter
	Name  string `json:"name"`
	State string `json:"state"` // running, paused, down, unknown (its host did not answer)
	Pid   int    `json:"pid,omitempty"`
}

// StateOf is a daemon's state from what its host said of its process.
func StateOf(p host.Process, err error) string {
	switch {
	case err != nil:
		return "unknown"
	case p.Pid == 0:
		return "down"
	case p.Paused:
		return "paused"
	}
	return "running"
}

// Daemon is the pid and state of a host's daemon of a role (0, down: the
// host runs none).
func (st Status) Daemon(host, role string) (int, string) {
	for _, d := range st.Daemons {
		if d.Host == host && d.Role == role {
			return d.Pid, d.State
		}
	}
	return 0, "down"
}

// DaemonsDown names the daemons beside the servers that do not run
// ("db3 agent"): a server's state is its node's, said on its own line.
func (st Status) DaemonsDown() []string {
	var out []string
	for _, d := range st.Daemons {
		if d.Role != "server" && d.State == "down" {
			out = append(out, d.Name)
		}
	}
	return out
}

// HostInfo is one host's machine and what its cgroups count.
type HostInfo struct {
	Name        string        `json:"name"`
	Role        string        `json:"role"`
	FaultDomain string        `json:"fault_domain"`
	Machine     *plan.Machine `json:"machine,omitempty"`
	CPUCores    *float64      `json:"cpu_cores,omitempty"` // in use now (`status` measures it over 200 ms; others do not)
	MemoryBytes int64         `json:"memory_bytes"`
	OOMKills    int           `json:"oom_kills"` // processes killed by the memory limit since the host was made
	NICs        []plan.NIC    `json:"nics,omitempty"`
	Volumes     []plan.Volume `json:"volumes,omitempty"` // a node's emulated disks (on a remote host: the spec's, not emulated)
	// DisksMeasured are its volumes as last measured (at up or start; on a
	// remote host, its own disk against each: disk.Measured.OnHost).
	DisksMeasured []disk.Measured `json:"disks_measured,omitempty"`
	// Unanswered says why its CPU and memory are not known (a remote host
	// that did not answer in time).
	Unanswered string `json:"unanswered,omitempty"`
}

// DisksInfo is the disk daemon that serves a lab's emulated volumes.
type DisksInfo struct {
	State string `json:"state"` // serving | not serving
	// Problem says why it does not serve the volumes, and Fix the
	// command that serves the volumes again.
	Problem string `json:"problem,omitempty"`
	Fix     string `json:"fix,omitempty"`
}

// ArbitratorInfo is one Galera arbitrator.
type ArbitratorInfo struct {
	Name    string `json:"name"`
	Cluster string `json:"cluster"`
	Region  string `json:"region"`
	Netns   string `json:"netns,omitempty"`
	Address string `json:"address"`
	State   string `json:"state"` // running | paused | down
	Pid     int    `json:"pid"`
}

// LinkInfo is one WAN link between two regions.
type LinkInfo struct {
	Name         string          `json:"name"`
	Regions      [2]string       `json:"regions"`
	RTTMs        float64         `json:"rtt_ms"`
	JitterMs     float64         `json:"jitter_ms,omitempty"`
	LossPercent  float64         `json:"loss_percent,omitempty"`
	ReorderPct   float64         `json:"reorder_percent,omitempty"`
	DuplicatePct float64         `json:"duplicate_percent,omitempty"`
	CorruptPct   float64         `json:"corrupt_percent,omitempty"`
	BandwidthBps int64           `json:"bandwidth_bps,omitempty"`
	Measured     *netem.Measured `json:"measured,omitempty"`
	Emulator     string          `json:"emulator"` // running | down
}

// NodeInfo is one database node.
type NodeInfo struct {
	Name    string       `json:"name"`
	Cluster string       `json:"cluster"`
	Kind    spec.Kind    `json:"kind"`
	Role    plan.Role    `json:"role"`
	Region  string       `json:"region"`
	Netns   string       `json:"netns"`
	Address string       `json:"address"`
	Port    int          `json:"port"`
	State   server.State `json:"state"`
	Pid     int          `json:"pid"`
	Profile string       `json:"profile"`
	Drained bool         `json:"drained"`
	// DisksDown: its volumes' disk daemon does not serve them: the server
	// may still answer, and fails at its next write.
	DisksDown bool `json:"disks_down,omitempty"`
	// Fenced says why a node of a primary cluster is kept read-only and
	// outside replication (role fenced).
	Fenced string `json:"fenced,omitempty"`
	// Stopped says why a server that is down stopped on its own, from its
	// error log ("InnoDB: fdatasync() returned 5 (EIO: …)").
	Stopped string `json:"stopped,omitempty"`
	// VotedOut says why its Galera cluster voted it out (state
	// Inconsistent): the error it met applying a write set the others
	// applied, from its error log.
	VotedOut string `json:"voted_out,omitempty"`
	// Reversed says that it left its Galera cluster (state Inconsistent)
	// because the primary component it was rejoining had applied fewer
	// write sets than it had: Galera's words, from its error log.
	Reversed string `json:"reversed,omitempty"`
	// DiskFaults are the disk faults in force on its volumes (volume →
	// what: "eio fsync", "full", "lose-unsynced armed (…)").
	DiskFaults map[string]string `json:"disk_faults,omitempty"`
	// Clock is its clock fault in force ("+1m0s", "drift +500ppm"), "" for
	// the real time.
	Clock string `json:"clock,omitempty"`
	// HoldsBack says that a Galera member keeps its cluster's replication
	// paused now (it asks for flow control), and what waits.
	HoldsBack string `json:"holds_back,omitempty"`
	// Silent says why a server that runs answers nothing, when hadrill
	// knows: a primary whose replicas reconnect after a cut was lifted.
	Silent string `json:"silent,omitempty"`
	// Replication (servers with binary logs): GTID position, read_only,
	// each replication connection, and a primary's semi-sync state.
	replication.Detail
}

// LBInfo is one load balancer.
type LBInfo struct {
	Name    string      `json:"name"`
	Cluster string      `json:"cluster"`
	Mode    spec.LBMode `json:"mode"`
	// Checks is how it checks its servers (fast, or cloud: probes every
	// 15 s, sessions kept).
	Checks  spec.LBChecks `json:"checks,omitempty"`
	Netns   string        `json:"netns"`
	Address string        `json:"address"`
	Port    int           `json:"port"`
	// Proxy is the proxy software it runs (its kind's name).
	Proxy string `json:"proxy"`
	State string `json:"state"` // running | down
	// Backends are the servers as its proxy sees them (group "writes", and "reads" when balanced).
	Backends []lb.ServerState `json:"backends"`
	// Instances are a pair's two hosts (Address is then the virtual IP,
	// Netns the namespace of the host holding it).
	Instances []lb.Instance `json:"instances,omitempty"`
	// Out are, for each backend the proxy does not send to now, the event
	// of its log that took it out (when, why, the sessions it shut).
	Out []lb.Event `json:"out_of_service,omitempty"`
}

// ClientInfo is the host load generators run on.
type ClientInfo struct {
	Name         string `json:"name"`
	Netns        string `json:"netns"`
	Address      string `json:"address"`
	DefaultsFile string `json:"defaults_file"`
}

// Text writes the status as `hadrill status` prints it: the lab, a table
// of its nodes, load balancers, arbitrators and client, what is wrong
// (fenced, stopped, clocks and disks faulted, faults since the last heal,
// disks down), the hosts when they say more than their names, each
// replication connection and each WAN link.
func Text(out io.Writer, st Status) {
	where := "network " + st.Network
	if st.Inventory != "" {
		where = "hosts of " + st.Inventory
	}
	fmt.Fprintf(out, "lab %s (%s, %s, %s)\n", st.Name, st.Status, st.Mode, where)
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
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
		role := "lb/" + string(lb.Mode)
		if lb.Checks != "" && lb.Checks != spec.LBChecksFast {
			role += ", " + string(lb.Checks) + " checks"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t\t%s:%d\t%s\t\t%s\n", lb.Name, lb.Cluster, role, lb.Address, lb.Port, lb.State, backends(lb))
		for _, in := range lb.Instances { // a pair: which host holds the virtual IP
			state := lb.Proxy + map[bool]string{true: " up", false: " down"}[in.ProxyUp]
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
			fmt.Fprintf(out, "%s is fenced: it %s\n", n.Name, n.Fenced)
		}
		if n.HoldsBack != "" {
			fmt.Fprintf(out, "%s HOLDS THE CLUSTER BACK: %s\n", n.Name, n.HoldsBack)
		}
		if n.Silent != "" {
			fmt.Fprintf(out, "%s does not answer: %s\n", n.Name, n.Silent)
		}
		if n.Stopped != "" {
			fmt.Fprintf(out, "%s stopped: %s\n", n.Name, n.Stopped)
		}
		if n.Reversed != "" {
			fmt.Fprintf(out, "%s LEFT its cluster: the primary component it rejoined had applied fewer write sets than it had (%s); hadrill fault heal, or hadrill restart %s, has it join again\n", n.Name, n.Reversed, n.Name)
		}
		if n.VotedOut != "" {
			fmt.Fprintf(out, "%s VOTED OUT of its cluster: it could not apply a write set the others applied (%s); hadrill fault heal, or hadrill restart %s, has it join again\n", n.Name, n.VotedOut, n.Name)
		}
		if n.Clock != "" {
			fmt.Fprintf(out, "%s clock: %s from the real time (hadrill fault heal undoes it)\n", n.Name, n.Clock)
		}
		for _, v := range slices.Sorted(maps.Keys(n.DiskFaults)) {
			undo := "(hadrill fault heal undoes it)"
			if strings.Contains(n.DiskFaults[v], chaos.ForGood) {
				undo = "(hadrill fault heal clears the rest)"
			}
			fmt.Fprintf(out, "%s %s volume: disk fault %s %s\n", n.Name, v, n.DiskFaults[v], undo)
		}
	}
	said := func(recs []fault.Record) string {
		var what []string
		for _, r := range recs {
			w := r.Label()
			if len(r.From) > 0 {
				w += " from " + strings.Join(r.From, ",")
			}
			what = append(what, w+" ("+r.At.Local().Format("15:04:05")+")")
		}
		return strings.Join(what, "; ")
	}
	for _, b := range st.LoadBalancers {
		for _, e := range b.Out {
			fmt.Fprintf(out, "%s: %s\n", b.Name, lb.Tell(e, "at "+e.At.Local().Format("15:04:05")))
		}
	}
	if len(st.Faults) > 0 {
		fmt.Fprintf(out, "faults since the last heal: %s (hadrill fault heal undoes them)\n", said(st.Faults))
	}
	if len(st.FaultsOver) > 0 {
		fmt.Fprintf(out, "faults since the last heal, over already: %s\n", said(st.FaultsOver))
	}
	if down := st.DaemonsDown(); len(down) > 0 && st.Status == state.Running {
		fix := "`hadrill start --all` starts them"
		if len(st.Faults) > 0 {
			fix = "`hadrill fault heal` starts them again"
		}
		fmt.Fprintf(out, "not running: %s (%s)\n", strings.Join(down, ", "), fix)
	}
	if d := st.Disks; d != nil && d.State != "serving" {
		fmt.Fprintf(out, "DISKS DOWN: %s; the servers on them fail at their next write. `%s` stops them and serves the volumes again from their images (the data is there)\n", d.Problem, d.Fix)
	}
	hosts(out, st)
	replicationText(out, st)
	for _, k := range st.Links {
		fmt.Fprintf(out, "link %s: rtt %g ms", k.Name, k.RTTMs)
		if k.JitterMs > 0 {
			fmt.Fprintf(out, " ±%g ms", k.JitterMs)
		}
		if k.LossPercent > 0 {
			fmt.Fprintf(out, ", loss %g%%", k.LossPercent)
		}
		if k.ReorderPct > 0 {
			fmt.Fprintf(out, ", reorder %g%%", k.ReorderPct)
		}
		if k.DuplicatePct > 0 {
			fmt.Fprintf(out, ", duplicate %g%%", k.DuplicatePct)
		}
		if k.CorruptPct > 0 {
			fmt.Fprintf(out, ", corrupt %g%%", k.CorruptPct)
		}
		if k.BandwidthBps > 0 {
			fmt.Fprintf(out, ", bandwidth %s", spec.FormatRate(k.BandwidthBps))
		}
		fmt.Fprintf(out, " (emulator %s)", k.Emulator)
		if m := k.Measured; m != nil {
			fmt.Fprintf(out, "; measured %s: %s", m.At.Local().Format("15:04:05"), m.Summary())
		}
		fmt.Fprintln(out)
	}
}

// hosts shows the hosts' machines and what they use, when a host has a
// machine or lost a process to the memory limit, and every remote machine.
func hosts(out io.Writer, st Status) {
	remote := st.Mode == plan.ModeSSH
	show, domains := remote, false
	for _, h := range st.Hosts {
		domains = domains || h.FaultDomain != h.Name
		show = show || domains || h.Machine != nil || h.OOMKills > 0 || len(h.NICs) > 1 || (len(h.NICs) == 1 && h.NICs[0].RateBps > 0) || len(h.Volumes) > 0
	}
	if !show {
		return
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "HOST\tFAULT DOMAIN\tMACHINE\tCPU USED\tMEMORY USED\tMEMORY-LIMIT KILLS\tNICS\tDISKS")
	for _, h := range st.Hosts {
		machine, cpu, mem := "(unlimited)", "-", spec.FormatSize(h.MemoryBytes)
		if remote {
			machine = "its own"
		}
		if h.CPUCores != nil {
			cpu = fmt.Sprintf("%.2f", *h.CPUCores)
		}
		if h.Unanswered != "" {
			mem = h.Unanswered
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

// replicationText lists each replication connection and each semi-sync primary.
func replicationText(out io.Writer, st Status) {
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
			fmt.Fprintf(out, "%s ← %s (%s): IO %s, SQL %s, %s, at %s%s", n.Name, r.Source, name, r.IO, r.SQL, lag, r.GTIDSlavePos, semi)
			if r.LastError != "" {
				fmt.Fprintf(out, " — %s", r.LastError)
			}
			fmt.Fprintln(out)
		}
		if ss := n.SemiSync; ss != nil {
			fmt.Fprintf(out, "%s semi-sync primary: %s, %d replica(s) acknowledging, %d commits acknowledged, %d not (fell back to async)\n",
				n.Name, ss.Status, ss.Clients, ss.AckedTx, ss.AsyncTx)
		}
	}
}

// backends summarises what the proxy sees: "writes: db1 UP*, db2 UP, db3 DOWN"
// where * marks the servers taking new connections.
func backends(lb LBInfo) string {
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
