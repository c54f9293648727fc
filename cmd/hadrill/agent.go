package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/hadrill/hadrill/internal/agent"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/lab"
)

func (cli *app) agentCmd() *cobra.Command {
	var o agent.Options
	c := &cobra.Command{
		Use:   "agent --listen ADDR:PORT --socket SOCK --password-file FILE [...]",
		Short: "Run a node's health agent (hadrill starts one on every node's host)",
		Long: `The agent answers a load balancer's HTTP probe: 200 only when the node is in the
primary component and Synced (or Donor/Desynced with --available-when-donor), 503
otherwise, also while drained or (with --read-only-unavailable) read-only. HEAD and
OPTIONS answer the status only; GET answers JSON with the verdict and its reason.
/liveness answers 200 while the server process exists; /metrics is Prometheus text.
The password is read from a file; it never appears in argv, logs or responses.`,
		Args: args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cli.daemon.Store(true) // SIGHUP is the daemon's own (reload), not an interruption
			var problems []string
			for flag, v := range map[string]string{"--listen": o.Listen, "--socket": o.Socket, "--password-file": o.PasswordFile} {
				if v == "" {
					problems = append(problems, flag+": required")
				}
			}
			if o.Timeout <= 0 || o.Timeout > 10*time.Second {
				problems = append(problems, fmt.Sprintf("--timeout: expected 1ms to 10s, got %v", o.Timeout))
			}
			if o.Cache < 0 || o.Cache > time.Second {
				problems = append(problems, fmt.Sprintf("--cache: expected 0 to 1s, got %v", o.Cache))
			}
			if o.BusyGrace < 0 || o.BusyGrace > time.Minute {
				problems = append(problems, fmt.Sprintf("--busy-grace: expected 0 to 1m, got %v", o.BusyGrace))
			}
			if err := hderr.Users(problems); err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "agent for %s listening on %s (server socket %s)\n", o.Node, o.Listen, o.Socket)
			return agent.Serve(cmd.Context(), o)
		},
	}
	f := c.Flags()
	f.StringVar(&o.Node, "node", "", "node name (for responses and metrics)")
	f.StringVar(&o.Listen, "listen", "", "address:port to serve on (the node's address, port 9200)")
	f.StringVar(&o.Socket, "socket", "", "the server's unix socket")
	f.StringVar(&o.User, "user", "hdcheck", "health-check database user")
	f.StringVar(&o.PasswordFile, "password-file", "", "file holding the user's password (mode 0600)")
	f.StringVar(&o.DrainFile, "drain-file", "", "while this file exists the node is drained (503)")
	f.StringVar(&o.DeposedFile, "deposed-file", "", "while this file exists another node is the primary: no writes (/primary answers 503)")
	f.StringVar(&o.PidFile, "pid-file", "", "the server's pidfile (for /liveness)")
	f.StringVar(&o.ServerMarker, "server-marker", "", "what ends an argument of the server's command line: the pidfile's pid is the server's only then (for /liveness)")
	f.DurationVar(&o.Timeout, "timeout", 300*time.Millisecond, "how long a probe may wait for the server")
	f.DurationVar(&o.Cache, "cache", 100*time.Millisecond, "how long a verdict is reused (at most 1s)")
	f.DurationVar(&o.BusyGrace, "busy-grace", agent.BusyGrace, "how long a server that runs but answers slower than --timeout keeps its last verdict (0: none)")
	f.BoolVar(&o.AvailableWhenDonor, "available-when-donor", false, "admit a Donor/Desynced node")
	f.BoolVar(&o.ReadOnlyUnavailable, "read-only-unavailable", false, "read_only=ON makes the node unavailable")
	return c
}

func (cli *app) drainCmd(drain bool) *cobra.Command {
	verb, short := "undrain", "Admit drained nodes again (waits until the load balancers route to them)"
	long := "Admit drained nodes again: their agents answer as their servers are. It returns once a load balancer\n" +
		"routes to each running node again, or after --wait, saying which still does not (its agent may refuse it\n" +
		"for another reason: not synced, read-only)."
	if drain {
		verb, short = "drain", "Take nodes out of load balancing (their agent answers 503) for maintenance; waits until no load balancer routes to them"
		long = "Take nodes out of load balancing for maintenance: their agents answer 503. It returns once no running\n" +
			"load balancer marks them up any more, so `hadrill drain db1 && hadrill stop db1` stops a node nothing new\n" +
			"is sent to; a node still marked up after --wait fails the command (exit 1), naming each load balancer."
	}
	var wait time.Duration
	c := &cobra.Command{
		Use:   verb + " NODE... [--wait 15s]",
		Short: short,
		Long:  long,
		Args:  args(1, -1, "one or more node names"),
		RunE: func(cmd *cobra.Command, names []string) error {
			var badWait error
			if wait < 0 {
				badWait = hderr.User("--wait: expected a duration of 0 (do not wait) or more, got %v", wait)
			}
			l, err := cli.changeLab()
			if err != nil {
				return hderr.Join([]error{badWait, err})
			}
			if err := hderr.Join([]error{l.Plan().CheckNodes(names), badWait}); err != nil {
				return err
			}
			if err := l.Drain(cmd.Context(), names, drain); err != nil {
				return err
			}
			if err := l.FollowRouting(cmd.Context(), names, drain, wait); err != nil {
				return err
			}
			st := l.Status(cmd.Context())
			return cli.emit(st, func() { printStatus(st) })
		},
	}
	c.Flags().DurationVar(&wait, "wait", lab.RoutingWait, "how long to wait for the load balancers to follow (0: return at once)")
	return c
}
