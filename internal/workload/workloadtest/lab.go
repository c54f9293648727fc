// Package workloadtest has a stand-in for workload.Lab in unit tests: a
// plan and nothing that runs (dialing a host or opening a pool panics).
package workloadtest

import (
	"context"
	"database/sql"
	"net"
	"time"

	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/infra/machine"
	"github.com/hadrill/hadrill/internal/netem"
	"github.com/hadrill/hadrill/internal/plan"
)

// Lab is a lab of which only the plan exists.
type Lab struct{ P *plan.Plan }

func (l Lab) Home() string        { return "/nowhere" }
func (l Lab) Plan() *plan.Plan    { return l.P }
func (Lab) Host(string) host.Host { panic("workloadtest: nothing runs on this lab (host)") }
func (Lab) Dial(context.Context, string, string, string) (net.Conn, error) {
	panic("workloadtest: nothing runs on this lab (dial)")
}
func (Lab) Admin(*plan.Node) *sql.DB { panic("workloadtest: nothing runs on this lab (admin)") }
func (Lab) Process(*plan.Node) (host.Process, error) {
	panic("workloadtest: nothing runs on this lab (process)")
}
func (Lab) CheckWAN(context.Context) ([]netem.Measured, error) { return nil, nil }
func (Lab) Faults(time.Time, time.Time) []fault.Record         { return nil }
func (Lab) HostUsage(string) (machine.Usage, bool)             { return machine.Usage{}, false }
func (Lab) Logf(string, ...any)                                {}
