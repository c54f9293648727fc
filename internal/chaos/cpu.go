package chaos

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/infra/machine"
)

// CPU is `hadrill fault cpu HOST... --cores N`: the hosts' CPU quota cut
// live to N cores (their machine's cgroup), as a noisy neighbour or a
// throttled VM would; their processes keep running, slower. Heal gives
// each host its machine's quota back.
type CPU struct {
	Hosts []string
	Cores float64
}

// MinCPU and MaxCPU bound a CPU fault's cores.
const (
	MinCPU = 0.01
	MaxCPU = 64
)

func init() {
	register(family{order: 45, heal: func(_ context.Context, l Lab) error { return machine.RestoreCPU(l.Plan()) }, kinds: []Kind{{
		Name: fault.CPU, Use: "cpu NODE|HOST... --cores N",
		Short:   "Cut hosts' CPU to a share of a core, live (their machine's quota; e.g. --cores 0.25): their processes keep running, slower; heal gives the machine's back",
		MinArgs: 1, MaxArgs: -1, ArgsWhat: "one or more node or host names",
		Parse: func(fs *pflag.FlagSet) func([]string) (Fault, error) {
			var cores float64
			fs.Float64Var(&cores, "cores", 0, fmt.Sprintf("the CPU left to each host, in cores (%g to %g)", MinCPU, float64(MaxCPU)))
			return func(a []string) (Fault, error) { return CPU{Hosts: a, Cores: cores}, nil }
		}}}})
}

// Inject checks every host and the share (all problems at once), then
// sets each host's quota and records the fault.
func (f CPU) Inject(ctx context.Context, l Lab) error {
	p := l.Plan()
	var problems []string
	if f.Cores < MinCPU || f.Cores > MaxCPU {
		problems = append(problems, fmt.Sprintf("--cores: expected %g to %g cores, got %g", MinCPU, float64(MaxCPU), f.Cores))
	}
	var hosts []string
	for _, h := range p.Hosts {
		hosts = append(hosts, h.Name)
	}
	for _, h := range f.Hosts {
		if !slices.Contains(hosts, h) {
			problems = append(problems, fmt.Sprintf("HOST: unknown host %q (hosts: %v)", h, hosts))
		} else if p.CgroupDir(h, "cpu") == "" {
			problems = append(problems, fmt.Sprintf("HOST: %s has no machine cgroup to throttle (a CPU fault needs a root lab on this computer)", h))
		}
	}
	if err := hderr.Users(problems); err != nil || fault.IsDry(ctx) {
		return err
	}
	at := time.Now().UTC()
	for _, h := range f.Hosts {
		if err := machine.SetCPU(p, h, f.Cores); err != nil {
			return err
		}
		l.Logf("%s: CPU cut to %g cores", h, f.Cores)
	}
	return l.Record(fault.Record{Fault: fault.CPU, Targets: f.Hosts, Value: strconv.FormatFloat(f.Cores, 'f', -1, 64) + " cores", At: at})
}
