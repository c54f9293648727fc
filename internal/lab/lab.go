package lab

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/hadrill/hadrill/internal/engine/mariadb"
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

	fromBackup string // up: seed datadirs from this prepared backup
}

func newLab(home string, st *state.Lab, log io.Writer) *Lab {
	if log == nil {
		log = io.Discard
	}
	return &Lab{Home: home, State: st, Plan: st.Plan, Prov: local.New(st.Plan), Log: log, Facts: MachineFacts()}
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
