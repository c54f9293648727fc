// Package lab executes plans: it creates, starts, stops, inspects and
// removes labs, and hands the rooms it drives the narrow views they need.
package lab

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/hadrill/hadrill/internal/backup"
	"github.com/hadrill/hadrill/internal/buildinfo"
	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/facts"
	"github.com/hadrill/hadrill/internal/fault"
	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/infra/machine"
	"github.com/hadrill/hadrill/internal/infra/usage"
	"github.com/hadrill/hadrill/internal/netem"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/provider"
	"github.com/hadrill/hadrill/internal/provider/local"
	"github.com/hadrill/hadrill/internal/provider/ssh"
	"github.com/hadrill/hadrill/internal/replication"
	"github.com/hadrill/hadrill/internal/server"
	"github.com/hadrill/hadrill/internal/state"
)

// Lab is an opened lab: its state and the provider that runs its hosts.
// The rooms it drives (replication, backup, fault, netem) are handed the
// narrow views they need (servers, hosts), never the Lab itself.
type Lab struct {
	home  string
	p     *plan.Plan
	State *state.Lab
	Prov  provider.Provider
	Log   io.Writer // progress (stderr)
	Facts plan.Facts

	hosts      hosts
	servers    server.OnHosts
	wan        *netem.Emulator
	fromBackup string // up: seed datadirs from this prepared backup
}

func newLab(home string, st *state.Lab, log io.Writer) *Lab {
	if log == nil {
		log = io.Discard
	}
	f := facts.Machine()
	var prov provider.Provider
	if st.Plan.Mode == plan.ModeSSH {
		prov = ssh.New(st.Plan, st.Inventory, exe(), buildinfo.Version)
	} else {
		prov = local.New(st.Plan, exe(), f.User)
	}
	l := &Lab{home: home, State: st, p: st.Plan, Prov: prov, Log: log, Facts: f}
	l.hosts = hosts{l.Prov}
	l.servers = server.OnHosts{Hosts: l.Prov.Host}
	l.wan = netem.New(l.p, l.hosts, exe(), log)
	return l
}

// exe is the hadrill binary, which daemons run as.
func exe() string {
	if p, err := os.Executable(); err == nil {
		return p
	}
	return os.Args[0]
}

// Home is the hadrill home the lab lives in.
func (l *Lab) Home() string { return l.home }

// Plan is the lab, fully resolved.
func (l *Lab) Plan() *plan.Plan { return l.p }

// WAN is the lab's link emulation (Enabled: the lab has links between
// regions).
func (l *Lab) WAN() *netem.Emulator { return l.wan }

// Replication is the lab's replication manager (roles, promote, DR channels).
func (l *Lab) Replication() *replication.Manager {
	return &replication.Manager{Plan: l.p, Servers: l.servers, Roles: state.RolesOf(l.p.Dir), Log: l.Log}
}

// Backups is the lab's backups and binary log archive.
func (l *Lab) Backups() *backup.Lab {
	return &backup.Lab{Plan: l.p, Servers: l.servers, Log: l.Log}
}

// hosts runs commands on the lab's hosts and dials from them: the narrow
// side of the provider that the rooms (netem, faults) are given.
type hosts struct{ prov provider.Provider }

// Run runs argv on host; a failure's error carries what it printed.
func (h hosts) Run(ctx context.Context, host string, argv ...string) error {
	_, err := h.prov.Host(host).Run(ctx, argv, nil)
	return err
}

func (h hosts) Dial(ctx context.Context, host, network, addr string) (net.Conn, error) {
	return h.prov.Dial(ctx, host, network, addr)
}

// Host is one of the lab's hosts.
func (h hosts) Host(name string) host.Host { return h.prov.Host(name) }

// HostUsage reads what a host uses (see usage.Of).
func (l *Lab) HostUsage(host string) (machine.Usage, bool) {
	return usage.Of(l.p, host, l.Prov.Host(host))
}

// Servers is the lab's database servers as the rooms see them.
func (l *Lab) Servers() Servers { return l.servers }

