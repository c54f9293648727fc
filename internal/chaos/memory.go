package chaos

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/infra/machine"
	"github.com/hadrill/hadrill/internal/spec"
)

// Memory is `hadrill fault memory HOST... --limit SIZE`: the hosts'
// memory limit cut live (their machine's cgroup), as a VM whose memory is
// taken back: the kernel gives back their page cache first, and what
// then grows past the limit is ended by the cgroup's OOM killer (its
// biggest process: the server). Heal gives each host its machine's limit
// back and starts what the OOM killer ended.
type Memory struct {
	Hosts []string
	Limit string
}

// MinMemory is the least limit a memory fault sets.
const MinMemory = 16 << 20

// memoryFaults are the fault kinds of this file and their heal (families lists them in heal order).
var memoryFaults = family{heal: func(_ context.Context, l Lab) error { return machine.RestoreMemory(l.Plan()) }, kinds: []Kind{{
	Name: fault.Memory, Use: "memory NODE|HOST... --limit SIZE",
	Short:   "Cut hosts' memory limit, live (their machine's; e.g. --limit 300M): their page cache goes first, then the OOM killer ends what grows past it; heal gives the machine's back",
	MinArgs: 1, MaxArgs: -1, ArgsWhat: "one or more node or host names",
	Parse: func(fs *pflag.FlagSet) func([]string) (Fault, error) {
		var limit string
		fs.StringVar(&limit, "limit", "", "the memory left to each host (e.g. 300M, 1G)")
		return func(a []string) (Fault, error) { return Memory{Hosts: a, Limit: limit}, nil }
	}}}}

// Inject checks every host and the limit (all problems at once), then
// sets each host's limit and records the fault.
func (f Memory) Inject(ctx context.Context, l Lab) error {
	p := l.Plan()
	var problems []string
	bytes, err := spec.ParseSize(f.Limit)
	if err != nil || bytes < MinMemory {
		problems = append(problems, fmt.Sprintf("--limit: expected a size of at least 16M (e.g. 300M, 1G), got %q", f.Limit))
	}
	problems = append(problems, machineHosts(p, f.Hosts, "memory", "a memory fault")...)
	if err := hderr.Users(problems); err != nil || fault.IsDry(ctx) {
		return err
	}
	at := time.Now().UTC()
	if err := eachHost(f.Hosts, func(h string) error { return machine.SetMemory(p, h, bytes) }, func(done []string) error { return machine.RestoreMemory(p, done...) }); err != nil {
		return err
	}
	for _, h := range f.Hosts {
		l.Logf("%s: memory limited to %s", h, f.Limit)
	}
	return l.Record(fault.Record{Fault: fault.Memory, Targets: f.Hosts, Value: f.Limit, At: at})
}
