package workload

import (
	"context"
	"net"
	"time"

	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/infra/machine"
	"github.com/hadrill/hadrill/internal/netem"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/server"
)

// Lab is what load against a lab needs of it (lab.Lab is one): where it
// lives, its plan, running and dialing from its hosts, its servers' admin
// pools, the WAN check that dates a run, and the faults injected meanwhile.
type Lab interface {
	Home() string
	Plan() *plan.Plan
	// Host is one of its hosts: its commands and files (load runs on the
	// client host, fio on a node's).
	Host(name string) host.Host
	// Dial connects from inside a host.
	Dial(ctx context.Context, host, network, addr string) (net.Conn, error)
	// Admin opens a root-equivalent pool to a node (close it); Process is
	// its server's process as its host reports it.
	server.Servers
	// CheckWAN measures the emulated links and fails when one is off its target.
	CheckWAN(ctx context.Context) ([]netem.Measured, error)
	// Faults lists the faults injected between from and to.
	Faults(from, to time.Time) []fault.Record
	// HostUsage reads a host's CPU, memory and memory-limit kill counters
	// (false: the host is not measured).
	HostUsage(host string) (machine.Usage, bool)
	// Logf writes a line to the command's log (what a step waited for).
	Logf(format string, a ...any)
}