// Servers is the view of a lab's database servers the rooms are given
// (replication.Servers, backup.Servers and fault.Servers are parts of it).
type Servers interface {
	Admin(n *plan.Node) *sql.DB
	Process(n *plan.Node) (host.Process, error)
	Alive(n *plan.Node) bool
	Pid(n *plan.Node) int
	Stop(n *plan.Node) error
	Kill(n *plan.Node) error
	Signal(n *plan.Node, sig syscall.Signal) error
	Host(name string) host.Host
}

// Open loads an existing lab.
func Open(home, name string, log io.Writer) (*Lab, error) {
	st, err := state.Load(home, name)
	if err != nil {
		return nil, err
	}
	return newLab(home, st, log), nil
}

func (l *Lab) logf(format string, args ...any) { fmt.Fprintf(l.Log, format+"\n", args...) }

// Logf writes a line to the lab's log (the command's standard error).
func (l *Lab) Logf(format string, args ...any) { l.logf(format, args...) }

func (l *Lab) save(status string) error {
	l.State.Status = status
	return state.Save(l.home, l.State)
}

// Admin opens a root-equivalent connection pool to a node over its unix
// socket (close it).
func (l *Lab) Admin(n *plan.Node) *sql.DB { return l.servers.Admin(n) }

// Process is a node's server process as its host reports it.
func (l *Lab) Process(n *plan.Node) (host.Process, error) { return l.servers.Process(n) }

// AppDB connects to addr as the application user, dialed from the client host.
func (l *Lab) AppDB(addr string) (*sql.DB, error) {
	pw, err := mariadb.ReadSecret(l.p.Secrets.App)
	if err != nil {
		return nil, err
	}
	host := l.p.Client.Host
	dial := func(ctx context.Context, a string) (net.Conn, error) { return l.Prov.Dial(ctx, host, "tcp", a) }
	return mariadb.TCP("hd:"+l.p.Lab+":"+host, dial, addr, plan.AppUser, pw, ""), nil
}

// NodeState reads a node's state, waiting at most a second: unresponsive
// then means paused, hung, or still starting.
func (l *Lab) NodeState(ctx context.Context, n *plan.Node) server.State { return l.Probe(ctx, n).State }

// Probe reads a node's state and, for a Galera member, its wsrep status.
func (l *Lab) Probe(ctx context.Context, n *plan.Node) server.Status {
	db := l.Admin(n)
	defer db.Close()
	proc, err := l.Process(n)
	return server.Probe(ctx, db, n, proc, err, time.Second)
}

// Pid is the node's server pid when it runs, else 0.
func (l *Lab) Pid(n *plan.Node) int { return l.servers.Pid(n) }

func (l *Lab) alive(n *plan.Node) bool { return l.servers.Alive(n) }

// Host is one of the lab's hosts: its commands, files, daemons, dialing.
func (l *Lab) Host(name string) host.Host { return l.Prov.Host(name) }

// Dial connects from inside a host.
func (l *Lab) Dial(ctx context.Context, host, network, addr string) (net.Conn, error) {
	return l.Prov.Dial(ctx, host, network, addr)
}

// CheckWAN measures the emulated links (none: nothing) and fails when one
// is off its target: a run's figures would not be the topology's.
func (l *Lab) CheckWAN(ctx context.Context) ([]netem.Measured, error) { return l.wan.Check(ctx, true) }

// RecordFault appends a fault (or a drill step) to the lab's fault log,
// once it took effect (see fault.Log).
func (l *Lab) RecordFault(r fault.Record) error { return fault.Log(l.p.FaultLog).Append(r) }

// Faults lists the faults injected between from and to.
func (l *Lab) Faults(from, to time.Time) []fault.Record {
	return fault.Log(l.p.FaultLog).Between(from, to)
}

// Created is when the lab was made.
func (l *Lab) Created() time.Time { return l.State.Created }

// Fenced are the primary clusters' nodes kept read-only and outside
// replication (node → why), as recorded now.
func (l *Lab) Fenced() map[string]string {
	r, _ := state.RolesOf(l.p.Dir).Read()
	return r.Fenced
}
