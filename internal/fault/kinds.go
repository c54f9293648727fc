package fault

// Kind is a fault (or a drill step) as the fault log records it.
type Kind string

// The faults there are. Each has an entry in Kinds; the CLI builds its
// `fault` commands from that table.
const (
	Kill      Kind = "kill"
	Stop      Kind = "stop"
	Pause     Kind = "pause"
	Resume    Kind = "resume"
	Partition Kind = "partition"
	Delay     Kind = "delay"
	Loss      Kind = "loss"
	Bandwidth Kind = "bandwidth"
	Reorder   Kind = "reorder"
	Duplicate Kind = "duplicate"
	Heal      Kind = "heal"
	// Drill steps, recorded in the same log.
	Recover Kind = "recover"
	Restart Kind = "restart"
	// Crash: a host's every process killed and its NIC down.
	Crash Kind = "crash"
	// Disk: a node's emulated volumes fail (EIO), fill up, stall, slow
	// down or lose what they had not flushed at the next crash.
	Disk Kind = "disk"
	// Clock: a node's wall clock moved (an offset, a drift).
	Clock Kind = "clock"
)

// Class says what a fault acts on.
type Class int

const (
	OnProcess Class = iota // a node's server process
	OnNetwork              // hosts' packets (iptables in their namespaces)
	OnLink                 // a WAN link between regions (the netem daemon)
	OnHost                 // whole hosts (every process, their NICs)
	OnDisk                 // a node's emulated volumes (the disk daemon)
	OnClock                // a node's wall clock (libfaketime in its server)
)

// Entry describes one fault kind for the CLI and for validation.
type Entry struct {
	Kind  Kind
	Class Class
	Use   string // the command line after `hadrill fault`
	Short string
}

// Kinds are the injectable faults, in the order the CLI lists them. A new
// fault: a constant above, an entry here, and its effect in process.go
// (a process), network.go (packets), disk.go (volumes) or netem's
// Emulator.Change (a link).
var Kinds = []Entry{
	{Kill, OnProcess, "kill NODE|LB_HOST...", "kill -9 the servers of nodes (a crash), or the HAProxy of load balancer hosts"},
	{Stop, OnProcess, "stop NODE...", "stop the servers of nodes cleanly (they leave their cluster)"},
	{Pause, OnProcess, "pause NODE...", "freeze the servers of nodes (SIGSTOP): alive but silent, as under a long stall"},
	{Resume, OnProcess, "resume NODE...", "thaw paused servers (SIGCONT)"},
	{Crash, OnHost, "crash HOST...", "Crash hosts as machines losing power: every process killed at once, their NICs down (heal brings them back)"},
	{Disk, OnDisk, "disk NODE [--eio read,write,fsync] [--rate P] [--full] [--stall D] [--slow F] [--lose-unsynced] [--volume NAME]",
		"Make a node's emulated disks fail: IO errors, a full file system, a stall, a slowdown, or a power cut at its next crash that drops what was not flushed"},
	{Clock, OnClock, "clock NODE OFFSET [--drift PPM]", "Move a node's wall clock (e.g. +30s, -5m) or make it drift (--drift 500ppm); its server sees it in NOW(), the machine does not"},
	{Partition, OnNetwork, "partition TARGET... [--from OTHER,...] | --from A,... --to B,...", "Cut hosts or a region off from everyone else (or from --from), or one way (--from --to), with iptables in their namespaces"},
	{Delay, OnLink, "delay LINK RTT [--jitter D]", "Set a link's round-trip time (0 to 10s, e.g. 250ms): each direction gets half"},
	{Loss, OnLink, "loss LINK PERCENT", "Set the share of packets a link loses in each direction (0 to 100, e.g. 1%)"},
	{Reorder, OnLink, "reorder LINK PERCENT", "Send a share of a link's packets at once, overtaking the delayed ones before them (0 to 100, e.g. 25%; the link needs a delay)"},
	{Duplicate, OnLink, "duplicate LINK PERCENT", "Make a share of a link's packets arrive twice, both copies delayed (0 to below 100, e.g. 1%)"},
	{Bandwidth, OnLink, "bandwidth LINK RATE", "Cap what each host sends over a link (e.g. 10mbit; unlimited lifts the cap)"},
}

// Of returns the entries of one class.
func Of(c Class) []Entry {
	var out []Entry
	for _, e := range Kinds {
		if e.Class == c {
			out = append(out, e)
		}
	}
	return out
}
