package lab

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
	"github.com/hadrill/hadrill/internal/netem"
	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/provider"
	"github.com/hadrill/hadrill/internal/provider/local"
	"github.com/hadrill/hadrill/internal/state"
)

// Lab is an opened lab: its state and the provider that runs its hosts.
type Lab struct {
	Home  string
	State *state.Lab
	Plan  *plan.Plan
	Prov  provider.Provider
	Log   io.Writer // progress (stderr)
	Facts plan.Facts

	hosts      hosts
	wan        *netem.Emulator
	fromBackup string // up: seed datadirs from this prepared backup
}

func newLab(home string, st *state.Lab, log io.Writer) *Lab {
	if log == nil {
		log = io.Discard
	}
	l := &Lab{Home: home, State: st, Plan: st.Plan, Prov: local.New(st.Plan), Log: log, Facts: MachineFacts()}
	l.hosts = hosts{l.Prov}
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	l.wan = netem.New(l.Plan, l.hosts, exe, log)
	return l
}

// WAN is the lab's link emulation (Enabled: the lab has links between
// regions).
func (l *Lab) WAN() *netem.Emulator { return l.wan }

// hosts runs commands on the lab's hosts and dials from them: the narrow
// side of the provider that the rooms (netem, faults) are given.
type hosts struct{ prov provider.Provider }

func (h hosts) Run(ctx context.Context, host string, argv ...string) error {
	w := h.prov.Wrap(host, argv)
	out, err := exec.CommandContext(ctx, w[0], w[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %s: %v: %s", host, strings.Join(argv, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func (h hosts) Dial(ctx context.Context, host, network, addr string) (net.Conn, error) {
	return h.prov.Dial(ctx, host, network, addr)
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

func (l *Lab) save(status string) error {
	l.State.Status = status
	return state.Save(l.Home, l.State)
}

// Admin opens a root-equivalent connection pool to a node over its unix
// socket (close it).
func (l *Lab) Admin(n *plan.Node) *sql.DB { return mariadb.Admin(n.Socket, l.Facts.User) }

// AppDB connects to addr as the application user, dialed from the client host.
func (l *Lab) AppDB(addr string) (*sql.DB, error) {
	pw, err := readSecret(l.Plan.Secrets.App)
	if err != nil {
		return nil, err
	}
	host := l.Plan.Client.Host
	dial := func(ctx context.Context, a string) (net.Conn, error) { return l.Prov.Dial(ctx, host, "tcp", a) }
	return mariadb.TCP("hd:"+l.Plan.Lab+":"+host, dial, addr, plan.AppUser, pw, ""), nil
}

// NodeState reads a node's state (see Probe), waiting at most a second:
// "unresponsive" then means paused, hung, or still starting.
func (l *Lab) NodeState(ctx context.Context, n *plan.Node) string {
	db := l.Admin(n)
	defer db.Close()
	return l.Probe(ctx, db, n, time.Second).State
}

// Pid is the node's server pid when it runs, else 0.
func (l *Lab) Pid(n *plan.Node) int {
	pid := readPid(n.PidFile)
	if ownedBy(pid, n) {
		return pid
	}
	return 0
}

func (l *Lab) alive(n *plan.Node) bool { return l.Pid(n) != 0 }

func readSecret(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("secret %s: %w", path, err)
	}
	return strings.TrimSpace(string(b)), nil
}

func writeSecret(path, value string) error {
	return os.WriteFile(path, []byte(value+"\n"), 0o600)
}
