package main

import (
	"context"
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

func sqlCmd() *cobra.Command {
	var execute string
	var app bool
	c := &cobra.Command{
		Use:   "sql NODE|LB [-e SQL] [--app]",
		Short: "Open a SQL shell on a node (as the server's admin) or through a load balancer (as the application user)",
		Long: `On a node, hadrill connects over the node's unix socket as its administrator.
With --app, or for a load balancer, it connects over TCP from the lab's client
host as the application user, as an application would.`,
		Args: args(1, 1, "one node or load balancer name"),
		RunE: func(cmd *cobra.Command, a []string) error {
			l, err := openLab()
			if err != nil {
				return err
			}
			if l.Plan().Mode == plan.ModeSSH {
				return remoteSQL(cmd.Context(), l, a[0], app, execute)
			}
			argv, err := sqlArgv(l, a[0], app)
			if err != nil {
				return err
			}
			if execute != "" {
				argv = append(argv, "-e", execute)
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

func sqlArgv(l *lab.Lab, target string, app bool) ([]string, error) {
	p := l.Plan()
	client := func(addr string, port int) []string {
		return netns.Wrap(p.Client.Netns, []string{"mariadb", "--defaults-file=" + p.Secrets.Client,
			"--host=" + addr, "--port=" + strconv.Itoa(port)})
	}
	t, err := p.Target(target)
	if err != nil {
		return nil, hderr.User("NODE: %v", err)
	}
	if t.Node != nil && !app {
		return []string{"mariadb", "--socket=" + t.Node.Socket, "--user=" + l.Facts.User}, nil
	}
	return client(t.Address()), nil
}

// remoteSQL runs the mariadb client on a remote host, as sqlArgv would
// here: on a node's host over its socket, else on the client host. Its
// standard input is the SQL (there is no terminal over the host's channel).
func remoteSQL(ctx context.Context, l *lab.Lab, target string, app bool, execute string) error {
	p := l.Plan()
	t, err := p.Target(target)
	if err != nil {
		return hderr.User("NODE: %v", err)
	}
	var h host.Host
	var argv []string
	if t.Node != nil && !app {
		h = l.Prov.Host(t.Node.Host)
		argv = []string{"mariadb", "--socket=" + t.Node.Socket, "--user=" + h.SocketUser()}
	} else {
		addr, port := t.Address()
		h = l.Prov.Host(p.Client.Host)
		argv = []string{"mariadb", "--defaults-file=" + p.Client.DefaultsFile, "--host=" + addr, "--port=" + strconv.Itoa(port)}
	}
	var stdin io.Reader = os.Stdin
	if execute != "" {
		argv, stdin = append(argv, "-e", execute), nil
	}
	out, err := h.Run(ctx, argv, stdin)
	os.Stdout.Write(out)
	if err != nil {
		return fmt.Errorf("sql %s: %w", target, err)
	}
	return nil
}

func logsCmd() *cobra.Command {
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
			l, err := openLab()
			if err != nil {
				return err
			}
			if err := l.Plan().CheckNodes(a); err != nil {
				return err
			}
			n, _ := l.Plan().Node(a[0])
			argv := []string{"-n", strconv.Itoa(lines)}
			if follow {
				argv = append(argv, "-F")
			}
			x := exec.CommandContext(cmd.Context(), "tail", append(argv, n.LogFile)...)
			x.Stdout, x.Stderr = os.Stdout, os.Stderr
			if err := x.Run(); err != nil && cmd.Context().Err() == nil {
				return fmt.Errorf("logs %s: %w", a[0], err)
			}
			return nil
		},
	}
	c.Flags().IntVarP(&lines, "lines", "n", 50, "how many lines")
	c.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing as the log grows")
	return c
}
