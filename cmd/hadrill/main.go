// Command hadrill deploys, loads, breaks and reports on MySQL/MariaDB
// high-availability labs. It is also the per-node daemons it places on hosts.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"golang.org/x/sys/unix"

	"github.com/hadrill/hadrill/internal/consistency"
	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/state"
	"github.com/hadrill/hadrill/internal/study"
	"github.com/hadrill/hadrill/internal/workload"
)

func main() {
	_ = mysql.SetLogger(&mysql.NopLogger{}) // the driver's own logging would bypass our messages
	cli := &app{}
	ctx, stop, caught := interruptible(&cli.daemon)
	err := cli.newRoot().ExecuteContext(ctx)
	if cli.opened != nil && err != nil && !hderr.IsUser(err) {
		err = cli.opened.lab.ExplainKills(cli.opened.kills, err) // a failure caused by a host's memory limit says so
	}
	for _, u := range cli.unlocks {
		u()
	}
	stop()
	code := exitCode(err)
	if sig := caught(); sig != 0 {
		dieOf(sig, gone())
	}
	os.Exit(code)
}

// interruptible is the command's context: cancelled by every signal that
// ends a terminal session (INT, TERM, HUP) and by SIGPIPE when it means the
// reader of our output went away (hadrill ... | head): the command then
// undoes what it broke, keeps what it measured and removes what it was
// creating. Once SIGPIPE is caught, a write to a broken socket raises it
// too (a server killed under the drill's traffic): those are told apart by
// asking whether stdout or stderr is a pipe with no reader left.
// A daemon's SIGHUP is its own (daemon set). caught is the first signal
// that cancelled it (0: none).
func interruptible(daemon *atomic.Bool) (ctx context.Context, stop func(), caught func() syscall.Signal) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE)
	var first atomic.Int32
	go func() {
		for s := range sigs {
			switch {
			case s == syscall.SIGHUP && daemon.Load():
			case s == syscall.SIGPIPE && len(gone()) == 0:
			default:
				first.CompareAndSwap(0, int32(s.(syscall.Signal)))
				cancel()
			}
		}
	}()
	return ctx, func() { signal.Stop(sigs); cancel() }, func() syscall.Signal { return syscall.Signal(first.Load()) }
}

// gone is stdout and stderr where either is a pipe whose reader has
// closed it (poll reports POLLERR on the write end).
func gone() []*os.File {
	fds := []unix.PollFd{{Fd: 1}, {Fd: 2}}
	if _, err := unix.Poll(fds, 0); err != nil {
		return nil
	}
	var out []*os.File
	for i, f := range fds {
		if f.Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
			out = append(out, []*os.File{os.Stdout, os.Stderr}[i])
		}
	}
	return out
}

// dieOf ends hadrill by sig once it has cleaned up, as a program that
// catches a signal to clean up does: the shell that ran it then knows it
// was interrupted, and a script's loop over hadrill commands, xargs or
// make stop with it instead of going on to the next command, as they do
// after an exit status of their own (a shell shows 130 for INT, 143 for
// TERM, 129 for HUP, 141 for PIPE). Go's runtime ignores a SIGPIPE a
// process sends itself; a write to an output whose reader left (out)
// raises it for good. Should the signal not end the process (one ignored
// since it started), the exit status is 128 and its number, as a shell's.
func dieOf(sig syscall.Signal, out []*os.File) {
	signal.Reset(sig)
	if sig == syscall.SIGPIPE {
		for _, f := range out {
			_, _ = f.Write([]byte{'\n'})
		}
	} else {
		_ = syscall.Kill(os.Getpid(), sig)
	}
	time.Sleep(time.Second) // a signal is delivered at once; this is the fallback's wait
	os.Exit(128 + int(sig))
}

// exitCode prints err and maps it: 0 ok, 2 bad input, 3 the lab is busy
// with another command, 4 a study that ran to the end without reproducing
// every claim, 1 runtime failure.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "hadrill: interrupted")
		return 1
	}
	var unrep *study.Unreproduced
	if errors.As(err, &unrep) {
		fmt.Fprintln(os.Stderr, "hadrill: "+err.Error())
		return 4
	}
	var invalid *consistency.Invalid
	if errors.As(err, &invalid) {
		fmt.Fprintln(os.Stderr, "hadrill: "+err.Error())
		return 5
	}
	if errors.Is(err, workload.ErrTPCCCheck) {
		fmt.Fprintln(os.Stderr, "hadrill: "+err.Error())
		return 5
	}
	if state.IsBusy(err) {
		fmt.Fprintln(os.Stderr, "hadrill: "+err.Error())
		return 3
	}
	for _, line := range strings.Split(err.Error(), "\n") {
		if strings.TrimSpace(line) != "" {
			fmt.Fprintln(os.Stderr, "hadrill: "+line)
		}
	}
	if hderr.IsUser(err) || strings.HasPrefix(err.Error(), "unknown command") {
		return 2
	}
	return 1
}
