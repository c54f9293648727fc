package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/host"
	"github.com/hadrill/hadrill/internal/lab"
	"github.com/hadrill/hadrill/internal/netns"
	"github.com/hadrill/hadrill/internal/plan"
)

func (cli *app) sqlCmd() *cobra.Command {
	var execute string
	var app bool
	c := &cobra.Command{
		Use:   "sql NODE|LB [-e SQL] [--app]",
		Short: "Open a SQL shell on a node (as the server's admin) or through a load balancer (as the application user)",
		Long: `On a node, hadrill connects over the node's unix socket as its administrator.
With --app, or for a load balancer, it connects over TCP from the lab's client
host as the application user, as an application would. On remote hosts the
client runs there, reading SQL from -e or standard input (no terminal).`,
		Args: args(1, 1, "one node or load balancer name"),
		RunE: func(cmd *cobra.Command, a []string) error {
			l, err := cli.openLab()
			if err != nil {
				return err
			}
			h, argv, err := sqlCommand(l, a[0], app)
			if err != nil {
				return err
			}
			if execute != "" {
				argv = append(argv, "-e", execute)
			}
			if l.Plan().Mode == plan.ModeSSH {
				var stdin io.Reader = os.Stdin
				if execute != "" {
					stdin = nil
				}
				if err := h.Attach(cmd.Context(), argv, stdin, os.Stdout, os.Stderr); err != nil {
					return fmt.Errorf("sql %s: %w", a[0], err)
				}
				return nil
			}
			if h.Name() == l.Plan().Client.Host { // from the client's namespace (here: not in its cgroups)
				argv = netns.Wrap(l.Plan().Client.Netns, argv)
			}
			x := exec.CommandContext(cmd.Context(), argv[0], argv[1:]...)
			x.Stdin, x.Stdout, x.Stderr = os.Stdin, os.Stdout, os.Stderr
			if err := x.Run(); err != nil {
				return fmt.Errorf("sql %s: %w", a[0], err)
			}
			return nil
		},
	}
	c.Flags().StringVarP(&execute, "execute", "e", "", "run this SQL and exit")
	c.Flags().BoolVar(&app, "app", false, "connect as the application user over TCP from the client host")
	return c
}

// sqlCommand is the mariadb client command for target and the host it runs
// on: a node's own host over its socket as the socket's user, else the
// client host as the application user over TCP.
func sqlCommand(l *lab.Lab, target string, app bool) (host.Host, []string, error) {
	p := l.Plan()
	t, err := p.Target(target)
	if err != nil {
		return nil, nil, hderr.User("NODE: %v", err)
	}
	if t.Node != nil && !app {
		h := l.Prov.Host(t.Node.Host)
		return h, []string{"mariadb", "--socket=" + t.Node.Socket, "--user=" + h.SocketUser()}, nil
	}
	addr, port := t.Address()
	return l.Prov.Host(p.Client.Host), []string{"mariadb", "--defaults-file=" + p.Client.DefaultsFile, "--host=" + addr, "--port=" + strconv.Itoa(port)}, nil
}

func (cli *app) logsCmd() *cobra.Command {
	var lines int
	var follow bool
	c := &cobra.Command{
		Use:   "logs NODE [-n LINES] [-f]",
		Short: "Print a node's server error log",
		Args:  args(1, 1, "one node name"),
		RunE: func(cmd *cobra.Command, a []string) error {
			if lines < 1 {
				return hderr.User("--lines: expected a positive number, got %d", lines)
			}
			l, err := cli.openLab()
			if err != nil {
				return err
			}
			if err := l.Plan().CheckNodes(a); err != nil {
				return err
			}
			n, _ := l.Plan().Node(a[0])
			argv := []string{"tail", "-n", strconv.Itoa(lines)}
			if follow {
				argv = append(argv, "-F")
			}
			argv = append(argv, n.LogFile)
			// on the node's host, where its log is
			if err := l.Prov.Host(n.Host).Attach(cmd.Context(), argv, nil, os.Stdout, os.Stderr); err != nil && cmd.Context().Err() == nil {
				return fmt.Errorf("logs %s: %w", a[0], err)
			}
			return nil
		},
	}
	c.Flags().IntVarP(&lines, "lines", "n", 50, "how many lines")
	c.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing as the log grows")
	return c
}
