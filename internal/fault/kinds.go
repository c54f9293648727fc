package fault

// Kind is a fault (or a drill step) as the fault log records it.
type Kind string

// The faults there are, as the log names them. What each does, its command
// line and its heal are package chaos's (a file per kind).
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
	Corrupt   Kind = "corrupt"
	Heal      Kind = "heal"
	// Drill steps, recorded in the same log.
	Recover Kind = "recover"
	Restart Kind = "restart"
	// Crash: a host's every process killed and its NIC down.
	Crash Kind = "crash"
	// Disk: a node's emulated volumes fail (EIO), fill up, stall, slow
	// down or lose what they had not flushed at the next crash.
	Disk Kind = "disk"
	// File: a file of a node's server damaged on its emulated volume (a
	// bit flipped at rest, a write lost or torn, the file truncated).
	File Kind = "file"
	// Clock: a node's wall clock moved (an offset, a drift).
	Clock Kind = "clock"
	// CPU: hosts' CPU quota cut live to a share of a core.
	CPU Kind = "cpu"
	// Memory: hosts' memory limit cut live (up to the OOM killer).
	Memory Kind = "memory"
)
