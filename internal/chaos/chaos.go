// Package chaos injects faults into a lab and heals them. Each fault kind
// is a small type in a file of its own (process.go, crash.go,
// partition.go, link.go, disk.go, file.go, clock.go, cpu.go, memory.go): it declares its command line
// (Kind), checks itself against the lab and applies itself (Fault.Inject),
// and its family says how `fault heal` undoes it. A lab is seen through
// the narrow Lab interface; the CLI builds `hadrill fault` from Kinds().
//
// A new fault kind: a Kind constant in package fault (the log's
// vocabulary), a file here with its type, its Inject and its Kind in its
// family's variable (a new family: its place in families, in heal order),
// and its test.
package chaos

import (
	"context"
	"database/sql"
	"errors"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/netem"
	"github.com/hadrill/hadrill/internal/plan"
)

// Lab is what faults need of a lab (the lab package implements it).
type Lab interface {
	Plan() *plan.Plan
	// Host is a host of the lab, as its provider runs it.
	Host(name string) host.Host
	// Run runs a command on one of the lab's hosts (in its namespace); a
	// failure's error carries what it printed.
	Run(ctx context.Context, host string, argv ...string) error
	Servers() Servers
	Links() Links
	// KillBalancer kills a load balancer host's proxy (whole: its
	// keepalived too).
	KillBalancer(ctx context.Context, host string, whole bool) error
	// KillHost kills every daemon of a host with SIGKILL.
	KillHost(ctx context.Context, name string) error
	// Restart restarts nodes' servers one at a time.
	Restart(ctx context.Context, names []string) error
	// DisksLost says why the disk daemon does not serve the lab's volumes
	// ("" when it does, or the lab has none).
	DisksLost() string
	// SaveDerived records what a kill or crash changed in the lab's state.
	SaveDerived() error
	// Record appends to the lab's fault log.
	Record(r fault.Record) error
	// Logf reports progress.
	Logf(format string, a ...any)
}

// Servers is what faults need of a lab's database servers.
type Servers interface {
	Admin(n *plan.Node) *sql.DB                    // a root pool over the server's socket (close it)
	Process(n *plan.Node) (host.Process, error)    // the server's process, from its host
	Stop(n *plan.Node) error                       // a clean shutdown
	Kill(n *plan.Node) error                       // SIGKILL, returning once it has gone
	Signal(n *plan.Node, sig syscall.Signal) error // SIGSTOP, SIGCONT
}

// Links is what link faults need of the lab's WAN emulator.
type Links interface {
	Change(ctx context.Context, ch netem.Change) error
	Validate(ch netem.Change) error
	// Heal gives every link the spec's figures back (a dead emulator is
	// started again).
	Heal(ctx context.Context) error
}

// Fault is one fault, parsed.
type Fault interface {
	// Inject checks the fault against the lab, naming every problem at
	// once (a user error), and stops there in a dry run (fault.Dry);
	// otherwise it applies the fault, says so and records it in the
	// lab's fault log.
	Inject(ctx context.Context, l Lab) error
}

// Kind is a fault kind as `hadrill fault` offers it.
type Kind struct {
	Name  fault.Kind
	Use   string // the command line after `hadrill fault`
	Short string
	Long  string // more than Short, when it needs it
	// MinArgs and MaxArgs bound the positional arguments (-1: no bound);
	// ArgsWhat says what they are.
	MinArgs, MaxArgs int
	ArgsWhat         string
	// Parse declares the kind's flags on fs and returns what reads the
	// arguments (and those flags, once set) into a fault.
	Parse func(fs *pflag.FlagSet) func(args []string) (Fault, error)
}

// family is the fault kinds one mechanism injects and how `fault heal`
// undoes them all.
type family struct {
	kinds []Kind
	heal  func(ctx context.Context, l Lab) error
}

// families are the fault families in heal order: the network first
// (partitions lifted, crashed hosts' NICs up, links at the spec's
// figures), then disks, CPU and memory limits and clocks, the servers'
// connections (nothing to heal) and the servers' processes last. A new
// family: its file's variable, and a place here.
var families = []family{partitionFaults, crashFaults, linkFaults, diskFaults, cpuFaults, memoryFaults, clockFaults, connectionFaults, processFaults}

// Kinds are the fault kinds, in heal order.
func Kinds() []Kind {
	var out []Kind
	for _, f := range families {
		out = append(out, f.kinds...)
	}
	return out
}

// Heal undoes every fault the lab can hold, family by family: partitions
// lifted, crashed hosts' NICs up, links back at the spec's figures, disks
// and clocks healed, paused servers resumed. What heal then starts again
// (killed, stopped or crashed servers and daemons) is the lab's. Every
// family is tried; their failures are returned together.
func Heal(ctx context.Context, l Lab) error {
	var errs []error
	for _, f := range families {
		if f.heal != nil {
			errs = append(errs, f.heal(ctx, l))
		}
	}
	return errors.Join(errs...)
}
