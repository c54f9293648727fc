package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/netem"
)

func (cli *app) netemCmd() *cobra.Command {
	var config, ready, cgroup string
	c := &cobra.Command{
		Use:   "netem --config FILE",
		Short: "Run a lab's WAN emulation daemon: delay, jitter and loss between regions (hadrill starts it)",
		Long: `The daemon binds one NFQUEUE per (host namespace, link) listed in FILE (a lab's
netem.json) and hands each queued packet back to the kernel once its link's one-way
delay (half the round trip, ± half the jitter) has passed, in arrival order, or drops
it with the link's loss probability. SIGHUP re-reads the links' values. Packets reach
it through iptables rules hadrill installs in the hosts' namespaces.`,
		Args: args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cli.daemon.Store(true) // SIGHUP is the daemon's own (reload), not an interruption
			if config == "" {
				return hderr.User("--config: required (a lab's netem.json)")
			}
			return netem.Run(cmd.Context(), config, cgroup, cmd.ErrOrStderr(), readyFile(ready))
		},
	}
	c.Flags().StringVar(&config, "config", "", "the lab's netem.json")
	c.Flags().StringVar(&ready, "ready-file", "", "written with the daemon's pid once every queue is bound")
	c.Flags().StringVar(&cgroup, "cgroup", "", "a cgroup v1 cpu directory to make and run in with a high CPU weight (releases stay on time on busy CPUs)")
	c.AddCommand(netemProbeCmd(), cli.netemCheckCmd())
	return c
}

func netemProbeCmd() *cobra.Command {
	var count int
	var refused bool
	probe := &cobra.Command{
		Use:   "probe ADDR:PORT [--count N]",
		Short: "Time TCP handshakes from here to ADDR:PORT, 5 ms apart (hadrill runs it on a remote host to measure a link there)",
		Args:  args(1, 1, "one address, as ADDR:PORT"),
		RunE: func(cmd *cobra.Command, a []string) error {
			if _, _, err := net.SplitHostPort(a[0]); err != nil {
				return hderr.User("ADDR:PORT: expected an address and a port, got %q", a[0])
			}
			if count < 1 || count > 1000 {
				return hderr.User("--count: expected 1 to 1000, got %d", count)
			}
			var d net.Dialer
			p := netem.Handshakes(cmd.Context(), count, a[0], func(ctx context.Context, addr string) error {
				conn, err := d.DialContext(ctx, "tcp", addr)
				if err == nil {
					conn.Close()
				} else if refused && errors.Is(err, syscall.ECONNREFUSED) {
					return nil // the reset came back: one round trip too
				}
				return err
			})
			return json.NewEncoder(os.Stdout).Encode(p)
		},
	}
	probe.Flags().IntVar(&count, "count", 21, "how many handshakes")
	probe.Flags().BoolVar(&refused, "refused", false, "count a refused connection as a round trip (nothing listens yet)")
	return probe
}

func (cli *app) netemCheckCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "check",
		Short: "Measure every link's round trip now and record it: a warning past 2 % + 1 ms of the target, a failure past 10 % + 5 ms",
		Args:  args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := cli.openLab()
			if err != nil {
				return err
			}
			ms, err := l.WAN().Check(cmd.Context(), true)
			if len(ms) == 0 && err == nil {
				return hderr.User("lab %s has no emulated links (the spec's links, in netns mode)", l.Plan().Lab)
			}
			if eerr := cli.emit(ms, func() { printLinks(os.Stdout, ms) }); eerr != nil {
				return eerr
			}
			return err
		},
	}
}

// printLinks writes each emulated link's measured round trip against its
// target, and its verdict.
func printLinks(out io.Writer, ms []netem.Measured) {
	for _, m := range ms {
		verdict := map[bool]string{true: "ok", false: "off (busy machine?)"}[m.OK]
		if !m.Usable {
			verdict = "BROKEN"
		}
		if m.Samples == 0 {
			fmt.Fprintf(out, "%s (%s → %s): %s; target %.2f ms%s: BROKEN\n", m.Link, m.From, m.To, m.Summary(), m.TargetMs, m.OnTop())
			continue
		}
		fmt.Fprintf(out, "%s (%s → %s): p50 %.2f ms, p99 %.2f ms, min %.2f, max %.2f, %d probes (%d failed); target %.2f ms%s ± %.2f ms: %s\n",
			m.Link, m.From, m.To, m.P50Ms, m.P99Ms, m.MinMs, m.MaxMs, m.Samples, m.Failed, m.TargetMs, m.OnTop(), m.Tolerance, verdict)
	}
}
