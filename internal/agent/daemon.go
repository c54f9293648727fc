package agent

import (
	"fmt"

	"github.com/hadrill/hadrill/internal/plan"
	"github.com/hadrill/hadrill/internal/supervise"
)

// Daemon is a node's health agent under supervision: `exe agent` on the
// node's host (wrap), answering on the node's address.
func Daemon(p *plan.Plan, n *plan.Node, exe string, wrap func(host string, argv []string) []string) supervise.Daemon {
	argv := []string{exe, "agent", "--node", n.Name, "--listen", fmt.Sprintf("%s:%d", n.Address, n.AgentPort),
		"--socket", n.Socket, "--user", plan.CheckUser, "--password-file", p.Secrets.Check,
		"--drain-file", n.DrainFile, "--pid-file", n.PidFile}
	d := n.Agent
	return supervise.Daemon{Name: n.Name + " agent", Argv: wrap(n.Host, argv), Dir: d.Dir, LogFile: d.LogFile,
		PidFile: d.PidFile, Marker: d.Marker}
}
