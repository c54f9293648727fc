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
	"github.com/hadrill/hadrill/internal/plan"
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

// cpuFaults are the fault kinds of this file and their heal (families lists them in heal order).
var cpuFaults = family{heal: func(_ context.Context, l Lab) error { return machine.RestoreCPU(l.Plan()) }, kinds: []Kind{{
	Name: fault.CPU, Use: "cpu NODE|HOST... --cores N",
	Short:   "Cut hosts' CPU to a share of a core, live (their machine's quota; e.g. --cores 0.25): their processes keep running, slower; heal gives the machine's back",
	MinArgs: 1, MaxArgs: -1, ArgsWhat: "one or more node or host names",
	Parse: func(fs *pflag.FlagSet) func([]string) (Fault, error) {
		var cores float64
		fs.Float64Var(&cores, "cores", 0, fmt.Sprintf("the CPU left to each host, in cores (%g to %g)", MinCPU, float64(MaxCPU)))
		return func(a []string) (Fault, error) { return CPU{Hosts: a, Cores: cores}, nil }
	}}}}

// Inject checks every host and the share (all problems at once), then
// sets each host's quota and records the fault.
func (f CPU) Inject(ctx context.Context, l Lab) error {
	p := l.Plan()
	var problems []string
	if f.Cores < MinCPU || f.Cores > MaxCPU {
		problems = append(problems, fmt.Sprintf("--cores: expected %g to %g cores, got %g", MinCPU, float64(MaxCPU), f.Cores))
	}
	problems = append(problems, machineHosts(p, f.Hosts, "cpu", "a CPU fault")...)
	if err := hderr.Users(problems); err != nil || fault.IsDry(ctx) {
		return err
	}
	at := time.Now().UTC()
	if err := eachHost(f.Hosts, func(h string) error { return machine.SetCPU(p, h, f.Cores) }, func(done []string) error { return machine.RestoreCPU(p, done...) }); err != nil {
		return err
	}
	for _, h := range f.Hosts {
		l.Logf("%s: CPU cut to %g cores", h, f.Cores)
	}
	return l.Record(fault.Record{Fault: fault.CPU, Targets: f.Hosts, Value: strconv.FormatFloat(f.Cores, 'f', -1, 64) + " cores", At: at})
}

// machineHosts are the problems of hosts a machine fault names: unknown
// ones, and ones without the controller's cgroup (what names the fault).
func machineHosts(p *plan.Plan, names []string, controller, what string) []string {
	var hosts, problems []string
	for _, h := range p.Hosts {
		hosts = append(hosts, h.Name)
	}
	for _, h := range names {
		if !slices.Contains(hosts, h) {
			problems = append(problems, fmt.Sprintf("HOST: unknown host %q (hosts: %v)", h, hosts))
		} else if p.CgroupDir(h, controller) == "" {
			problems = append(problems, fmt.Sprintf("HOST: %s has no machine cgroup (%s needs a root lab on this computer)", h, what))
		}
	}
	return problems
}

// eachHost sets a machine fault on every host, all or none: when one
// fails, those set before it get theirs back (undo) and the error says so.
func eachHost(hosts []string, set func(string) error, undo func(done []string) error) error {
	for i, h := range hosts {
		if err := set(h); err != nil {
			if i == 0 {
				return hderr.User("%v", err)
			}
			_ = undo(hosts[:i])
			return hderr.User("%v (what was set on %v before it was taken back)", err, hosts[:i])
		}
	}
	return nil
}
