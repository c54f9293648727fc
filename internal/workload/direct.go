package workload

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/infra/machine"
	"github.com/hadrill/hadrill/internal/netem"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/provider/local"
)

// Direct is this computer as the client of servers outside any lab (a
// managed service's endpoint, a server of your own): load runs here, not
// in a lab's client host, and there is nothing to emulate, measure or
// break. Name is what its runs are filed under.
type Direct struct {
	HomeDir, Name string
}

// DirectHost is Direct's one host, the client.
const DirectHost = "this-computer"

func (d Direct) Home() string { return d.HomeDir }

func (d Direct) Plan() *plan.Plan {
	return &plan.Plan{Lab: d.Name, Client: plan.Client{Host: DirectHost}}
}

// Host is this computer: commands run here as they are.
func (d Direct) Host(name string) host.Host {
	return local.New(d.Plan(), "", "").Host(name)
}

func (Direct) Dial(ctx context.Context, _, network, addr string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// Admin has no servers to administer (Direct has no nodes: nothing asks).
func (Direct) Admin(*plan.Node) *sql.DB { return nil }

// Process is nothing: Direct has no servers of its own.
func (Direct) Process(*plan.Node) (host.Process, error) { return host.Process{}, nil }

func (Direct) CheckWAN(context.Context) ([]netem.Measured, error) { return nil, nil }
func (Direct) Faults(time.Time, time.Time) []fault.Record         { return nil }
func (Direct) HostUsage(string) (machine.Usage, bool)             { return machine.Usage{}, false }

// Logf writes a line to standard error, the command's log.
func (Direct) Logf(format string, a ...any) { fmt.Fprintf(os.Stderr, format+"\n", a...) }
