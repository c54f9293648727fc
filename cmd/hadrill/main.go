// Command hadrill deploys, loads, breaks and reports on MySQL/MariaDB
// high-availability labs. It is also the per-node daemons it places on hosts.
package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/go-sql-driver/mysql"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/hadrill/hadrill/internal/hderr"
	"github.com/hadrill/hadrill/internal/state"
)

// version is set at build time (-ldflags "-X main.version=...").
var version = "dev"

func main() {
	_ = mysql.SetLogger(&mysql.NopLogger{}) // the driver's own logging would bypass our messages
	// Every signal that ends a terminal session or its pipeline cancels the
	// command's context: it undoes what it broke, keeps what it measured and
	// removes what it was creating. SIGPIPE included (hadrill ... | head):
	// with it caught, a write to a closed pipe fails instead of killing us.
	ctx, stop := signal.NotifyContext(context.Background(), interrupts...)
	err := newRoot().ExecuteContext(ctx)
	for _, u := range unlocks {
		u()
	}
	stop()
	os.Exit(exitCode(err))
}

var interrupts = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE}

// exitCode prints err and maps it: 0 ok, 2 bad input, 3 the lab is busy
// with another command, 1 runtime failure.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "hadrill: interrupted")
		return 1
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
