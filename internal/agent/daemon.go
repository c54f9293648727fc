package agent

import (
	"fmt"

	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/plan"
)

// Daemon is a node's health agent: `exe agent` on the node's host (exe is
// hadrill's binary there), answering on the node's address.
func Daemon(p *plan.Plan, n *plan.Node, exe string) host.Daemon {
	argv := []string{exe, "agent", "--node", n.Name, "--listen", fmt.Sprintf("%s:%d", n.Address, n.AgentPort),
		"--socket", n.Socket, "--user", plan.CheckUser, "--password-file", n.CheckSecret,
		"--drain-file", n.DrainFile, "--pid-file", n.PidFile, "--server-marker", n.Server.Marker}
	d := n.Agent
	return host.Daemon{Name: n.Name + " agent", Argv: argv, Dir: d.Dir, LogFile: d.LogFile, PidFile: d.PidFile, Marker: d.Marker}
}
