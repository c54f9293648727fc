package chaos

import (
	"context"
	"fmt"
	"slices"
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

func init() {
	register(family{order: 46, heal: func(_ context.Context, l Lab) error { return machine.RestoreMemory(l.Plan()) }, kinds: []Kind{{
		Name: fault.Memory, Use: "memory NODE|HOST... --limit SIZE",
		Short:   "Cut hosts' memory limit, live (their machine's; e.g. --limit 300M): their page cache goes first, then the OOM killer ends what grows past it; heal gives the machine's back",
		MinArgs: 1, MaxArgs: -1, ArgsWhat: "one or more node or host names",
		Parse: func(fs *pflag.FlagSet) func([]string) (Fault, error) {
			var limit string
			fs.StringVar(&limit, "limit", "", "the memory left to each host (e.g. 300M, 1G)")
			return func(a []string) (Fault, error) { return Memory{Hosts: a, Limit: limit}, nil }
		}}}})
}

// Inject checks every host and the limit (all problems at once), then
// sets each host's limit and records the fault.
func (f Memory) Inject(ctx context.Context, l Lab) error {
	p := l.Plan()
	var problems []string
	bytes, err := spec.ParseSize(f.Limit)
	if err != nil || bytes < MinMemory {
		problems = append(problems, fmt.Sprintf("--limit: expected a size of at least 16M (e.g. 300M, 1G), got %q", f.Limit))
	}
	var hosts []string
	for _, h := range p.Hosts {
		hosts = append(hosts, h.Name)
	}
	for _, h := range f.Hosts {
		if !slices.Contains(hosts, h) {
			problems = append(problems, fmt.Sprintf("HOST: unknown host %q (hosts: %v)", h, hosts))
		} else if p.CgroupDir(h, "memory") == "" {
			problems = append(problems, fmt.Sprintf("HOST: %s has no machine cgroup to limit (a memory fault needs a root lab on this computer)", h))
		}
	}
	if err := hderr.Users(problems); err != nil || fault.IsDry(ctx) {
		return err
	}
	at := time.Now().UTC()
	for i, h := range f.Hosts {
		if err := machine.SetMemory(p, h, bytes); err != nil {
			if i == 0 {
				return hderr.User("%v", err)
			}
			// all or nothing: the hosts limited before it get theirs back
			_ = machine.RestoreMemory(p, f.Hosts[:i]...)
			return hderr.User("%v (the limits set on %v before it were taken back)", err, f.Hosts[:i])
		}
		l.Logf("%s: memory limited to %s", h, f.Limit)
	}
	return l.Record(fault.Record{Fault: fault.Memory, Targets: f.Hosts, Value: f.Limit, At: at})
}
